import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";
import { type InvokeRequest, type PythonWorker, type StartWorkerOptions, startWorker } from "../src/index";

let resolved: string | undefined;

/**
 * The real interpreter behind `python3`, or `ICODE_TEST_PYTHON` when set (to run the suite on another
 * version), resolved once: a pyenv shim costs 150 ms+ per start.
 */
export function python(): string {
  resolved ??= execFileSync(
    process.env.ICODE_TEST_PYTHON ?? "python3",
    ["-c", "import os, sys; print(os.path.realpath(sys.executable))"],
    { encoding: "utf8" },
  ).trim();
  return resolved;
}

let columns: boolean | undefined;

/** Whether `python()` reports columns (Python 3.11 and later). */
export function hasColumns(): boolean {
  columns ??=
    execFileSync(python(), ["-c", "import sys; print(sys.version_info >= (3, 11))"], {
      encoding: "utf8",
    }).trim() === "True";
  return columns;
}

/** Another installed interpreter older than 3.11 (columns are then unknown), if this machine has one. */
export function olderPython(): string | null {
  for (const candidate of [
    "/root/.pyenv/versions/3.9.18/bin/python3.9",
    "/usr/bin/python3.9",
    "/usr/bin/python3.10",
  ]) {
    try {
      const out = execFileSync(candidate, ["-c", "import sys; print(sys.version_info[:2] < (3, 11))"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      });
      if (out.trim() === "True") return candidate;
    } catch {
      // not installed
    }
  }
  return null;
}

export interface Workspace {
  /** The workspace (the worker's cwd). */
  dir: string;
  /**
   * The bytecode cache folder given to the worker: shared by the tests unless `ownCache` is asked for. With
   * `PYTHONPYCACHEPREFIX` set, Python compiles the standard library it imports into that folder too, which
   * costs a cold worker half a second; the engine keeps its folder across runs for the same reason.
   */
  cache: string;
  /** Absolute path of a file in the workspace. */
  path(relative: string): string;
  write(relative: string, content: string): string;
}

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SHARED_CACHE = join(tmpdir(), "icode-bridge-tests-pycache");

/** A temporary workspace holding `files` (relative path → content), removed after the test. */
export function workspace(
  files: Record<string, string> = {},
  options: { ownCache?: boolean } = {},
): Workspace {
  const root = mkdtempSync(join(tmpdir(), "icode-bridge-"));
  const dir = join(root, "ws");
  const cache = options.ownCache ? join(root, "pycache") : SHARED_CACHE;
  mkdirSync(dir);
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const ws: Workspace = {
    dir,
    cache,
    path: (relative) => join(dir, relative),
    write(relative, content) {
      const path = join(dir, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
      return path;
    },
  };
  for (const [relative, content] of Object.entries(files)) ws.write(relative, content);
  return ws;
}

/**
 * The environment of test workers: this one without `PYTHONDONTWRITEBYTECODE` (set on some machines), so
 * that bytecode really is written and the tests about where it goes can fail.
 */
export function workerEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.PYTHONDONTWRITEBYTECODE;
  return env;
}

/** Starts a worker in `ws`, closed after the test. */
export async function start(ws: Workspace, options: Partial<StartWorkerOptions> = {}): Promise<PythonWorker> {
  const worker = await startWorker({
    python: python(),
    cwd: ws.dir,
    cacheDir: ws.cache,
    env: workerEnv(),
    ...options,
  });
  cleanups.push(() => worker.close());
  return worker;
}

/** Starts a worker and loads `entry` (relative to `ws`), expecting success. */
export async function loaded(
  ws: Workspace,
  entry: string,
  packageDir: string | null = null,
): Promise<PythonWorker> {
  const worker = await start(ws);
  const result = await worker.load({
    entry: ws.path(entry),
    packageDir: packageDir === null ? null : ws.path(packageDir),
  });
  if (!result.ok) throw new Error(`load failed: ${JSON.stringify(result.diagnostics, null, 2)}`);
  return worker;
}

type NodeRequest = Extract<InvokeRequest, { kind: "node" }>;

/** A node invocation with defaults: no timeout, no conditions. */
export function node(id: string, text = "", extra: Partial<NodeRequest> = {}): NodeRequest {
  return {
    kind: "node",
    node: id,
    input: { text, data: null },
    timeout_ms: null,
    conditions: null,
    conditions_timeout_ms: null,
    ...extra,
  };
}

/** Every `__pycache__` folder under `dir`. */
export function pycacheFolders(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (entry.name === "__pycache__") found.push(join(path, entry.name));
      else walk(join(path, entry.name));
    }
  };
  walk(dir);
  return found;
}

/** The source of a small workflow module: `body` goes between the builder and `build()`. */
export function workflowSource(body: string, head = ""): string {
  return `from chrys.workflows import WorkflowBuilder, WorkflowValue, NodeContext, SourceValue\n${head}\nwf = WorkflowBuilder("Test")\n${body}\nworkflow = wf.build()\n`;
}
