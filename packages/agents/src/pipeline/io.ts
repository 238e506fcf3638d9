import type { AgentActivity, AskRequest, AskResponse, AttemptIO } from "@icode/workflow-scheduler";

/**
 * The `AttemptIO` of one pipeline node attempt: the executor's abort signal, activity as `activity`
 * events. Pipeline nodes ask no questions (`ask` is unavailable); `emit` text is shown as text activity.
 */
export class NodeAttemptIO implements AttemptIO {
  constructor(
    readonly signal: AbortSignal,
    private readonly report: (activity: AgentActivity) => void,
  ) {}

  onAbort(listener: (reason: string) => void): void {
    const reason = () => {
      const r: unknown = this.signal.reason;
      return typeof r === "string" ? r : r instanceof Error ? r.message : "canceled";
    };
    if (this.signal.aborted) {
      listener(reason());
      return;
    }
    this.signal.addEventListener("abort", () => listener(reason()), { once: true });
  }

  emit(text: string): void {
    this.report({ kind: "text", text });
  }

  ask(_request: AskRequest): Promise<AskResponse> {
    return Promise.resolve({ status: "unavailable" });
  }

  activity(activity: AgentActivity): void {
    try {
      this.report(activity);
    } catch {
      // onEvent must not throw; if it does, the attempt goes on.
    }
  }

  conditionsStarted(): void {}
}
