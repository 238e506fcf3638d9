import type { Activation } from "./activation";
import type { AskHandler, NodeError } from "./executor";
import {
  type Answer,
  type AskRequest,
  type AskResponse,
  askIdOf,
  checkAnswers,
  type PendingAsk,
  summarizeQuestions,
  summarizeResponse,
} from "./interaction";
import type { ControlResult } from "./result";

/** What the ask desk needs of the scheduler it serves. */
export interface AskHost {
  /** Whether `token` still names the attempt in flight on `act`. */
  isCurrent(act: Activation, token: number): boolean;
  /** Runs `fn` through the scheduler's pump (never nested). */
  enter(fn: () => void): void;
  recordQuestion(act: Activation, ask: PendingAsk, summary: string): void;
  recordAnswer(act: Activation, ask: PendingAsk, status: AskStatus, summary: string): void;
  /** Fails the attempt `token` of `act` with `error` (the host's ask handler failed). */
  failAttempt(act: Activation, token: number, error: NodeError): void;
}

type AskStatus = "answered" | "unavailable" | "cancelled" | "failed";

interface Waiting {
  readonly ask: PendingAsk;
  readonly act: Activation;
  readonly token: number;
  readonly request: AskRequest;
  readonly resolve: (response: AskResponse) => void;
}

/**
 * The asks of one run (`ctx.ask`): each is recorded as a `question` event, then waits for the first valid
 * answer from the host's handler or from `answer()`, or ends with its attempt. Answers are checked against
 * the questions (offered labels, one label for single-select); a caller's wrong answer is refused and the ask
 * keeps waiting, a handler's failure fails the attempt with `ask_handler_failed`.
 */
export class AskDesk {
  private readonly waiting = new Map<string, Waiting>();

  constructor(
    private readonly host: AskHost,
    private readonly handler: AskHandler | undefined,
    private readonly acceptAnswers: boolean,
  ) {}

  ask(act: Activation, token: number, request: AskRequest, signal: AbortSignal): Promise<AskResponse> {
    if (!this.host.isCurrent(act, token)) return Promise.resolve({ status: "cancelled" });
    const questionId = ++act.questions;
    const ask: PendingAsk = {
      ask_id: askIdOf(act.id, act.attempt, questionId),
      node_id: act.n.id,
      activation_id: act.id,
      attempt: act.attempt,
      question_id: questionId,
      questions: request.questions,
    };
    this.host.enter(() => this.host.recordQuestion(act, ask, summarizeQuestions(request)));
    if (this.handler === undefined && !this.acceptAnswers) {
      const response: AskResponse = { status: "unavailable" };
      this.host.enter(() => this.host.recordAnswer(act, ask, "unavailable", summarizeResponse(response)));
      return Promise.resolve(response);
    }
    return new Promise<AskResponse>((resolve) => {
      const waiting: Waiting = { ask, act, token, request, resolve };
      this.waiting.set(ask.ask_id, waiting);
      act.asks++;
      if (this.handler !== undefined) this.callHandler(this.handler, waiting, signal);
    });
  }

  /** `WorkflowRun.answer`: settles a waiting ask with answers that fit it, else refuses and it keeps waiting. */
  answer(askId: string, answers: readonly Answer[]): ControlResult {
    const waiting = this.waiting.get(askId);
    if (waiting === undefined || !this.host.isCurrent(waiting.act, waiting.token)) {
      return {
        ok: false,
        code: "unknown_question",
        message: `no question ${askId} is waiting for an answer (it was never asked, is answered, or its attempt ended)`,
      };
    }
    const checked = checkAnswers(waiting.request.questions, answers);
    if (!checked.ok) return { ok: false, code: "answer_invalid", message: checked.message };
    this.settle(waiting, { status: "answered", answers: checked.answers });
    return { ok: true };
  }

  /** The asks waiting now, in the order they were asked. */
  pending(): PendingAsk[] {
    return [...this.waiting.values()].map((w) => w.ask);
  }

  /** The attempt of `act` ended (finished, timed out, cancelled, skipped): its asks end too. */
  attemptEnded(act: Activation): void {
    if (act.asks === 0) return;
    for (const waiting of [...this.waiting.values()]) {
      if (waiting.act === act) this.settle(waiting, { status: "cancelled" }, true);
    }
  }

  private callHandler(handler: AskHandler, waiting: Waiting, signal: AbortSignal): void {
    const { act, ask } = waiting;
    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(
        handler(waiting.request, {
          nodeId: act.n.id,
          activationId: act.id,
          attempt: ask.attempt,
          askId: ask.ask_id,
          signal,
        }),
      );
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (response) => this.fromHandler(waiting, response),
      (error: unknown) =>
        this.handlerFailed(
          waiting,
          `the ask handler failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
    );
  }

  private fromHandler(waiting: Waiting, response: unknown): void {
    if (this.waiting.get(waiting.ask.ask_id) !== waiting) return; // answered or ended meanwhile
    const status = (response as { status?: unknown } | null)?.status;
    if (status === "unavailable" || status === "cancelled") {
      this.settle(waiting, { status });
      return;
    }
    if (status !== "answered") {
      this.handlerFailed(
        waiting,
        `the ask handler returned ${describe(response)}; expected { status: "answered", answers } or { status: "unavailable" }`,
      );
      return;
    }
    const checked = checkAnswers(waiting.request.questions, (response as { answers?: unknown }).answers);
    if (checked.ok) this.settle(waiting, { status: "answered", answers: checked.answers });
    else
      this.handlerFailed(waiting, `the ask handler's answers do not fit the questions: ${checked.message}`);
  }

  private handlerFailed(waiting: Waiting, message: string): void {
    if (this.waiting.get(waiting.ask.ask_id) !== waiting) return;
    this.remove(waiting);
    const { act, token, ask } = waiting;
    this.host.enter(() => {
      if (!this.host.isCurrent(act, token)) return;
      this.host.recordAnswer(act, ask, "failed", "(failed)");
      this.host.failAttempt(act, token, {
        class: "ask_handler_failed",
        message,
        retryable: false,
        traceback: null,
      });
    });
    waiting.resolve({ status: "cancelled" });
  }

  /** Ends a waiting ask with `response`; `inPump`: already inside the scheduler's pump (an attempt's end). */
  private settle(waiting: Waiting, response: AskResponse, inPump = false): void {
    this.remove(waiting);
    const { act, token, ask } = waiting;
    const record = () => {
      if (inPump || this.host.isCurrent(act, token)) {
        this.host.recordAnswer(act, ask, response.status, summarizeResponse(response));
      }
    };
    if (inPump) record();
    else this.host.enter(record);
    waiting.resolve(response);
  }

  private remove(waiting: Waiting): void {
    if (this.waiting.delete(waiting.ask.ask_id)) waiting.act.asks--;
  }
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  try {
    const text = JSON.stringify(value);
    return text === undefined ? typeof value : text.length > 80 ? `${text.slice(0, 79)}…` : text;
  } catch {
    return typeof value;
  }
}
