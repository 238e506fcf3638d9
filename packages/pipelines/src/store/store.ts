import type { FailurePolicy } from "../definition";
import type {
  AttemptEnd,
  AttemptStart,
  NodeAttempt,
  PipelineEvent,
  StoredPipelineEvent,
} from "../run/events";
import type { PipelineBindings } from "../validate/bindings";
import type {
  Command,
  CommandResult,
  Lease,
  LeaseResult,
  NodePatch,
  PipelineRun,
  RunNode,
  RunPatch,
  RunState,
  StoredCommand,
  StoredDefinition,
} from "./records";

export interface DefinitionFilter {
  status?: StoredDefinition["status"];
  source?: StoredDefinition["source"];
}

/** Optimistic concurrency: the change is refused (`pipeline_revision_conflict`) unless this is the revision. */
export interface ExpectedRevision {
  expected_revision?: number;
}

export interface PublishOptions extends ExpectedRevision {
  /** Also check profiles and models (the `bindings` stage); without it they are checked when a run starts. */
  bindings?: PipelineBindings;
}

/** A built-in or extension definition, kept in step with what its package ships. */
export interface ManagedDefinition {
  /** `builtin/<name>` for built-ins, `<extension>/<name>` for an extension's. */
  id: string;
  source: "builtin" | "extension";
  /** The definition as shipped (input shape: defaults may be left out). */
  definition: unknown;
}

export interface CreateRunInput {
  definition_id: string;
  task_input: string;
  /** Overrides the definition's `failure_policy` for this run. */
  failure_policy?: FailurePolicy;
  /** A 32-hex run ID; generated when absent. */
  run_id?: string;
}

export interface RunFilter {
  definition_id?: string;
  states?: readonly RunState[];
  /** At most this many, newest first. */
  limit?: number;
}

/**
 * One atomic write of a run's driver: the run's own state, any of its nodes, the events that say so and the
 * attempts that started or ended. All of it is written, or none.
 */
export interface RunUpdate {
  run?: RunPatch;
  nodes?: Readonly<Record<string, NodePatch>>;
  /** Appended to the run's events, in order, with the next `seq`s. */
  events?: readonly PipelineEvent[];
  /** New attempts (status `running`); refused with `pipeline_input_invalid` when the attempt exists. */
  startAttempts?: readonly AttemptStart[];
  /** Ends started attempts; refused with `pipeline_input_invalid` when one is unknown or already ended. */
  endAttempts?: readonly AttemptEnd[];
}

export interface EventFilter {
  /** The first `seq` to return (default 1): a reader that has seen up to n asks from n + 1. */
  fromSeq?: number;
  /** At most this many. */
  limit?: number;
}

/**
 * Where pipeline definitions and runs live. The embedded default is SQLite (`openSqlitePipelineStore`);
 * every other backend must pass the conformance suite in `test/conformance/`. Several processes may use one
 * store at once (a driver holding a run's lease, a CLI sending a control action), so every method is
 * atomic. Methods reject with a `PipelineError` carrying one of `PIPELINE_STORE_CODES`.
 */
export interface PipelineStore {
  // Definitions: lifecycle `draft` → `published`, `revision` +1 on every change.
  listDefinitions(filter?: DefinitionFilter): Promise<StoredDefinition[]>;
  getDefinition(id: string): Promise<StoredDefinition>;
  /** A new user draft at revision 1. `id` (lowercase letters, digits, `-`) defaults to one made from the name. */
  createDefinition(definition: unknown, options?: { id?: string }): Promise<StoredDefinition>;
  /** Replaces a user definition's content; a published one must still pass validation. */
  updateDefinition(id: string, definition: unknown, options?: ExpectedRevision): Promise<StoredDefinition>;
  /** Makes a draft runnable once it passes validation; publishing a published definition changes nothing. */
  publishDefinition(id: string, options?: PublishOptions): Promise<StoredDefinition>;
  deleteDefinition(id: string, options?: ExpectedRevision): Promise<void>;
  /** An editable user draft with the same content: how a locked definition is changed. */
  copyDefinition(id: string, options?: { id?: string; name?: string }): Promise<StoredDefinition>;
  /** A user draft from a JSON text (as `exportDefinition` writes it); invalid text is refused with diagnostics. */
  importDefinition(text: string, options?: { id?: string; file?: string }): Promise<StoredDefinition>;
  /** The definition as JSON text (2-space indented, defaults filled in), importable again. */
  exportDefinition(id: string): Promise<string>;
  /** Adds or updates a built-in or extension definition (locked, published); unchanged content keeps its revision. */
  putManagedDefinition(entry: ManagedDefinition): Promise<StoredDefinition>;
  deleteManagedDefinition(id: string): Promise<void>;

  // Runs, their nodes, their lease and their command queue.
  /** Starts a run of a published definition: a snapshot of it, every node `pending`, the run `pending`. */
  createRun(input: CreateRunInput): Promise<PipelineRun>;
  getRun(runId: string): Promise<PipelineRun>;
  listRuns(filter?: RunFilter): Promise<PipelineRun[]>;
  /** The run's nodes in definition order. */
  getRunNodes(runId: string): Promise<RunNode[]>;
  /** Changes a run and its nodes at once; refused with `pipeline_lease_not_held` unless `owner` holds the lease. */
  updateRun(
    runId: string,
    owner: string,
    update: RunUpdate,
  ): Promise<{ run: PipelineRun; nodes: RunNode[]; events: StoredPipelineEvent[] }>;
  /** Appends events alone (the lease holder's, as `updateRun`); returns them as stored. */
  appendEvents(
    runId: string,
    owner: string,
    events: readonly PipelineEvent[],
  ): Promise<StoredPipelineEvent[]>;
  /** The run's events in `seq` order (append-only: a later read sees the same prefix). */
  listEvents(runId: string, filter?: EventFilter): Promise<StoredPipelineEvent[]>;
  /** The run's attempts by node (definition order), then attempt number. */
  listAttempts(runId: string, filter?: { node_id?: string }): Promise<NodeAttempt[]>;
  /**
   * Takes the run's lease for `ttlMs`: free, already ours (renewed), or expired (taken over atomically, and
   * the commands the previous owner took but did not complete are queued again). A live lease of another
   * owner is not taken: `{ ok: false, held_by }`.
   */
  acquireLease(runId: string, owner: string, ttlMs: number): Promise<LeaseResult>;
  /** Extends our lease; `pipeline_lease_not_held` when another owner has taken it over. */
  renewLease(runId: string, owner: string, ttlMs: number): Promise<Lease>;
  /** Gives the lease up; `false` when `owner` did not hold it. */
  releaseLease(runId: string, owner: string): Promise<boolean>;
  getLease(runId: string): Promise<Lease | null>;
  enqueueCommand(runId: string, command: Command): Promise<StoredCommand>;
  /** The queued commands, oldest first, now taken by `owner`, who must hold the lease. */
  takeCommands(runId: string, owner: string): Promise<StoredCommand[]>;
  completeCommand(
    runId: string,
    commandId: number,
    owner: string,
    result: CommandResult,
  ): Promise<StoredCommand>;
  getCommand(runId: string, commandId: number): Promise<StoredCommand>;
  listCommands(runId: string): Promise<StoredCommand[]>;

  close(): Promise<void>;
}
