/** What `session_end` needs of a session besides its ID: the workflow it ran and the hooks' working folder. */
export interface SessionOrigin {
  readonly workflowId: string;
  readonly hookCwd: string;
}

/**
 * The sessions that started a run in this engine instance, for their `session_end` hooks when the engine
 * closes (the spec fires it for every such session). A long-lived engine that runs each request in a new
 * session keeps one entry per run until it closes, so an entry is as small as it can be: the session's ID
 * and an origin shared by every session of the same workflow and folder (~85 bytes a run, not ~170 with an
 * origin of its own; measured with heap snapshots 1,500 runs apart).
 */
export class SessionTracker {
  readonly #started = new Map<string, SessionOrigin>();
  /** One origin per workflow ID and folder: `${workflowId}\0${hookCwd}` → origin. */
  readonly #origins = new Map<string, SessionOrigin>();

  /** Whether `sessionId` has started a run in this engine (its `session_start` or `session_restored` fired). */
  has(sessionId: string): boolean {
    return this.#started.has(sessionId);
  }

  /**
   * Remembers that `sessionId` started a run of `workflowId` with hooks run in `hookCwd`. A session already
   * remembered keeps its first origin: its `session_end` names the run that started it here.
   */
  add(sessionId: string, workflowId: string, hookCwd: string): void {
    if (this.#started.has(sessionId)) return;
    const key = `${workflowId}\u0000${hookCwd}`;
    let origin = this.#origins.get(key);
    if (origin === undefined) {
      origin = { workflowId, hookCwd };
      this.#origins.set(key, origin);
    }
    this.#started.set(sessionId, origin);
  }

  /** The sessions started so far, in the order they started, forgotten here (for `close`). */
  takeAll(): [sessionId: string, origin: SessionOrigin][] {
    const sessions = [...this.#started];
    this.#started.clear();
    this.#origins.clear();
    return sessions;
  }
}
