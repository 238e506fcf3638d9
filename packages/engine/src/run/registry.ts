import type { RunController, RunStatus } from "./run-handle";

/** Ended runs kept for `runs()` and `getRun()` (their records stay in the store whatever this says). */
const RECENT = 50;

/**
 * The runs an engine drives, by ID: every run still going, and the last few that ended. An ended run's
 * handle keeps only its status; what it held (worker, recorder) was let go when it settled, so an engine
 * that runs thousands of requests keeps a bounded amount per run.
 */
export class RunRegistry {
  private readonly active = new Map<string, RunController>();
  private readonly recent: RunController[] = [];

  add(run: RunController): void {
    this.active.set(run.runId, run);
  }

  ended(run: RunController): void {
    if (!this.active.delete(run.runId)) return;
    this.recent.push(run);
    if (this.recent.length > RECENT) this.recent.shift();
  }

  get(runId: string): RunController | undefined {
    return this.active.get(runId) ?? this.recent.find((run) => run.runId === runId);
  }

  /** Going runs first (in the order they were requested), then the recent ones, newest last. */
  list(): RunStatus[] {
    return [...this.active.values(), ...this.recent].map((run) => run.status());
  }
}
