import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { isWorkflowError } from "@icode/workflow-errors";
import Database from "better-sqlite3";
import { PipelineError } from "../../codes";
import type { PipelineDefinition } from "../../definition";
import { DEFAULT_PIPELINE_LIMITS, type PipelineLimits } from "../../limits";
import {
  type AttemptEnd,
  AttemptEndSchema,
  type AttemptStart,
  AttemptStartSchema,
  type NodeAttempt,
  type PipelineEvent,
  PipelineEventSchema,
  type StoredPipelineEvent,
} from "../../run/events";
import {
  checkRunId,
  checkUserDefinitionId,
  MANAGED_DEFINITION_ID,
  newRunId,
  slugify,
  uniqueId,
} from "../ids";
import { admitDefinition, checkRunnable, definitionText } from "../lifecycle";
import {
  type Command,
  type CommandResult,
  CommandResultSchema,
  CommandSchema,
  type Lease,
  type LeaseResult,
  type NodePatch,
  NodePatchSchema,
  type PipelineRun,
  type RunNode,
  RunPatchSchema,
  type StoredCommand,
  type StoredDefinition,
  TERMINAL_RUN_STATES,
} from "../records";
import type { PipelineStore, RunUpdate } from "../store";
import { migrate } from "./migrations";

/** The database file under the configuration directory. */
export const PIPELINE_DB_FILE = "pipelines.db";

export function pipelineStorePath(chrysHome: string): string {
  return join(chrysHome, PIPELINE_DB_FILE);
}

export interface SqliteStoreOptions {
  /** The configuration directory (`CHRYS_HOME`, else `~/.chrys`); created when missing. */
  chrysHome: string;
  /** Limits for the definitions and runs (`pipelineLimits(env)`); the defaults otherwise. */
  limits?: PipelineLimits;
  /** Milliseconds since the epoch; tests pass a clock they move. */
  now?: () => number;
  /** How long a write waits for another process's write to finish (default 10 s). */
  busyTimeoutMs?: number;
}

interface DefinitionRow {
  id: string;
  name: string;
  status: "draft" | "published";
  revision: number;
  source: "user" | "builtin" | "extension";
  locked: number;
  definition: string;
  created_at: number;
  updated_at: number;
  published_at: number | null;
}

interface RunRow {
  run_id: string;
  definition_id: string;
  definition_revision: number;
  definition: string;
  task_input: string;
  state: PipelineRun["state"];
  failure_policy: PipelineRun["failure_policy"];
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
}

interface NodeRow {
  run_id: string;
  node_id: string;
  position: number;
  state: RunNode["state"];
  attempts: number;
  handoff: string | null;
  session_ref: string | null;
  approval_granted: number;
  error: string | null;
  updated_at: number;
}

interface LeaseRow {
  run_id: string;
  owner: string | null;
  generation: number;
  acquired_at: number;
  expires_at: number;
}

interface EventRow {
  run_id: string;
  seq: number;
  type: string;
  payload: string;
  time: number;
}

interface AttemptRow {
  run_id: string;
  node_id: string;
  attempt: number;
  prompt: string;
  status: NodeAttempt["status"];
  started_at: number;
  ended_at: number | null;
  session_ref: string | null;
  corrections: number;
  transcript: string | null;
  usage: string | null;
  handoff: string | null;
  reason: string | null;
  error: string | null;
}

interface CommandRow {
  command_id: number;
  run_id: string;
  command: string;
  state: StoredCommand["state"];
  enqueued_at: number;
  taken_by: string | null;
  taken_at: number | null;
  completed_at: number | null;
  result: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

function toDefinition(row: DefinitionRow): StoredDefinition {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    revision: row.revision,
    source: row.source,
    locked: row.locked === 1,
    // Written by this store after the schema passed: read back without parsing it again.
    definition: JSON.parse(row.definition) as PipelineDefinition,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    published_at: isoOrNull(row.published_at),
  };
}

function toRun(row: RunRow): PipelineRun {
  return toRunWith(row, JSON.parse(row.definition) as PipelineDefinition);
}

/** A run from its row without the definition column, and its definition snapshot. */
function toRunWith(row: Omit<RunRow, "definition">, definition: PipelineDefinition): PipelineRun {
  return {
    run_id: row.run_id,
    definition_id: row.definition_id,
    definition_revision: row.definition_revision,
    definition,
    task_input: row.task_input,
    state: row.state,
    failure_policy: row.failure_policy,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    ended_at: isoOrNull(row.ended_at),
    updated_at: iso(row.updated_at),
  };
}

function toNode(row: NodeRow): RunNode {
  return {
    run_id: row.run_id,
    node_id: row.node_id,
    state: row.state,
    attempts: row.attempts,
    handoff: row.handoff === null ? null : (JSON.parse(row.handoff) as Record<string, unknown>),
    session_ref: row.session_ref,
    approval_granted: row.approval_granted === 1,
    error: row.error === null ? null : (JSON.parse(row.error) as RunNode["error"]),
    updated_at: iso(row.updated_at),
  };
}

function toLease(row: LeaseRow & { owner: string }): Lease {
  return {
    run_id: row.run_id,
    owner: row.owner,
    generation: row.generation,
    acquired_at: iso(row.acquired_at),
    expires_at: iso(row.expires_at),
  };
}

function toCommand(row: CommandRow): StoredCommand {
  return {
    command_id: row.command_id,
    run_id: row.run_id,
    command: JSON.parse(row.command) as Command,
    state: row.state,
    enqueued_at: iso(row.enqueued_at),
    taken_by: row.taken_by,
    taken_at: isoOrNull(row.taken_at),
    completed_at: isoOrNull(row.completed_at),
    result: row.result === null ? null : (JSON.parse(row.result) as CommandResult),
  };
}

function toEvent(row: EventRow): StoredPipelineEvent {
  return {
    run_id: row.run_id,
    seq: row.seq,
    time: iso(row.time),
    event: JSON.parse(row.payload) as PipelineEvent,
  };
}

const jsonOrNull = (text: string | null): Record<string, unknown> | null =>
  text === null ? null : (JSON.parse(text) as Record<string, unknown>);

function toAttempt(row: AttemptRow): NodeAttempt {
  return {
    run_id: row.run_id,
    node_id: row.node_id,
    attempt: row.attempt,
    prompt: row.prompt,
    status: row.status,
    started_at: iso(row.started_at),
    ended_at: isoOrNull(row.ended_at),
    session_ref: row.session_ref,
    corrections: row.corrections,
    transcript: row.transcript,
    usage: jsonOrNull(row.usage),
    handoff: jsonOrNull(row.handoff),
    reason: row.reason,
    error: jsonOrNull(row.error) as NodeAttempt["error"],
  };
}

/** Parses each item with `schema`, or throws `pipeline_input_invalid` naming what it is. */
function parseAll<T>(
  items: readonly unknown[] | undefined,
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: Error } },
  what: string,
): T[] {
  return (items ?? []).map((item, index) => {
    const parsed = schema.safeParse(item);
    if (!parsed.success) {
      throw new PipelineError(
        "pipeline_input_invalid",
        `${what} ${index} is not valid: ${parsed.error.message}`,
      );
    }
    return parsed.data;
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function positiveTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
    throw new PipelineError(
      "pipeline_input_invalid",
      `a lease's ttlMs must be a whole number of milliseconds ≥ 1, found ${ttlMs}`,
    );
  }
}

function failure(error: unknown, what: string, file: string): Error {
  if (isWorkflowError(error)) return error;
  const code = (error as { code?: unknown }).code;
  const busy = code === "SQLITE_BUSY" || code === "SQLITE_LOCKED";
  return new PipelineError(
    "pipeline_store_failed",
    `could not ${what}: ${typeof code === "string" ? `${code}: ` : ""}${(error as Error).message ?? String(error)}`,
    {
      hint: busy
        ? "another process held the database too long; try again"
        : `check that ${file} and its folder are writable and the disk has space`,
      cause: error,
    },
  );
}

/**
 * The embedded pipeline store: one SQLite database at `<chrysHome>/pipelines.db` in WAL mode (readers never
 * wait for the writer), with a busy timeout for writes that meet another process's write, and every write
 * in an immediate transaction, so that concurrent processes see each change whole or not at all.
 *
 * @example
 * const store = openSqlitePipelineStore({ chrysHome, limits: pipelineLimits(env).limits });
 * const draft = await store.createDefinition({ name: "Review", nodes: [{ id: "r", name: "R", prompt_template: "{{task}}" }] });
 * await store.publishDefinition(draft.id, { expected_revision: draft.revision });
 */
export function openSqlitePipelineStore(options: SqliteStoreOptions): PipelineStore {
  const file = pipelineStorePath(options.chrysHome);
  const limits = options.limits ?? DEFAULT_PIPELINE_LIMITS;
  const now = options.now ?? Date.now;
  let db: Database.Database | undefined;
  try {
    mkdirSync(options.chrysHome, { recursive: true });
    db = new Database(file, { timeout: options.busyTimeoutMs ?? 10_000 });
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    migrate(db, file);
  } catch (error) {
    db?.close();
    throw failure(error, `open ${file}`, file);
  }
  return sqliteStore(db, file, limits, now);
}

function sqliteStore(
  db: Database.Database,
  file: string,
  limits: PipelineLimits,
  now: () => number,
): PipelineStore {
  const closed = () =>
    new PipelineError("pipeline_store_failed", `could not use the pipeline store: it was closed (${file})`, {
      hint: "open the store again; a closed store does nothing",
    });
  /** Runs `body` as one immediate transaction, turning foreign failures into `pipeline_store_failed`. */
  const write = <T>(what: string, body: () => T): Promise<T> => {
    if (!db.open) return Promise.reject(closed());
    try {
      return Promise.resolve(db.transaction(body).immediate());
    } catch (error) {
      return Promise.reject(failure(error, what, file));
    }
  };
  const read = <T>(what: string, body: () => T): Promise<T> => {
    if (!db.open) return Promise.reject(closed());
    try {
      return Promise.resolve(body());
    } catch (error) {
      return Promise.reject(failure(error, what, file));
    }
  };

  const q = {
    definition: db.prepare<[string], DefinitionRow>("SELECT * FROM definitions WHERE id = ?"),
    definitions: db.prepare<[], DefinitionRow>("SELECT * FROM definitions ORDER BY id"),
    insertDefinition: db.prepare(
      `INSERT INTO definitions (id, name, status, revision, source, locked, definition, created_at, updated_at, published_at)
       VALUES (@id, @name, @status, @revision, @source, @locked, @definition, @created_at, @updated_at, @published_at)`,
    ),
    updateDefinition: db.prepare(
      `UPDATE definitions SET name = @name, status = @status, revision = @revision, definition = @definition,
       updated_at = @updated_at, published_at = @published_at WHERE id = @id`,
    ),
    deleteDefinition: db.prepare<[string]>("DELETE FROM definitions WHERE id = ?"),
    run: db.prepare<[string], RunRow>("SELECT * FROM runs WHERE run_id = ?"),
    // Everything but the definition snapshot, which never changes: it is read once per run (runDefinition).
    runHead: db.prepare<[string], Omit<RunRow, "definition">>(
      `SELECT run_id, definition_id, definition_revision, task_input, state, failure_policy, created_at, started_at,
       ended_at, updated_at FROM runs WHERE run_id = ?`,
    ),
    runDefinition: db.prepare<[string], { definition: string }>(
      "SELECT definition FROM runs WHERE run_id = ?",
    ),
    insertRun: db.prepare(
      `INSERT INTO runs (run_id, definition_id, definition_revision, definition, task_input, state, failure_policy,
       created_at, started_at, ended_at, updated_at)
       VALUES (@run_id, @definition_id, @definition_revision, @definition, @task_input, 'pending', @failure_policy,
       @now, NULL, NULL, @now)`,
    ),
    updateRunState: db.prepare(
      "UPDATE runs SET state = @state, started_at = @started_at, ended_at = @ended_at, updated_at = @now WHERE run_id = @run_id",
    ),
    touchRun: db.prepare<[number, string]>("UPDATE runs SET updated_at = ? WHERE run_id = ?"),
    nodes: db.prepare<[string], NodeRow>("SELECT * FROM run_nodes WHERE run_id = ? ORDER BY position"),
    node: db.prepare<[string, string], NodeRow>("SELECT * FROM run_nodes WHERE run_id = ? AND node_id = ?"),
    insertNode: db.prepare(
      `INSERT INTO run_nodes (run_id, node_id, position, state, attempts, handoff, session_ref, approval_granted, error, updated_at)
       VALUES (?, ?, ?, 'pending', 0, NULL, NULL, 0, NULL, ?)`,
    ),
    updateNode: db.prepare(
      `UPDATE run_nodes SET state = @state, attempts = @attempts, handoff = @handoff, session_ref = @session_ref,
       approval_granted = @approval_granted, error = @error, updated_at = @now WHERE run_id = @run_id AND node_id = @node_id`,
    ),
    lease: db.prepare<[string], LeaseRow>("SELECT * FROM leases WHERE run_id = ?"),
    upsertLease: db.prepare(
      `INSERT INTO leases (run_id, owner, generation, acquired_at, expires_at) VALUES (@run_id, @owner, @generation, @acquired_at, @expires_at)
       ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, generation = excluded.generation,
       acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
    ),
    extendLease: db.prepare<[number, string]>("UPDATE leases SET expires_at = ? WHERE run_id = ?"),
    releaseLease: db.prepare<[number, string]>(
      "UPDATE leases SET owner = NULL, expires_at = ? WHERE run_id = ?",
    ),
    requeueTaken: db.prepare<[string]>(
      "UPDATE commands SET state = 'queued', taken_by = NULL, taken_at = NULL WHERE run_id = ? AND state = 'taken'",
    ),
    insertCommand: db.prepare<[string, string, number]>(
      "INSERT INTO commands (run_id, command, state, enqueued_at) VALUES (?, ?, 'queued', ?)",
    ),
    command: db.prepare<[number, string], CommandRow>(
      "SELECT * FROM commands WHERE command_id = ? AND run_id = ?",
    ),
    commands: db.prepare<[string], CommandRow>("SELECT * FROM commands WHERE run_id = ? ORDER BY command_id"),
    queued: db.prepare<[string], CommandRow>(
      "SELECT * FROM commands WHERE run_id = ? AND state = 'queued' ORDER BY command_id",
    ),
    takeCommand: db.prepare<[string, number, number]>(
      "UPDATE commands SET state = 'taken', taken_by = ?, taken_at = ? WHERE command_id = ?",
    ),
    completeCommand: db.prepare<[number, string, number]>(
      "UPDATE commands SET state = 'done', completed_at = ?, result = ? WHERE command_id = ?",
    ),
    lastSeq: db.prepare<[string], { seq: number | null }>(
      "SELECT MAX(seq) AS seq FROM run_events WHERE run_id = ?",
    ),
    insertEvent: db.prepare<[string, number, string, string, number]>(
      "INSERT INTO run_events (run_id, seq, type, payload, time) VALUES (?, ?, ?, ?, ?)",
    ),
    events: db.prepare<[string, number, number], EventRow>(
      "SELECT * FROM run_events WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
    ),
    attempt: db.prepare<[string, string, number], AttemptRow>(
      "SELECT * FROM node_attempts WHERE run_id = ? AND node_id = ? AND attempt = ?",
    ),
    insertAttempt: db.prepare(
      `INSERT INTO node_attempts (run_id, node_id, attempt, prompt, status, started_at)
       VALUES (@run_id, @node_id, @attempt, @prompt, 'running', @now)`,
    ),
    endAttempt: db.prepare(
      `UPDATE node_attempts SET status = @status, ended_at = @now, session_ref = @session_ref, corrections = @corrections,
       transcript = @transcript, usage = @usage, handoff = @handoff, reason = @reason, error = @error
       WHERE run_id = @run_id AND node_id = @node_id AND attempt = @attempt`,
    ),
    attempts: db.prepare<[string], AttemptRow>(
      `SELECT a.* FROM node_attempts a JOIN run_nodes n ON n.run_id = a.run_id AND n.node_id = a.node_id
       WHERE a.run_id = ? ORDER BY n.position, a.attempt`,
    ),
  };

  /** Appends `events` to the run's stream inside the caller's transaction. */
  const appendInside = (
    runId: string,
    events: readonly PipelineEvent[],
    at: number,
  ): StoredPipelineEvent[] => {
    let seq = q.lastSeq.get(runId)?.seq ?? 0;
    return events.map((event) => {
      seq += 1;
      const payload = JSON.stringify(event);
      q.insertEvent.run(runId, seq, event.type, payload, at);
      return { run_id: runId, seq, time: iso(at), event };
    });
  };
  const startAttemptsInside = (runId: string, starts: readonly AttemptStart[], at: number) => {
    for (const start of starts) {
      if (q.node.get(runId, start.node_id) === undefined) {
        throw new PipelineError("pipeline_node_not_found", `run ${runId} has no node "${start.node_id}"`);
      }
      if (q.attempt.get(runId, start.node_id, start.attempt) !== undefined) {
        throw new PipelineError(
          "pipeline_input_invalid",
          `attempt ${start.attempt} of node "${start.node_id}" of run ${runId} was already started`,
        );
      }
      q.insertAttempt.run({ run_id: runId, ...start, now: at });
    }
  };
  const endAttemptsInside = (runId: string, ends: readonly AttemptEnd[], at: number) => {
    for (const end of ends) {
      const row = q.attempt.get(runId, end.node_id, end.attempt);
      if (row === undefined || row.ended_at !== null) {
        throw new PipelineError(
          "pipeline_input_invalid",
          `attempt ${end.attempt} of node "${end.node_id}" of run ${runId} ${row === undefined ? "was never started" : "has already ended"}`,
        );
      }
      q.endAttempt.run({
        run_id: runId,
        node_id: end.node_id,
        attempt: end.attempt,
        status: end.status,
        now: at,
        session_ref: end.session_ref,
        corrections: end.corrections,
        transcript: end.transcript,
        usage: end.usage === null ? null : JSON.stringify(end.usage),
        handoff: end.handoff === null ? null : JSON.stringify(end.handoff),
        reason: end.reason,
        error: end.error === null ? null : JSON.stringify(end.error),
      });
    }
  };

  const getDefinitionRow = (id: string): DefinitionRow => {
    const row = q.definition.get(id);
    if (row === undefined) {
      throw new PipelineError("pipeline_definition_not_found", `no pipeline definition with ID "${id}"`, {
        hint: "icode pipeline list shows the stored definitions",
      });
    }
    return row;
  };
  const checkEditable = (row: DefinitionRow, action: string) => {
    if (row.locked === 1) {
      throw new PipelineError(
        "pipeline_definition_locked",
        `pipeline ${row.id} is a locked ${row.source === "builtin" ? "built-in" : "extension"} definition; it cannot be ${action}`,
        { hint: `copy it and change the copy (icode pipeline copy ${row.id})` },
      );
    }
  };
  const checkRevision = (row: DefinitionRow, expected: number | undefined) => {
    if (expected !== undefined && expected !== row.revision) {
      throw new PipelineError(
        "pipeline_revision_conflict",
        `pipeline ${row.id} is at revision ${row.revision}, not the expected revision ${expected}: it changed since it was read`,
        { hint: "read it again, reapply the change and pass the new revision" },
      );
    }
  };
  const getRunRow = (runId: string): Omit<RunRow, "definition"> => {
    checkRunId(runId);
    const row = q.runHead.get(runId);
    if (row === undefined) throw new PipelineError("pipeline_run_not_found", `no pipeline run ${runId}`);
    return row;
  };
  /**
   * A run's definition snapshot, parsed once per store instance: a run's snapshot is written when it is
   * created and never changed, so the parse (large for a 200-node pipeline) is not repeated on every write.
   * Frozen, as it is shared by every run object this store returns.
   */
  const snapshots = new Map<string, PipelineDefinition>();
  const definitionOf = (runId: string): PipelineDefinition => {
    let definition = snapshots.get(runId);
    if (definition === undefined) {
      definition = deepFreeze(JSON.parse(q.runDefinition.get(runId)!.definition) as PipelineDefinition);
      snapshots.set(runId, definition);
    }
    return definition;
  };
  const runOf = (runId: string): PipelineRun => toRunWith(getRunRow(runId), definitionOf(runId));
  const checkHolder = (runId: string, owner: string): LeaseRow => {
    const lease = q.lease.get(runId);
    if (lease === undefined || lease.owner !== owner) {
      throw new PipelineError(
        "pipeline_lease_not_held",
        `${owner} does not hold the lease of run ${runId}${lease?.owner ? `; ${lease.owner} does` : ""}`,
        { hint: "acquire the lease first; a driver whose lease was taken over must stop driving the run" },
      );
    }
    return lease;
  };
  const insertUserDraft = (definition: PipelineDefinition, id: string | undefined): StoredDefinition => {
    let chosen: string;
    if (id === undefined)
      chosen = uniqueId(slugify(definition.name), (c) => q.definition.get(c) !== undefined);
    else {
      checkUserDefinitionId(id);
      if (q.definition.get(id) !== undefined) {
        throw new PipelineError(
          "pipeline_definition_exists",
          `a pipeline definition with ID "${id}" exists`,
          {
            hint: "choose another ID, or update that definition",
          },
        );
      }
      chosen = id;
    }
    const at = now();
    const row: DefinitionRow = {
      id: chosen,
      name: definition.name,
      status: "draft",
      revision: 1,
      source: "user",
      locked: 0,
      definition: JSON.stringify(definition),
      created_at: at,
      updated_at: at,
      published_at: null,
    };
    q.insertDefinition.run(row);
    return toDefinition(row);
  };
  const admit = (definition: unknown, full: boolean, what: string) =>
    admitDefinition(definitionText(definition), { limits, full, what });

  const store: PipelineStore = {
    listDefinitions: (filter = {}) =>
      read("list definitions", () =>
        q.definitions
          .all()
          .filter(
            (r) =>
              (filter.status === undefined || r.status === filter.status) &&
              (filter.source === undefined || r.source === filter.source),
          )
          .map(toDefinition),
      ),
    getDefinition: (id) => read(`read definition ${id}`, () => toDefinition(getDefinitionRow(id))),
    createDefinition: (definition, opts = {}) => {
      let admitted: PipelineDefinition;
      try {
        admitted = admit(definition, false, "the definition does not fit the pipeline schema");
      } catch (error) {
        return Promise.reject(error);
      }
      return write("create a definition", () => insertUserDraft(admitted, opts.id));
    },
    updateDefinition: (id, definition, opts = {}) =>
      write(`update definition ${id}`, () => {
        const row = getDefinitionRow(id);
        checkEditable(row, "edited");
        checkRevision(row, opts.expected_revision);
        const published = row.status === "published";
        const admitted = admit(
          definition,
          published,
          published
            ? `pipeline ${id} is published and the new definition does not pass validation`
            : "the definition does not fit the pipeline schema",
        );
        const text = JSON.stringify(admitted);
        if (text === row.definition) return toDefinition(row);
        const next = {
          ...row,
          name: admitted.name,
          definition: text,
          revision: row.revision + 1,
          updated_at: now(),
        };
        q.updateDefinition.run(next);
        return toDefinition(next);
      }),
    publishDefinition: (id, opts = {}) =>
      write(`publish definition ${id}`, () => {
        const row = getDefinitionRow(id);
        checkEditable(row, "published");
        checkRevision(row, opts.expected_revision);
        if (row.status === "published") return toDefinition(row);
        admitDefinition(definitionText(JSON.parse(row.definition)), {
          limits,
          full: true,
          what: `pipeline ${id} does not pass validation and cannot be published`,
          ...(opts.bindings === undefined ? {} : { bindings: opts.bindings }),
        });
        const at = now();
        const next = {
          ...row,
          status: "published" as const,
          revision: row.revision + 1,
          updated_at: at,
          published_at: at,
        };
        q.updateDefinition.run(next);
        return toDefinition(next);
      }),
    deleteDefinition: (id, opts = {}) =>
      write(`delete definition ${id}`, () => {
        const row = getDefinitionRow(id);
        checkEditable(row, "deleted");
        checkRevision(row, opts.expected_revision);
        q.deleteDefinition.run(id);
      }),
    copyDefinition: (id, opts = {}) =>
      write(`copy definition ${id}`, () => {
        const row = getDefinitionRow(id);
        const original = JSON.parse(row.definition) as PipelineDefinition;
        const copy = admit(
          { ...original, name: opts.name ?? `${original.name} (copy)` },
          false,
          "the copy does not fit the pipeline schema",
        );
        return insertUserDraft(copy, opts.id);
      }),
    importDefinition: (text, opts = {}) => {
      let admitted: PipelineDefinition;
      try {
        admitted = admitDefinition(text, {
          limits,
          full: false,
          what: `${opts.file ?? "the text"} is not a pipeline definition`,
          ...(opts.file === undefined ? {} : { file: opts.file }),
        });
      } catch (error) {
        return Promise.reject(error);
      }
      return write("import a definition", () => insertUserDraft(admitted, opts.id));
    },
    exportDefinition: (id) =>
      read(`export definition ${id}`, () => definitionText(JSON.parse(getDefinitionRow(id).definition))),
    putManagedDefinition: (entry) =>
      write(`install definition ${entry.id}`, () => {
        const builtin = entry.id.startsWith("builtin/");
        if (!MANAGED_DEFINITION_ID.test(entry.id) || builtin !== (entry.source === "builtin")) {
          throw new PipelineError(
            "pipeline_invalid_id",
            `"${entry.id}" is not a${entry.source === "builtin" ? " built-in" : "n extension"} definition ID: expected ${entry.source === "builtin" ? "builtin/<name>" : "<extension>/<name> (not builtin/)"}`,
          );
        }
        const admitted = admit(
          entry.definition,
          true,
          `the ${entry.source} definition ${entry.id} does not pass validation`,
        );
        const text = JSON.stringify(admitted);
        const existing = q.definition.get(entry.id);
        const at = now();
        if (existing === undefined) {
          const row: DefinitionRow = {
            id: entry.id,
            name: admitted.name,
            status: "published",
            revision: 1,
            source: entry.source,
            locked: 1,
            definition: text,
            created_at: at,
            updated_at: at,
            published_at: at,
          };
          q.insertDefinition.run(row);
          return toDefinition(row);
        }
        if (existing.definition === text) return toDefinition(existing);
        const next = {
          ...existing,
          name: admitted.name,
          definition: text,
          revision: existing.revision + 1,
          updated_at: at,
          published_at: at,
        };
        q.updateDefinition.run(next);
        return toDefinition(next);
      }),
    deleteManagedDefinition: (id) =>
      write(`remove definition ${id}`, () => {
        if (!MANAGED_DEFINITION_ID.test(id)) {
          throw new PipelineError(
            "pipeline_invalid_id",
            `"${id}" is not a built-in or extension definition ID`,
          );
        }
        getDefinitionRow(id);
        q.deleteDefinition.run(id);
      }),

    createRun: (input) => {
      const length = codePoints(input.task_input);
      if (length > limits.maxTaskInput) {
        return Promise.reject(
          new PipelineError(
            "pipeline_task_input_too_long",
            `the task input is ${length} characters, more than the ${limits.maxTaskInput} a run accepts`,
            { hint: "shorten it, or put the details in a file the task names" },
          ),
        );
      }
      return write("start a run", () => {
        const row = getDefinitionRow(input.definition_id);
        const runnable = checkRunnable(row);
        if (!runnable.ok) throw new PipelineError(runnable.code, runnable.message, { hint: runnable.hint });
        const runId = input.run_id ?? newRunId();
        checkRunId(runId);
        if (q.run.get(runId) !== undefined)
          throw new PipelineError("pipeline_run_exists", `a pipeline run ${runId} exists`);
        const definition = JSON.parse(row.definition) as PipelineDefinition;
        const at = now();
        q.insertRun.run({
          run_id: runId,
          definition_id: row.id,
          definition_revision: row.revision,
          definition: row.definition,
          task_input: input.task_input,
          failure_policy: input.failure_policy ?? definition.failure_policy,
          now: at,
        });
        definition.nodes.forEach((node, position) => {
          q.insertNode.run(runId, node.id, position, at);
        });
        return toRun(q.run.get(runId)!);
      });
    },
    getRun: (runId) => read(`read run ${runId}`, () => runOf(runId)),
    listRuns: (filter = {}) =>
      read("list runs", () => {
        const where: string[] = [];
        const params: Array<string | number> = [];
        if (filter.definition_id !== undefined) {
          where.push("definition_id = ?");
          params.push(filter.definition_id);
        }
        if (filter.states !== undefined) {
          where.push(`state IN (${filter.states.map(() => "?").join(", ") || "NULL"})`);
          params.push(...filter.states);
        }
        const limit = filter.limit === undefined ? "" : ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
        const sql = `SELECT * FROM runs${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, rowid DESC${limit}`;
        return db
          .prepare<Array<string | number>, RunRow>(sql)
          .all(...params)
          .map(toRun);
      }),
    getRunNodes: (runId) =>
      read(`read the nodes of run ${runId}`, () => {
        getRunRow(runId);
        return q.nodes.all(runId).map(toNode);
      }),
    updateRun: (runId, owner, update: RunUpdate) => {
      const runPatch = RunPatchSchema.safeParse(update.run ?? {});
      const nodePatches: Array<[string, NodePatch]> = [];
      for (const [nodeId, patch] of Object.entries(update.nodes ?? {})) {
        const parsed = NodePatchSchema.safeParse(patch);
        if (!parsed.success) {
          return Promise.reject(
            new PipelineError(
              "pipeline_input_invalid",
              `the update of node "${nodeId}" is not a node patch: ${parsed.error.message}`,
            ),
          );
        }
        nodePatches.push([nodeId, parsed.data]);
      }
      if (!runPatch.success) {
        return Promise.reject(
          new PipelineError(
            "pipeline_input_invalid",
            `the run update is not a run patch: ${runPatch.error.message}`,
          ),
        );
      }
      let events: PipelineEvent[];
      let starts: AttemptStart[];
      let ends: AttemptEnd[];
      try {
        events = parseAll(update.events, PipelineEventSchema, "event");
        starts = parseAll(update.startAttempts, AttemptStartSchema, "attempt start");
        ends = parseAll(update.endAttempts, AttemptEndSchema, "attempt end");
      } catch (error) {
        return Promise.reject(error);
      }
      return write(`update run ${runId}`, () => {
        const row = getRunRow(runId);
        checkHolder(runId, owner);
        const at = now();
        const state = runPatch.data.state;
        if (state !== undefined && state !== row.state) {
          const terminal = TERMINAL_RUN_STATES.includes(state);
          q.updateRunState.run({
            run_id: runId,
            state,
            started_at: row.started_at ?? (state === "pending" ? null : at),
            ended_at: terminal ? at : null,
            now: at,
          });
        } else q.touchRun.run(at, runId);
        const changed: RunNode[] = [];
        for (const [nodeId, patch] of nodePatches) {
          const current = q.node.get(runId, nodeId);
          if (current === undefined) {
            throw new PipelineError("pipeline_node_not_found", `run ${runId} has no node "${nodeId}"`);
          }
          const next = {
            run_id: runId,
            node_id: nodeId,
            state: patch.state ?? current.state,
            attempts: patch.attempts ?? current.attempts,
            handoff:
              patch.handoff === undefined
                ? current.handoff
                : patch.handoff === null
                  ? null
                  : JSON.stringify(patch.handoff),
            session_ref: patch.session_ref === undefined ? current.session_ref : patch.session_ref,
            approval_granted:
              patch.approval_granted === undefined
                ? current.approval_granted
                : patch.approval_granted
                  ? 1
                  : 0,
            error:
              patch.error === undefined
                ? current.error
                : patch.error === null
                  ? null
                  : JSON.stringify(patch.error),
            now: at,
          };
          q.updateNode.run(next);
          changed.push(toNode(q.node.get(runId, nodeId)!));
        }
        startAttemptsInside(runId, starts, at);
        endAttemptsInside(runId, ends, at);
        const stored = appendInside(runId, events, at);
        return { run: runOf(runId), nodes: changed, events: stored };
      });
    },
    appendEvents: (runId, owner, events) => {
      let parsed: PipelineEvent[];
      try {
        parsed = parseAll(events, PipelineEventSchema, "event");
      } catch (error) {
        return Promise.reject(error);
      }
      return write(`append events to run ${runId}`, () => {
        getRunRow(runId);
        checkHolder(runId, owner);
        return appendInside(runId, parsed, now());
      });
    },
    listEvents: (runId, filter = {}) =>
      read(`read the events of run ${runId}`, () => {
        getRunRow(runId);
        const from = Math.max(1, Math.floor(filter.fromSeq ?? 1));
        const limit = filter.limit === undefined ? -1 : Math.max(0, Math.floor(filter.limit));
        return q.events.all(runId, from, limit).map(toEvent);
      }),
    listAttempts: (runId, filter = {}) =>
      read(`read the attempts of run ${runId}`, () => {
        getRunRow(runId);
        const all = q.attempts.all(runId).map(toAttempt);
        return filter.node_id === undefined ? all : all.filter((a) => a.node_id === filter.node_id);
      }),

    acquireLease: (runId, owner, ttlMs) => {
      try {
        positiveTtl(ttlMs);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(`take the lease of run ${runId}`, (): LeaseResult => {
        getRunRow(runId);
        const at = now();
        const lease = q.lease.get(runId);
        if (lease !== undefined && lease.owner === owner) {
          q.extendLease.run(at + ttlMs, runId);
          return { ok: true, lease: toLease({ ...lease, owner, expires_at: at + ttlMs }), took_over: false };
        }
        if (lease !== undefined && lease.owner !== null && lease.expires_at > at) {
          return { ok: false, held_by: toLease({ ...lease, owner: lease.owner }) };
        }
        const tookOver = lease !== undefined && lease.owner !== null;
        // Commands the previous driver took (a dead one, or one that released without completing them) go back.
        q.requeueTaken.run(runId);
        const next = {
          run_id: runId,
          owner,
          generation: (lease?.generation ?? 0) + 1,
          acquired_at: at,
          expires_at: at + ttlMs,
        };
        q.upsertLease.run(next);
        return { ok: true, lease: toLease(next), took_over: tookOver };
      });
    },
    renewLease: (runId, owner, ttlMs) => {
      try {
        positiveTtl(ttlMs);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(`renew the lease of run ${runId}`, () => {
        getRunRow(runId);
        const lease = checkHolder(runId, owner);
        const expires = now() + ttlMs;
        q.extendLease.run(expires, runId);
        return toLease({ ...lease, owner, expires_at: expires });
      });
    },
    releaseLease: (runId, owner) =>
      write(`release the lease of run ${runId}`, () => {
        getRunRow(runId);
        const lease = q.lease.get(runId);
        if (lease === undefined || lease.owner !== owner) return false;
        q.releaseLease.run(now(), runId);
        q.requeueTaken.run(runId);
        return true;
      }),
    getLease: (runId) =>
      read(`read the lease of run ${runId}`, () => {
        getRunRow(runId);
        const lease = q.lease.get(runId);
        return lease === undefined || lease.owner === null ? null : toLease({ ...lease, owner: lease.owner });
      }),
    enqueueCommand: (runId, command) => {
      const parsed = CommandSchema.safeParse(command);
      if (!parsed.success) {
        return Promise.reject(
          new PipelineError("pipeline_input_invalid", `not a run command: ${parsed.error.message}`),
        );
      }
      return write(`send a command to run ${runId}`, () => {
        getRunRow(runId);
        const info = q.insertCommand.run(runId, JSON.stringify(parsed.data), now());
        return toCommand(q.command.get(Number(info.lastInsertRowid), runId)!);
      });
    },
    takeCommands: (runId, owner) =>
      write(`take the commands of run ${runId}`, () => {
        getRunRow(runId);
        checkHolder(runId, owner);
        const at = now();
        return q.queued.all(runId).map((row) => {
          q.takeCommand.run(owner, at, row.command_id);
          return toCommand({ ...row, state: "taken", taken_by: owner, taken_at: at });
        });
      }),
    completeCommand: (runId, commandId, owner, result) => {
      const parsed = CommandResultSchema.safeParse(result);
      if (!parsed.success) {
        return Promise.reject(
          new PipelineError("pipeline_input_invalid", `not a command result: ${parsed.error.message}`),
        );
      }
      return write(`complete command ${commandId} of run ${runId}`, () => {
        getRunRow(runId);
        const row = q.command.get(commandId, runId);
        if (row === undefined)
          throw new PipelineError("pipeline_command_not_found", `run ${runId} has no command ${commandId}`);
        if (row.state !== "taken" || row.taken_by !== owner) {
          throw new PipelineError(
            "pipeline_command_not_taken",
            row.state === "done"
              ? `command ${commandId} of run ${runId} is already complete`
              : row.state === "queued"
                ? `command ${commandId} of run ${runId} has not been taken (it is queued)`
                : `command ${commandId} of run ${runId} was taken by ${row.taken_by}, not ${owner}`,
            { hint: "take commands with takeCommands while holding the run's lease" },
          );
        }
        const at = now();
        q.completeCommand.run(at, JSON.stringify(parsed.data), commandId);
        return toCommand({ ...row, state: "done", completed_at: at, result: JSON.stringify(parsed.data) });
      });
    },
    getCommand: (runId, commandId) =>
      read(`read command ${commandId} of run ${runId}`, () => {
        getRunRow(runId);
        const row = q.command.get(commandId, runId);
        if (row === undefined)
          throw new PipelineError("pipeline_command_not_found", `run ${runId} has no command ${commandId}`);
        return toCommand(row);
      }),
    listCommands: (runId) =>
      read(`list the commands of run ${runId}`, () => {
        getRunRow(runId);
        return q.commands.all(runId).map(toCommand);
      }),

    close: () => {
      try {
        if (db.open) db.close();
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(failure(error, `close ${file}`, file));
      }
    },
  };
  return store;
}
