import { readFileSync } from "node:fs";
import { dirname, sep } from "node:path";
import { type Diagnostic, diagnostic } from "@icode/workflow-errors";

/** How long a timed-out load gets to dump its stacks before it is killed. */
const DUMP_WAIT_MS = 500;
/** The loading thread's frame in a dump: once it is in, the dump is complete enough. */
const LOADER_FRAME = /_loader\.py", line \d+ in load_workflow/;

/**
 * Asks a worker whose load ran out of time where it is (`SIGUSR1`: faulthandler dumps every thread's stack
 * to fd 2, which the caller appends to `dump`), then calls `done` once the loading thread's stack is in or
 * `DUMP_WAIT_MS` passed. Without the signal (Windows, a dead process) `done` is called at once.
 */
export function requestStackDump(
  child: { kill(signal: NodeJS.Signals): boolean },
  dump: readonly string[],
  done: () => void,
): void {
  if (process.platform === "win32" || !child.kill("SIGUSR1")) {
    done();
    return;
  }
  const started = Date.now();
  const poll = setInterval(() => {
    if (LOADER_FRAME.test(dump.join("")) || Date.now() - started > DUMP_WAIT_MS) {
      clearInterval(poll);
      setTimeout(done, 20); // the rest of the dump, still in the pipe
    }
  }, 10);
}

/** The `load_timeout` diagnostic, pointing at the line the load was stuck on when `dump` shows it. */
export function loadTimeoutDiagnostic(
  dump: string,
  load: { entry: string; packageDir: string | null },
  timeoutMs: number,
): Diagnostic {
  const where = stuckAt(dump, load.packageDir ?? dirname(load.entry));
  return diagnostic({
    code: "load_timeout",
    stage: "load",
    message: `loading the workflow did not finish within ${timeoutMs / 1000} seconds${where ? " (stopped here)" : ""}`,
    file: where?.file ?? load.entry,
    line: where?.line ?? null,
    source_line: where ? sourceLine(where.file, where.line) : null,
    notes: where?.notes ?? [],
    hint:
      "Top-level code runs while loading: keep it to imports, definitions and building the workflow, " +
      "and move slow work (network, large files, waiting) into node functions.",
  });
}

interface StuckAt {
  file: string;
  line: number;
  notes: { message: string; file: string | null; line: number | null }[];
}

/**
 * Where a timed-out load was: from the faulthandler dump of the worker's threads, the stack of the thread
 * running the load (the one in `_loader.py`), its innermost frame in the workflow's folder, and how that
 * frame was reached (innermost first), as in the worker's own load diagnostics.
 */
function stuckAt(dump: string, root: string): StuckAt | null {
  const blocks = dump.split(/^(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):$/m);
  const loading = blocks.find((block) => LOADER_FRAME.test(block));
  if (loading === undefined) return null;
  const frames = [...loading.matchAll(/^\s*File "(.+)", line (\d+) in (.+)$/gm)]
    .map((m) => ({ file: m[1]!, line: Number(m[2]), name: m[3]!.trim() }))
    .filter((frame) => frame.file === root || frame.file.startsWith(root.endsWith(sep) ? root : root + sep));
  const [inner, ...outer] = frames;
  if (inner === undefined) return null;
  const notes: StuckAt["notes"] = [];
  let below = inner;
  for (const frame of outer) {
    notes.push({
      message: frame.name === "<module>" && below.name === "<module>" ? "imported from" : "called from",
      file: frame.file,
      line: frame.line,
    });
    below = frame;
  }
  return { file: inner.file, line: inner.line, notes };
}

function sourceLine(file: string, line: number): string | null {
  try {
    const text = readFileSync(file, "utf8").split(/\r?\n/)[line - 1];
    return text === undefined ? null : text;
  } catch {
    return null;
  }
}
