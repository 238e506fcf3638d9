import { estimateTokens } from "@icode/agent-profiles/policy";
import type { ToolOutcome } from "../../tool";

/** A content block of a tool result or prompt message, as far as we read it. */
type Block = {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; text?: string; blob?: string; mimeType?: string };
};

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The text a model reads for content blocks; images go to `media` when the model can see them. */
export function blocksToText(
  blocks: readonly Block[],
  vision: boolean,
): { text: string; media: { mediaType: string; data: string }[] } {
  const parts: string[] = [];
  const media: { mediaType: string; data: string }[] = [];
  for (const b of blocks) {
    if (b.type === "text") parts.push(b.text ?? "");
    else if (b.type === "image" && vision && b.data !== undefined && IMAGE_TYPES.has(b.mimeType ?? "")) {
      media.push({ mediaType: b.mimeType as string, data: b.data });
      parts.push(`[image ${b.mimeType}]`);
    } else if (b.type === "image" || b.type === "audio") {
      parts.push(`[${b.type} ${b.mimeType ?? ""} left out: this model cannot take it]`.replace("  ", " "));
    } else if (b.type === "resource") {
      const r = b.resource ?? {};
      parts.push(
        r.text !== undefined ? r.text : `[binary resource ${r.uri ?? ""} (${r.mimeType ?? "unknown type"})]`,
      );
    } else if (b.type === "resource_link") {
      parts.push(`[resource ${b.name ?? ""} ${b.uri ?? ""}]`.replace("  ", " "));
    } else {
      parts.push(`[${b.type} content]`);
    }
  }
  return { text: parts.join("\n"), media };
}

/**
 * Cuts a result to `maxTokens` estimated tokens (4 characters a token), with a note that says how much
 * there was and which limit applied; `0` is no limit.
 */
export function limitResult(text: string, maxTokens: number, serverName: string): string {
  if (maxTokens === 0) return text;
  const tokens = estimateTokens(text);
  if (tokens <= maxTokens) return text;
  return (
    `${text.slice(0, maxTokens * 4)}\n[result truncated: about ${tokens} tokens, more than the ` +
    `${maxTokens}-token limit of MCP server "${serverName}" (max_tool_result_tokens)]`
  );
}

/**
 * A `tools/call` result as a tool outcome: its text blocks (and embedded text resources) joined, else its
 * `structuredContent` as JSON; `isError` makes it an error outcome; both are cut to the server's
 * `max_tool_result_tokens`.
 */
export function toolResultOutcome(
  result: { content?: unknown; structuredContent?: unknown; isError?: boolean },
  options: { maxTokens: number; serverName: string; vision: boolean },
): ToolOutcome {
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  let { text, media } = blocksToText(blocks, options.vision);
  if (text === "" && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  const limited = limitResult(text, options.maxTokens, options.serverName);
  if (result.isError === true) {
    return {
      ok: false,
      error: limited === "" ? "the MCP tool reported an error without a message" : limited,
    };
  }
  return media.length > 0 ? { ok: true, output: limited, media } : { ok: true, output: limited };
}
