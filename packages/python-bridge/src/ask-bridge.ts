import type { PendingCall } from "./call";
import type { Answer, Question, ToWorkerMessage } from "./protocol";

const ASK_UNAVAILABLE =
  "ctx.ask() is not available here: this run cannot ask the user (the CLI does not support interaction)";

/**
 * Answers one `ask` of a pending call: hands the questions to the call's `onAsk` and sends back its answers,
 * or `ask_unavailable` (no `onAsk`, it resolved `null`, it failed). The question's signal aborts when the
 * call settles first; an answer that comes after the call settled is not sent.
 */
export function forwardAsk(
  call: PendingCall,
  askId: number,
  questions: Question[],
  send: (message: ToWorkerMessage) => void,
): void {
  const reply = (answers: Answer[] | null, why: string = ASK_UNAVAILABLE) => {
    call.asks?.delete(askId);
    if (call.done) return;
    if (answers === null) {
      send({ type: "answer", id: call.id, ask_id: askId, ok: false, error: "ask_unavailable", message: why });
    } else {
      send({ type: "answer", id: call.id, ask_id: askId, ok: true, answers });
    }
  };
  const onAsk = call.options.onAsk;
  if (onAsk === undefined) {
    reply(null);
    return;
  }
  const controller = new AbortController();
  call.asks ??= new Map();
  call.asks.set(askId, controller);
  let asked: Promise<Answer[] | null>;
  try {
    asked = onAsk(questions, controller.signal);
  } catch (error) {
    reply(null, `asking the user failed: ${describe(error)}`);
    return;
  }
  asked.then(
    (answers) => reply(answers),
    (error) => reply(null, `asking the user failed: ${describe(error)}`),
  );
}

/** Settles every question still being asked for a call that settled. */
export function abortAsks(call: PendingCall): void {
  if (call.asks === null) return;
  for (const controller of call.asks.values()) controller.abort();
  call.asks = null;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
