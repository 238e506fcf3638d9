import type { AgentActivity, AskRequest, AskResponse, AttemptIO } from "@icode/workflow-scheduler";

/**
 * The `AttemptIO` of work nested in an attempt (a sub-agent's session): its own abort signal, its
 * activity reported as the parent's, no questions of its own.
 */
export class AbortSignalIO implements AttemptIO {
  constructor(
    readonly signal: AbortSignal,
    private readonly parent: AttemptIO,
  ) {}

  onAbort(listener: (reason: string) => void): void {
    if (this.signal.aborted) {
      listener(String(this.signal.reason));
      return;
    }
    this.signal.addEventListener("abort", () => listener(String(this.signal.reason)), { once: true });
  }

  emit(text: string): void {
    this.parent.emit(text);
  }

  ask(_request: AskRequest): Promise<AskResponse> {
    return Promise.resolve({ status: "unavailable" });
  }

  activity(activity: AgentActivity): void {
    this.parent.activity(activity);
  }

  conditionsStarted(): void {}
}
