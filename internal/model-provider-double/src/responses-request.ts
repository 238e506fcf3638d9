import { z } from "zod";
import { describeIssues } from "./errors";
import { contentText, emptyPrompt, type Prompt, parseArguments } from "./prompt";
import type { HttpErrorReply } from "./reply";
import type { RequestReading } from "./wire";

/*
 * A Responses request as `@ai-sdk/openai` 3.0 sends it (`convertToOpenAIResponsesInput`): `instructions`,
 * `input` as a string or as items (messages with `role` and text parts, `function_call` with `call_id` and
 * JSON-string `arguments`, `function_call_output` with `call_id` and `output`, `item_reference` to an item
 * the server stored), `tools` of type function, `max_output_tokens`. It is checked the way OpenAI checks it
 * where a client bug would show: a reference to an item never stored (or stored with `store: false`), a tool
 * output without its call, a call without its output.
 */

/** An output item the double sent, kept for `item_reference`; `persisted` is false when the request said `store: false`. */
export type StoredItem = { item: unknown; persisted: boolean };
export type ItemLookup = (id: string) => StoredItem | undefined;

const ROLES = ["user", "assistant", "system", "developer"] as const;

const MessageItemSchema = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(ROLES),
  content: z.union([z.string(), z.array(z.unknown())]),
});

const FunctionCallItemSchema = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
});

const FunctionCallOutputItemSchema = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string(),
  output: z.union([z.string(), z.array(z.unknown())]),
});

const ToolSchema = z.looseObject({ type: z.string(), name: z.string().optional() });

const NOT_PERSISTED =
  " Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.";

function refusal(status: number, message: string): HttpErrorReply {
  return { type: "http_error", status, message, errorType: "invalid_request_error" };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads one input item into the prompt; a refusal when OpenAI would reject it. */
function readItem(prompt: Prompt, entry: unknown, at: string): HttpErrorReply | null {
  const type = isRecord(entry) ? entry["type"] : undefined;
  if (type === undefined || type === "message") {
    const parsed = MessageItemSchema.safeParse(entry);
    if (!parsed.success) return refusal(400, `Invalid '${at}' (a message): ${describeIssues(parsed.error)}.`);
    const { role, content } = parsed.data;
    if (role === "system" || role === "developer") prompt.instructions.push(contentText(content));
    else prompt.items.push({ type: "message", role, text: contentText(content) });
    return null;
  }
  if (type === "function_call") {
    const parsed = FunctionCallItemSchema.safeParse(entry);
    if (!parsed.success)
      return refusal(400, `Invalid '${at}' (a function_call): ${describeIssues(parsed.error)}.`);
    const { call_id, name, arguments: args } = parsed.data;
    prompt.items.push({ type: "tool_call", id: call_id, name, arguments: parseArguments(args) });
    return null;
  }
  if (type === "function_call_output") {
    const parsed = FunctionCallOutputItemSchema.safeParse(entry);
    if (!parsed.success)
      return refusal(400, `Invalid '${at}' (a function_call_output): ${describeIssues(parsed.error)}.`);
    prompt.items.push({
      type: "tool_result",
      toolCallId: parsed.data.call_id,
      content: contentText(parsed.data.output),
      isError: false,
    });
  }
  // Other items (reasoning, hosted tool calls) are for the model alone: they stay in the body only.
  return null;
}

/** Every tool output answers a call of this input, and every call has its output, as OpenAI requires. */
function checkPairs(prompt: Prompt): HttpErrorReply | null {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const item of prompt.items) {
    if (item.type === "tool_call") calls.add(item.id);
    if (item.type === "tool_result") {
      if (!calls.has(item.toolCallId))
        return refusal(400, `No tool call found for function call output with call_id ${item.toolCallId}.`);
      answered.add(item.toolCallId);
    }
  }
  const unanswered = [...calls].find((id) => !answered.has(id));
  return unanswered === undefined
    ? null
    : refusal(400, `No tool output found for function call ${unanswered}.`);
}

export function readResponsesRequest(
  body: Readonly<Record<string, unknown>>,
  lookup: ItemLookup,
): RequestReading {
  const prompt = emptyPrompt();
  const refuse = (reply: HttpErrorReply): RequestReading => ({ prompt, refusal: reply });
  for (const field of ["previous_response_id", "conversation"]) {
    if (body[field] != null) {
      return refuse(
        refusal(
          400,
          `The provider double keeps no conversations: \`${field}\` is not supported; send the whole conversation in \`input\`.`,
        ),
      );
    }
  }
  if (typeof body["instructions"] === "string") prompt.instructions.push(body["instructions"]);
  const tools = Array.isArray(body["tools"]) ? body["tools"] : [];
  prompt.tools = tools.flatMap((tool) => {
    const parsed = ToolSchema.safeParse(tool);
    if (!parsed.success) return [];
    return [parsed.data.type === "function" ? (parsed.data.name ?? "") : parsed.data.type];
  });
  const max = body["max_output_tokens"];
  prompt.maxOutputTokens = typeof max === "number" ? max : null;

  const input = body["input"];
  if (typeof input === "string") {
    prompt.items.push({ type: "message", role: "user", text: input });
    return { prompt, refusal: null };
  }
  if (input === undefined || input === null) return { prompt, refusal: null };
  if (!Array.isArray(input)) {
    return refuse(
      refusal(
        400,
        `Invalid type for 'input': expected a string or an array of input items, but got ${typeof input}.`,
      ),
    );
  }
  for (const [index, raw] of input.entries()) {
    const at = `input[${index}]`;
    let entry: unknown = raw;
    if (isRecord(raw) && raw["type"] === "item_reference") {
      const id = raw["id"];
      if (typeof id !== "string") return refuse(refusal(400, `Missing required parameter: '${at}.id'.`));
      const stored = lookup(id);
      if (stored?.persisted !== true) {
        return refuse(
          refusal(404, `Item with id '${id}' not found.${stored === undefined ? "" : NOT_PERSISTED}`),
        );
      }
      entry = stored.item;
    }
    const refused = readItem(prompt, entry, at);
    if (refused !== null) return refuse(refused);
  }
  const unpaired = checkPairs(prompt);
  return unpaired === null ? { prompt, refusal: null } : refuse(unpaired);
}
