import { mkdirSync, readdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { writeJsonAtomic } from "./atomic";
import { recordsError, storageFailed } from "./codes";
import { isSessionId, newSessionId, RunIdSchema, SessionIdSchema } from "./ids";
import { readJsonFile } from "./json-file";
import { FILES, sessionDir, sessionsDir } from "./layout";

const SESSION_FORMAT = 1 as const;

/** Where the session's workflow was discovered (the spec's three locations). */
const WorkflowSourceSchema = z.enum(["project", "global", "builtin"]);
export type WorkflowSource = z.infer<typeof WorkflowSourceSchema>;

/**
 * Saved run settings. `model` is the default model selection of the "Run Settings" dialog (`null`: the
 * profiles' own). Other keys are kept as written, so a newer front end's settings survive an older engine.
 * The approval mode is deliberately not saved (spec "Session settings").
 */
const SessionSettingsSchema = z.looseObject({ model: z.string().nullable() });
export type SessionSettings = z.infer<typeof SessionSettingsSchema>;

/** `<chrysHome>/sessions/<session_id>/session.json`. Times are ISO 8601 UTC strings. */
export const SessionSchema = z.object({
  format: z.literal(SESSION_FORMAT),
  kind: z.literal("workflow"),
  session_id: SessionIdSchema,
  workflow_id: z.string().min(1),
  /** The workflow's entry: the `.py` file, or the folder of a workflow folder. */
  workflow_path: z.string().min(1),
  source: WorkflowSourceSchema,
  /** The working directory runs of this session use; fixed once the session has a run. */
  workspace: z.string().min(1),
  created_at: z.string(),
  updated_at: z.string(),
  settings: SessionSettingsSchema,
  /** Run IDs in start order. The run folders are the truth; `listRuns` also finds runs missing here. */
  runs: z.array(RunIdSchema),
});
export type Session = z.infer<typeof SessionSchema>;

const SessionInitSchema = SessionSchema.pick({
  workflow_id: true,
  workflow_path: true,
  source: true,
  workspace: true,
}).extend({
  settings: SessionSettingsSchema.partial().optional(),
  /** Use this ID instead of a new one (it must be a lowercase UUID v4 not yet taken). */
  session_id: SessionIdSchema.optional(),
});
export type SessionInit = z.input<typeof SessionInitSchema>;

/** What `updateSession` may change. Settings are merged key by key. */
const SessionPatchSchema = z.object({
  settings: SessionSettingsSchema.partial().optional(),
  workspace: z.string().min(1).optional(),
});
export type SessionPatch = z.input<typeof SessionPatchSchema>;

export function createSession(chrysHome: string, init: SessionInit): Session {
  const parsed = SessionInitSchema.safeParse(init);
  if (!parsed.success) {
    throw recordsError(
      "record_invalid",
      `Cannot create a session: ${parsed.error.issues[0]?.message ?? "invalid"}.`,
    );
  }
  const fields = parsed.data;
  for (const [name, path] of [
    ["workspace", fields.workspace],
    ["workflow_path", fields.workflow_path],
  ] as const) {
    if (!isAbsolute(path)) {
      throw recordsError(
        "record_invalid",
        `Cannot create a session: ${name} "${path}" is not an absolute path.`,
        {
          hint: "Resolve paths against the caller's working directory first.",
        },
      );
    }
  }
  const sessionId = fields.session_id ?? newSessionId();
  const dir = sessionDir(chrysHome, sessionId);
  try {
    mkdirSync(sessionsDir(chrysHome), { recursive: true, mode: 0o700 });
    mkdirSync(dir, { mode: 0o700 });
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "EEXIST") {
      throw recordsError("record_invalid", `Cannot create session ${sessionId}: ${dir} already exists.`, {
        hint: "Leave out session_id to get a new one.",
      });
    }
    throw storageFailed("the session folder", dir, cause);
  }
  const now = new Date().toISOString();
  const session: Session = {
    format: SESSION_FORMAT,
    kind: "workflow",
    session_id: sessionId,
    workflow_id: fields.workflow_id,
    workflow_path: fields.workflow_path,
    source: fields.source,
    workspace: fields.workspace,
    created_at: now,
    updated_at: now,
    settings: { model: null, ...fields.settings },
    runs: [],
  };
  writeJsonAtomic(join(dir, FILES.session), session, "the session file");
  return session;
}

export function loadSession(chrysHome: string, sessionId: string): Session {
  if (!isSessionId(sessionId)) {
    throw recordsError("invalid_id", `"${sessionId}" is not a session ID: expected a lowercase UUID.`, {
      hint: "Session IDs look like 3f2b8c1e-6d4a-4b7e-9c1f-0a2b3c4d5e6f.",
    });
  }
  const file = join(sessionDir(chrysHome, sessionId), FILES.session);
  const session = readJsonFile(file, SessionSchema, "the session file", { optional: true });
  if (session === null) {
    throw recordsError(
      "session_not_found",
      `No workflow session ${sessionId} in ${sessionsDir(chrysHome)}.`,
      {
        hint: "List sessions to find the ID; a session is created by its first run.",
      },
    );
  }
  if (session.session_id !== sessionId) {
    throw recordsError("record_invalid", `${file} names session ${session.session_id}, not ${sessionId}.`);
  }
  return session;
}

export interface ListSessionsFilter {
  workflow_id?: string;
  workspace?: string;
}

export interface ListSessionsResult {
  /** Most recently updated first. */
  sessions: Session[];
  /** One line per folder that looks like a session but could not be read; it is left out. */
  warnings: string[];
}

export function listSessions(chrysHome: string, filter: ListSessionsFilter = {}): ListSessionsResult {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(chrysHome));
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return { sessions: [], warnings: [] };
    return { sessions: [], warnings: [`Could not list ${sessionsDir(chrysHome)}: ${String(cause)}`] };
  }
  const sessions: Session[] = [];
  const warnings: string[] = [];
  for (const name of names) {
    if (!isSessionId(name)) continue;
    try {
      const session = loadSession(chrysHome, name);
      if (filter.workflow_id !== undefined && session.workflow_id !== filter.workflow_id) continue;
      if (filter.workspace !== undefined && session.workspace !== filter.workspace) continue;
      sessions.push(session);
    } catch (error) {
      warnings.push((error as Error).message);
    }
  }
  sessions.sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0));
  return { sessions, warnings };
}

/**
 * Changes saved settings, or the workspace of a session that has no runs yet and whose workflow is not a
 * project workflow (a project workflow's workspace is its project folder). Written atomically.
 */
export function updateSession(chrysHome: string, sessionId: string, patch: SessionPatch): Session {
  const parsed = SessionPatchSchema.safeParse(patch);
  if (!parsed.success) {
    throw recordsError(
      "record_invalid",
      `Cannot update session ${sessionId}: ${parsed.error.issues[0]?.message}.`,
    );
  }
  const session = loadSession(chrysHome, sessionId);
  const next: Session = { ...session, settings: { ...session.settings, ...parsed.data.settings } };
  const workspace = parsed.data.workspace;
  if (workspace !== undefined && workspace !== session.workspace) {
    if (!isAbsolute(workspace)) {
      throw recordsError(
        "record_invalid",
        `Cannot update session ${sessionId}: "${workspace}" is not absolute.`,
      );
    }
    if (session.runs.length > 0) {
      throw recordsError(
        "session_fixed",
        `Session ${sessionId} already has ${session.runs.length} run(s), so its workspace stays ${session.workspace}.`,
        { hint: "Start a new session to use another working directory." },
      );
    }
    if (session.source === "project") {
      throw recordsError(
        "session_fixed",
        `Session ${sessionId} runs the project workflow ${session.workflow_id}, whose workspace is its project folder ${session.workspace}.`,
        { hint: "Project workflows always run in the folder that holds their .chrys/workflows/." },
      );
    }
    next.workspace = workspace;
  }
  return saveSession(chrysHome, next);
}

/** Internal: stamps `updated_at` and writes the session atomically. */
export function saveSession(chrysHome: string, session: Session): Session {
  const next = { ...session, updated_at: new Date().toISOString() };
  writeJsonAtomic(join(sessionDir(chrysHome, session.session_id), FILES.session), next, "the session file");
  return next;
}
