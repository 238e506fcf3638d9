import { z } from "zod";

/**
 * Questions a node asks the user (`NodeContext.ask`) and the answers it gets, as they cross the scheduler:
 * the executor hands an `AskRequest` to `AttemptIO.ask`, the scheduler records a summary and forwards it to
 * the host's `AskHandler`, and returns the `AskResponse`. A plain-string `ask("...")` is one question with
 * no options. The field names match the spec's `Question`, `Option` and `Answer`.
 */

const OptionSchema = z.object({ label: z.string(), description: z.string() });
export type Option = z.infer<typeof OptionSchema>;

export const QuestionSchema = z.object({
  question: z.string(),
  header: z.string(),
  options: z.array(OptionSchema),
  multi_select: z.boolean(),
});
export type Question = z.infer<typeof QuestionSchema>;

const AskRequestSchema = z.object({ questions: z.array(QuestionSchema).min(1).max(5) });
export type AskRequest = z.infer<typeof AskRequestSchema>;

export const AnswerSchema = z.object({ selected: z.array(z.string()), text: z.string() });
export type Answer = z.infer<typeof AnswerSchema>;

/**
 * `answered`: one answer per question, in question order. `unavailable`: this front end cannot ask (the
 * CLI); the executor fails the attempt with `ask_unavailable`. `cancelled`: the attempt or run ended first
 * (also when the host's ask handler failed: the scheduler then fails the attempt itself).
 */
const AskResponseSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("answered"), answers: z.array(AnswerSchema) }),
  z.object({ status: z.literal("unavailable") }),
  z.object({ status: z.literal("cancelled") }),
]);
export type AskResponse = z.infer<typeof AskResponseSchema>;

/** Question and answer summaries in events are cut to this many characters (spec, `NodeContext.ask`). */
export const SUMMARY_LIMIT = 512;

/** Cuts `text` to at most `limit` characters (code points), ending a cut text with `…`. */
export function cutText(text: string, limit: number = SUMMARY_LIMIT): string {
  if (text.length <= limit) return text;
  const points = Array.from(text);
  if (points.length <= limit) return text;
  return points.slice(0, limit - 1).join("") + "…";
}

/** `Which areas? [API | Storage | UI]; Deploy now?`, cut to 512 characters. */
export function summarizeQuestions(request: AskRequest): string {
  const parts = request.questions.map((q) => {
    const head = q.header === "" ? q.question : `${q.header}: ${q.question}`;
    return q.options.length === 0 ? head : `${head} [${q.options.map((o) => o.label).join(" | ")}]`;
  });
  return cutText(parts.join("; "));
}

/** `API, UI — also docs; (skipped)`, cut to 512 characters; `(unavailable)` / `(cancelled)` otherwise. */
export function summarizeResponse(response: AskResponse): string {
  if (response.status !== "answered") return `(${response.status})`;
  const parts = response.answers.map((a) => {
    const picked = a.selected.join(", ");
    if (picked === "" && a.text === "") return "(skipped)";
    if (picked === "") return a.text;
    return a.text === "" ? picked : `${picked} — ${a.text}`;
  });
  return cutText(parts.join("; "));
}

/**
 * Names one `ctx.ask` of a run (a dialog of 1–5 questions): `<activation_id>/<attempt>/<question_id>`, for
 * example `review@iter#1/2/1`. Front ends answer it with `answer(askId, answers)`.
 */
export function askIdOf(activationId: string, attempt: number, questionId: number): string {
  return `${activationId}/${attempt}/${questionId}`;
}

/** A question waiting for its answer: what `inspect` shows and `answer` replies to. */
export const PendingAskSchema = z.object({
  ask_id: z.string(),
  node_id: z.string(),
  activation_id: z.string(),
  attempt: z.number().int().min(1),
  question_id: z.number().int().min(1),
  /** The full questions, not cut (the event log keeps only a summary). */
  questions: z.array(QuestionSchema),
});
export type PendingAsk = z.infer<typeof PendingAskSchema>;

/**
 * Checks answers against the questions they answer, as the spec's `Answer` defines them: one answer per
 * question; `selected` names offered labels only, each once, and at most one for a single-select question.
 * The answers come back with `selected` in option order (as `Answer.selected` is); otherwise what is wrong,
 * for people.
 */
export function checkAnswers(
  questions: readonly Question[],
  answers: unknown,
): { ok: true; answers: Answer[] } | { ok: false; message: string } {
  const parsed = z.array(AnswerSchema).safeParse(answers);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
    return {
      ok: false,
      message: `the answers are not a list of { selected: string[], text: string }${at}: ${issue?.message ?? "invalid"}`,
    };
  }
  const list = parsed.data;
  if (list.length !== questions.length) {
    return {
      ok: false,
      message: `${questions.length} question(s) were asked but ${list.length} answer(s) were given; give one answer per question, in order`,
    };
  }
  const normalized: Answer[] = [];
  for (let i = 0; i < list.length; i++) {
    const question = questions[i]!;
    const answer = list[i]!;
    const labels = question.options.map((o) => o.label);
    const where = `answer ${i + 1} ("${cutText(question.question, 60)}")`;
    const unknown = answer.selected.filter((label) => !labels.includes(label));
    if (unknown.length > 0) {
      const offered =
        labels.length === 0 ? "it offers no options" : `it offers ${labels.map((l) => `"${l}"`).join(", ")}`;
      return {
        ok: false,
        message: `${where} selects ${unknown.map((l) => `"${l}"`).join(", ")}, which the question does not offer; ${offered}`,
      };
    }
    if (new Set(answer.selected).size !== answer.selected.length) {
      return { ok: false, message: `${where} selects a label more than once` };
    }
    if (!question.multi_select && answer.selected.length > 1) {
      return {
        ok: false,
        message: `${where} selects ${answer.selected.length} labels, but the question is single-select: select at most one`,
      };
    }
    normalized.push({
      selected: labels.filter((label) => answer.selected.includes(label)),
      text: answer.text,
    });
  }
  return { ok: true, answers: normalized };
}
