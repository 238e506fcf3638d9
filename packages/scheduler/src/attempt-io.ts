import { type Activation, Call } from "./activation";
import type { AgentActivity } from "./activity";
import type { AttemptIO } from "./executor";
import type { AskRequest, AskResponse } from "./interaction";

/** What an attempt's callbacks reach in the scheduler; each call carries the attempt's token. */
export interface AttemptHost {
  onEmit(act: Activation, token: number, text: string): void;
  onActivity(act: Activation, token: number, activity: AgentActivity): void;
  onAsk(act: Activation, token: number, request: AskRequest, signal: AbortSignal): Promise<AskResponse>;
  onConditionsStarted(act: Activation, token: number): void;
}

/**
 * The `AttemptIO` of one attempt: its abort signal, and callbacks routed to the scheduler with the attempt's
 * token, so that calls of an attempt that has ended (timed out, cancelled, superseded) are dropped there.
 */
export class AttemptChannel extends Call implements AttemptIO {
  constructor(
    private readonly host: AttemptHost,
    private readonly act: Activation,
    private readonly token: number,
  ) {
    super();
  }
  emit(text: string): void {
    this.host.onEmit(this.act, this.token, text);
  }
  ask(request: AskRequest): Promise<AskResponse> {
    return this.host.onAsk(this.act, this.token, request, this.signal);
  }
  activity(activity: AgentActivity): void {
    this.host.onActivity(this.act, this.token, activity);
  }
  conditionsStarted(): void {
    this.host.onConditionsStarted(this.act, this.token);
  }
}
