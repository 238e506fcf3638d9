import { appendFile, mkdir, readFile, rename, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PipelineError } from "../codes";
import type { PipelineStore } from "../store/store";
import type { AttemptEnd, StoredPipelineEvent } from "./events";

/** The run's event log mirror in its folder. */
export const EVENTS_FILE = "events.jsonl";

/** `nodes/<id>/attempt-<n>`, relative to the run's folder. */
export function attemptDir(nodeId: string, attempt: number): string {
  return join("nodes", nodeId, `attempt-${attempt}`);
}

async function writeAtomic(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, text);
  await rename(temp, file);
}

/** The `seq` of an events.jsonl line, or null when the line is not a stored event. */
function seqOf(line: string): number | null {
  try {
    const seq = (JSON.parse(line) as Partial<StoredPipelineEvent> | null)?.seq;
    return typeof seq === "number" && Number.isSafeInteger(seq) && seq >= 1 ? seq : null;
  } catch {
    return null;
  }
}

/**
 * A run's records on disk (docs/records.md, "Pipeline runs"): per attempt `prompt.md` and `handoff.json` or
 * `error.json`, written whole (temporary file, then rename), and `events.jsonl`, an append-only mirror of
 * the store's events table, one `StoredPipelineEvent` a line in `seq` order. The store is the truth: a new
 * driver first appends what the mirror misses (and drops a torn last line a killed driver left).
 */
export class RunRecords {
  private lastSeq = 0;
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown = undefined;
  /** Folders made so far: each is made once, not before every write (the pipeline bench's profile). */
  private readonly made = new Set<string>();

  constructor(readonly runDir: string) {}

  private async folder(dir: string): Promise<void> {
    if (this.made.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.made.add(dir);
  }

  /** Brings `events.jsonl` up to the store's events. */
  async sync(store: PipelineStore, runId: string): Promise<void> {
    try {
      await this.catchUp(store, runId);
    } catch (error) {
      throw this.failed("bring events.jsonl up to the store", error);
    }
    await this.flush();
  }

  private async catchUp(store: PipelineStore, runId: string): Promise<void> {
    await this.folder(this.runDir);
    const file = join(this.runDir, EVENTS_FILE);
    let text = "";
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const end = text.lastIndexOf("\n") + 1;
    if (end < text.length) await truncate(file, Buffer.byteLength(text.slice(0, end)));
    const lines = text
      .slice(0, end)
      .split("\n")
      .filter((line) => line !== "");
    const last = lines.length === 0 ? 0 : seqOf(lines[lines.length - 1]!);
    if (last === null) {
      // Not a line this mirror wrote (edited, or another file): the store is the truth, write it again.
      await writeAtomic(file, "");
      this.lastSeq = 0;
    } else this.lastSeq = last;
    this.appendEvents(await store.listEvents(runId, { fromSeq: this.lastSeq + 1 }));
  }

  /** Appends events not yet mirrored, in order (in the background: `flush` waits and reports a failure). */
  appendEvents(events: readonly StoredPipelineEvent[]): void {
    this.enqueue(`append to ${EVENTS_FILE}`, async () => {
      const fresh = events.filter((e) => e.seq > this.lastSeq);
      if (fresh.length === 0) return;
      await this.folder(this.runDir);
      await appendFile(join(this.runDir, EVENTS_FILE), fresh.map((e) => `${JSON.stringify(e)}\n`).join(""));
      this.lastSeq = fresh[fresh.length - 1]!.seq;
    });
  }

  writePrompt(nodeId: string, attempt: number, prompt: string): void {
    this.enqueue(`write ${join(attemptDir(nodeId, attempt), "prompt.md")}`, async () => {
      const dir = join(this.runDir, attemptDir(nodeId, attempt));
      await this.folder(dir);
      await writeAtomic(join(dir, "prompt.md"), prompt);
    });
  }

  /** `handoff.json` when the attempt left a handoff; `error.json` (status, error, reason) when it did not succeed. */
  writeOutcome(end: AttemptEnd): void {
    this.enqueue(`write the outcome of ${attemptDir(end.node_id, end.attempt)}`, async () => {
      const dir = join(this.runDir, attemptDir(end.node_id, end.attempt));
      await this.folder(dir);
      if (end.handoff !== null)
        await writeAtomic(join(dir, "handoff.json"), `${JSON.stringify(end.handoff, null, 2)}\n`);
      if (end.status !== "succeeded") {
        const body = { status: end.status, error: end.error, reason: end.reason };
        await writeAtomic(join(dir, "error.json"), `${JSON.stringify(body, null, 2)}\n`);
      }
    });
  }

  /** Waits for every write so far; rejects with the first one that failed (`pipeline_records_failed`). */
  async flush(): Promise<void> {
    await this.chain;
    if (this.failure !== undefined) throw this.failure;
  }

  /** Runs `task` after the writes before it; the first failure is kept for `flush`. */
  private enqueue(what: string, task: () => Promise<void>): void {
    this.chain = this.chain.then(task).catch((error: unknown) => {
      this.failure ??= this.failed(what, error);
    });
  }

  private failed(what: string, error: unknown): PipelineError {
    const detail = error instanceof Error ? error.message : String(error);
    return new PipelineError(
      "pipeline_records_failed",
      `could not ${what} in the run's folder ${this.runDir}: ${detail}`,
      {
        hint: "free disk space or fix the folder's permissions; the store still holds the whole run (icode pipeline inspect), and the next driver rewrites events.jsonl from it",
        cause: error,
      },
    );
  }
}
