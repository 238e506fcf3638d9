import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunFinish, RunRecorder } from "../src/index";

/** A new temporary folder; remove it with `rmSync(dir, { recursive: true, force: true })`. */
export function tempDir(prefix = "icode-records-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Writes one event at once (the recorder queues it, then stores what is queued). */
export function append(recorder: RunRecorder, event: Parameters<RunRecorder["write"]>[0]): void {
  recorder.write(event);
  void recorder.flushPending();
}

/** The end of a run as the engine writes it: outputs, then close. Synchronous for the file store. */
export function finish(recorder: RunRecorder, result: RunFinish): void {
  void recorder.writeOutputs(result);
  void recorder.close();
}
