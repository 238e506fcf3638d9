import { z } from "zod";

/**
 * Questions a node asks the user (`NodeContext.ask`) and the answers it gets, as they cross the scheduler:
 * the executor hands an `AskRequest` to `AttemptIO.ask`, the scheduler records a summary and forwards it to
 * the host's `AskHandler`, and returns the `AskResponse`. A plain-string `ask("...")` is one question with
 * no options. The field names match the spec's `Question`, `Option` and `Answer`.
 */

export const OptionSchema = z.object({ label: z.string(), description: z.string() });
export type Option = z.infer<typeof OptionSchema>;

export const QuestionSchema = z.object({
  question: z.string(),
  header: z.string(),
  options: z.array(OptionSchema),
  multi_select: z.boolean(),
});
export type Question = z.infer<typeof QuestionSchema>;

export const AskRequestSchema = z.object({ questions: z.array(QuestionSchema).min(1).max(5) });
export type AskRequest = z.infer<typeof AskRequestSchema>;

export const AnswerSchema = z.object({ selected: z.array(z.string()), text: z.string() });
export type Answer = z.infer<typeof AnswerSchema>;

/**
 * `answered`: one answer per question, in question order. `unavailable`: this front end cannot ask (the
 * CLI); the executor fails the attempt with `ask_unavailable`. `cancelled`: the attempt or run ended first.
 */
export const AskResponseSchema = z.discriminatedUnion("status", [
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
