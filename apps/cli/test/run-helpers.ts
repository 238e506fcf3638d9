/**
 * Helpers shared by the `icode workflow run` / `list` / `trajectory export` end-to-end tests: a project
 * folder with its own configuration directory, the run JSON's schema (the spec's top-level fields, no more),
 * a reader for the run record that checks what the record format promises (canonical JSON, `seq` without
 * gaps), and a spawner for tests that signal the CLI while a node runs.
 *
 * Everything here reads the files as a user would; nothing imports the code under test.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { CLI_BIN, type CliResult, runCli, type Tree, tmpDir, writeTree } from "@icode/test-utils";
import type { EngineEvent } from "@icode/workflow-engine";
import { expect } from "vitest";
import { z } from "zod";

/** A temporary project: `dir` is the working directory, `home` its `CHRYS_HOME` (what `runCli` sets). */
export interface Project {
  dir: string;
  home: string;
}

export function project(tree: Tree = {}): Project {
  const dir = tmpDir("icode-e2e-");
  writeTree(dir, tree);
  return { dir, home: join(dir, ".home") };
}

/** Runs `icode <args>` in the project. */
export function icode(p: Project, args: string[], env: Record<string, string> = {}, timeoutMs = 60_000) {
  return runCli(args, { cwd: p.dir, env, timeoutMs });
}

const RUN_OUTCOMES = [
  "completed",
  "node_failed",
  "loop_exhausted",
  "cancelled",
  "worker_lost",
  "storage_failed",
  "orphaned",
] as const;

/** The `--json` result: exactly the spec's top-level fields ("The table lists all top-level fields"). */
export const RunJsonSchema = z.strictObject({
  session_id: z.string().nullable(),
  run_id: z.string().regex(/^[0-9a-f]{32}$/),
  outcome: z.enum(RUN_OUTCOMES),
  reason: z.string(),
  node_id: z.string(),
  error: z.string(),
  duration: z.number().positive(),
  diagnostics: z
    .union([
      z.strictObject({
        load: z.strictObject({ text: z.string(), truncated: z.boolean() }),
        native: z.strictObject({ text: z.string(), dropped_bytes: z.number().int().min(0) }),
      }),
      z.looseObject({ error: z.string() }),
    ])
    .nullable(),
  outputs: z.array(
    z.strictObject({ node_id: z.string(), activation_id: z.string(), text: z.string(), data: z.json() }),
  ),
});
export type RunJson = z.infer<typeof RunJsonSchema>;

/** Parses stdout of a `--json` run: one line holding one object of the spec's shape. */
export function parseRunJson(r: CliResult): RunJson {
  const context = `exit ${r.exitCode}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
  expect(r.stdout.endsWith("\n"), `stdout must be one line ending in a newline (${context})`).toBe(true);
  expect(r.stdout.slice(0, -1).includes("\n"), `stdout must be a single line (${context})`).toBe(false);
  let value: unknown;
  try {
    value = JSON.parse(r.stdout);
  } catch {
    throw new Error(`stdout is not JSON (${context})`);
  }
  const parsed = RunJsonSchema.safeParse(value);
  if (!parsed.success)
    throw new Error(`run JSON does not match the spec: ${parsed.error.message}\n${context}`);
  return parsed.data;
}

/**
 * The `--json` error object: `{"error": {"code", "message", "hint", …}}` (docs/cli.md, decision 0031), for
 * usage errors, rejections and failed commands.
 */
export const ErrorJsonSchema = z.strictObject({
  error: z.strictObject({
    code: z.string().regex(/^[a-z_]+$/),
    message: z.string().min(1),
    hint: z.string().nullable(),
    session_id: z.string().nullable().optional(),
    diagnostics: z.array(z.looseObject({ code: z.string(), message: z.string() })).optional(),
  }),
});
export type ErrorJson = z.infer<typeof ErrorJsonSchema>;

/** Parses stdout of a `--json` command that failed: exactly one line, the error object with `code`. */
export function parseErrorJson(r: CliResult, code?: string): ErrorJson["error"] {
  const context = `exit ${r.exitCode}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
  expect(r.stdout.endsWith("\n"), `stdout must be one line ending in a newline (${context})`).toBe(true);
  expect(r.stdout.slice(0, -1).includes("\n"), `stdout must be a single line (${context})`).toBe(false);
  const parsed = ErrorJsonSchema.safeParse(JSON.parse(r.stdout));
  if (!parsed.success) throw new Error(`not the error object: ${parsed.error.message}\n${context}`);
  if (code !== undefined) expect(parsed.data.error.code, context).toBe(code);
  return parsed.data.error;
}

/** `icode workflow run <id> --json …`, parsed. */
export async function runJson(p: Project, id: string, args: string[] = [], env: Record<string, string> = {}) {
  const r = await icode(p, ["workflow", "run", id, "--json", ...args], env);
  return { ...r, json: parseRunJson(r) };
}

/** Object keys sorted by code point at every level, as canonical JSON requires. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** Asserts that `text` is canonical JSON (sorted keys, compact) and returns the value. */
export function canonical(text: string, what: string): unknown {
  const value: unknown = JSON.parse(text);
  expect(JSON.stringify(sortKeys(value)), `${what} is not canonical JSON`).toBe(text);
  return value;
}

function readCanonicalFile(path: string): unknown {
  const text = readFileSync(path, "utf8");
  return canonical(text.endsWith("\n") ? text.slice(0, -1) : text, path);
}

export type Ev = EngineEvent;
export type EvOf<T extends Ev["type"]> = Extract<Ev, { type: T }>;

export function ofType<T extends Ev["type"]>(events: Ev[], type: T): EvOf<T>[] {
  return events.filter((e): e is EvOf<T> => e.type === type);
}

/** The one `workflow_run_end` of a run's events, which must be the last event. */
export function runEnd(events: Ev[]): EvOf<"workflow_run_end"> {
  const ends = ofType(events, "workflow_run_end");
  expect(ends, "exactly one workflow_run_end event").toHaveLength(1);
  expect(events[events.length - 1]?.type, "workflow_run_end is the last event").toBe("workflow_run_end");
  return ends[0]!;
}

/**
 * Reads `events.jsonl`: every line a canonical JSON event of this run, `seq` 0, 1, 2, … and `ts` a number.
 * A final line without its newline (a crash mid-write) is not expected in these tests.
 */
export function readEvents(path: string, runId?: string): Ev[] {
  const text = readFileSync(path, "utf8");
  expect(text.endsWith("\n"), `${path} ends with a newline`).toBe(true);
  const events = text
    .slice(0, -1)
    .split("\n")
    .map((line, i) => canonical(line, `${path} line ${i + 1}`) as Ev);
  events.forEach((e, i) => {
    expect(e.seq, `${path}: seq of line ${i + 1}`).toBe(i);
    expect(typeof e.ts).toBe("number");
    if (runId !== undefined) expect(e.run_id).toBe(runId);
  });
  return events;
}

export interface NodeRecord {
  file: string;
  node_id: string;
  activation_id: string;
  attempt: number;
  phases: { phase: string; stdout: { text: string; truncated: boolean } }[];
}

export interface RunRecord {
  dir: string;
  header: Record<string, unknown>;
  definition: Record<string, unknown>;
  input: unknown;
  /** `outputs.json` and `output.json`, written when the run is finalized; `undefined` until then. */
  outputs: unknown;
  output: unknown;
  events: Ev[];
  /** Node diagnostics records by file name. */
  nodes: Map<string, NodeRecord>;
  /** The source snapshot's files, relative with `/`, sorted. */
  source: string[];
}

export function sessionsDir(home: string): string {
  return join(home, "sessions");
}

export function sessionIds(home: string): string[] {
  const dir = sessionsDir(home);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

export function runIds(home: string, sessionId: string): string[] {
  const dir = join(sessionsDir(home), sessionId, "workflows");
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

export function runDir(home: string, sessionId: string, runId: string): string {
  return join(sessionsDir(home), sessionId, "workflows", runId);
}

export function readSession(home: string, sessionId: string): Record<string, unknown> {
  return readCanonicalFile(join(sessionsDir(home), sessionId, "session.json")) as Record<string, unknown>;
}

function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(root, path).split("\\").join("/"));
    }
  };
  if (existsSync(root)) walk(root);
  return out.sort();
}

/** Reads a finished run's folder and checks the shape of every file the records format promises. */
export function readRun(home: string, sessionId: string, runId: string): RunRecord {
  const dir = runDir(home, sessionId, runId);
  const file = (name: string) => readCanonicalFile(join(dir, name));
  const header = file("run.json") as Record<string, unknown>;
  expect(header).toMatchObject({ run_id: runId, session_id: sessionId });
  expect(typeof header["pid"]).toBe("number");
  expect(Object.keys(header).sort()).toEqual(
    expect.arrayContaining([
      "engine_version",
      "format",
      "pid",
      "process_start",
      "run_id",
      "session_id",
      "started_at",
      "workflow_id",
    ]),
  );
  expect(Number.isNaN(Date.parse(String(header["started_at"])))).toBe(false);
  const nodes = new Map<string, NodeRecord>();
  const nodesDir = join(dir, "nodes");
  if (existsSync(nodesDir)) {
    for (const name of readdirSync(nodesDir).sort()) {
      nodes.set(name, {
        file: name,
        ...(readCanonicalFile(join(nodesDir, name)) as Omit<NodeRecord, "file">),
      });
    }
  }
  return {
    dir,
    header,
    definition: file("definition.json") as Record<string, unknown>,
    input: file("input.json"),
    outputs: existsSync(join(dir, "outputs.json")) ? file("outputs.json") : undefined,
    output: existsSync(join(dir, "output.json")) ? file("output.json") : undefined,
    events: readEvents(join(dir, "events.jsonl"), runId),
    nodes,
    source: listFiles(join(dir, "source")),
  };
}

/** The record of the run a `--json` result names. */
export function recordOf(p: Project, json: RunJson): RunRecord {
  expect(json.session_id).not.toBeNull();
  return readRun(p.home, json.session_id!, json.run_id);
}

/**
 * The expected file name of a node diagnostics record: `<activation>.<attempt>.diagnostics.<hash8>.json`,
 * with the activation sanitized and the hash over `<activation_id>\0<attempt>` (docs/records.md).
 */
export function diagnosticsFileName(activationId: string, attempt: number): string {
  const safe = activationId.replace(/[^A-Za-z0-9._@-]/g, "_");
  const hash = createHash("sha256")
    .update(`${activationId}\u0000${attempt}`, "utf8")
    .digest("hex")
    .slice(0, 8);
  return `${safe}.${attempt}.diagnostics.${hash}.json`;
}

/** A CLI process to signal while it runs. */
export interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  done: Promise<CliResult>;
}

/** Spawns the built CLI like `runCli`, but hands back the child so a test can signal it. */
export function startCli(p: Project, args: string[], env: Record<string, string> = {}): RunningCli {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: p.dir,
    env: { ...process.env, CHRYS_HOME: p.home, NO_COLOR: "1", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
  child.stdin.end("");
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (exitCode, signal) => {
      clearTimeout(guard);
      resolve({
        exitCode,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
  return { child, done };
}

/** Polls until `path` exists; fails after `timeoutMs`, or at once when `process` ended first. */
export async function waitForFile(path: string, running?: RunningCli, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let ended = false;
  void running?.done.then(() => {
    ended = true;
  });
  while (!existsSync(path)) {
    if (ended) {
      const r = await running!.done;
      throw new Error(`the CLI ended before ${path} appeared (exit ${r.exitCode})\n${r.stdout}\n${r.stderr}`);
    }
    if (Date.now() > until) throw new Error(`${path} did not appear within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Python for a node that waits until the CLI that started it is gone or `seconds` have passed, so a test
 * that kills the CLI leaves no sleeping worker behind. It writes `marker` (relative to the workspace) first.
 */
export const WAIT_HELPER = `
import os as _os
import time as _time


def wait_for_parent(marker, seconds):
    parent = _os.getppid()
    open(marker, "w").close()
    until = _time.time() + seconds
    while _os.getppid() == parent and _time.time() < until:
        _time.sleep(0.02)
`;

/**
 * Options for the describes of these files: each CLI run starts Node and Python, and tests run several of
 * them (concurrently within a file), so a loaded machine needs more than the shared 60 s per test.
 */
export const SLOW = { timeout: 240_000 } as const;
