import type { TrustSubject } from "@icode/workflow-discovery";
import type { Diagnostic } from "@icode/workflow-errors";
import type { CapturedText, Definition, TailText } from "@icode/workflow-graph";
import type { EnvironmentRecord, NodeDiagnostics, SourceSnapshot } from "@icode/workflow-records";
import type { Executors } from "@icode/workflow-scheduler";
import type { AgentBindings } from "./agents/bindings";
import type { Refusal } from "./run/report";

/**
 * The seam between the run path and a kind of workflow. The run path (resolve the session, admit, open the
 * records, schedule, finish) knows nothing of Python or JSON: a loader finds a workflow by ID, loads and
 * checks it, and hands back its Definition with everything needed to run it. The Python loader is the first
 * implementation; the JSON pipeline loader is the second.
 */
export interface WorkflowLoader {
  /** Which kind of workflow it loads (the `workflow_kind` of `run_accepted`). */
  readonly kind: "python" | "pipeline";
  /** The workflow `workflowId` names, as seen from `cwd`; or why there is none that can run. */
  find(workflowId: string, cwd: string): Promise<FoundWorkflow | Refusal>;
  /** Loads and checks `found` to run in `options.workspace`; may run workflow code (Python's top level). */
  prepare(found: FoundWorkflow, options: PrepareOptions): Promise<PreparedWorkflow | Refusal>;
}

export interface FoundWorkflow {
  readonly id: string;
  /** Its entry (a `.py` file, a folder's entry file, a definition ID), as a session records it. */
  readonly path: string;
  /** Where it was found: `project`, `global`, `builtin`, or a store's own source. */
  readonly source: "project" | "global" | "builtin";
  /** Where a new session of it works (a project workflow: its project folder; others: the caller's cwd). */
  readonly workspace: string;
}

export interface PrepareOptions {
  readonly workspace: string;
  readonly signal: AbortSignal;
  /** Asked before any of the workflow's code runs: `null` lets it go on, a refusal stops it. */
  readonly trustGate: (subject: TrustSubject) => Promise<Refusal | null>;
  /** Overrides the 60-second load-and-build limit. */
  readonly loadTimeoutMs?: number;
  /** Something the user should know (a cache rebuilt, a profile skipped): becomes a `warning` event. */
  readonly warn: (warning: LoaderWarning) => void;
  /** The workflow's default model for agent nodes (the session's saved choice), or `null`. */
  readonly workflowDefaultModel: string | null;
}

export interface LoaderWarning {
  readonly source: string;
  readonly code: string;
  readonly message: string;
  readonly detail?: Record<string, string | number | boolean | null>;
}

/** A loaded workflow, ready to run; `close` releases what it holds (a warm Python worker). */
export interface PreparedWorkflow {
  readonly definition: Definition;
  /** What the trust confirmation of this run covers (checked again with the definition, saved on `trust`). */
  readonly trust: TrustSubject;
  /** The resolved environment, recorded with the run. */
  readonly environment: EnvironmentRecord;
  /** The source as loaded, recorded with the run. */
  readonly source: SourceSnapshot;
  /** What loading printed. */
  readonly loadOutput: CapturedText;
  /** Problems found while loading that did not stop it (warnings). */
  readonly diagnostics: readonly Diagnostic[];
  /** Its agent nodes bound to profiles and models (`bindings` stage), or `null` when it has none. */
  readonly agents: AgentBindings | null;
  /** Whether the source on disk is still what was loaded (a change during loading refuses the run). */
  unchanged(): Promise<boolean>;
  /** The executors of this run's nodes, writing what they capture through `io`. */
  executors(io: ExecutorIO): Executors;
  /** Output of the run that belongs to no node (a worker's fd-level writes), once the run has ended. */
  native(): TailText;
  close(): Promise<void>;
}

/** What executors may store while a run goes (through the run's recorder). */
export interface ExecutorIO {
  /** Called before each batch of calls goes out: the run's events so far are stored first. */
  beforeSend(): void;
  /** Stores one attempt's captured output; a failure ends the run with `storage_failed`. */
  nodeDiagnostics(record: NodeDiagnostics): void;
}
