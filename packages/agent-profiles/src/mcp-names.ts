import { createHash } from "node:crypto";

/** Longest tool name a model provider accepts. */
export const MAX_TOOL_NAME_LENGTH = 64;
/** Longest prefix that leaves room for `_list_mcp_tools` within 64 characters. */
export const MAX_DISCLOSURE_PREFIX_LENGTH = MAX_TOOL_NAME_LENGTH - "_list_mcp_tools".length;
/** `tool_name_prefix`: letters, digits, `_` and `-`, first and last a letter or digit. */
export const TOOL_NAME_PREFIX_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?$/;

/**
 * The name a model sees for an MCP tool: characters other than letters, digits, `_` and `-` become `-`;
 * with a prefix, leading `_` and `-` are removed and the name becomes `<prefix>_<name>` (just the prefix if
 * nothing is left). `mcpToolName("github", "_search")` is `github_search`.
 */
export function mcpToolName(prefix: string, name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_-]/gu, "-");
  if (prefix === "") return safe;
  const rest = safe.replace(/^[_-]+/u, "");
  return rest === "" ? prefix : `${prefix}_${rest}`;
}

/**
 * The prefix of the progressive-disclosure control tools: the server's `tool_name_prefix`, or `mcp_` plus
 * the server name with every character other than an ASCII letter or digit written as `-<hex code>-`
 * (`my-server` gives `mcp_my-2d-server`). A derived prefix longer than 49 characters is cut to 40 and
 * ends in `_` and the first 8 hex digits of the SHA-256 of the server name, so all three names fit in 64.
 */
export function mcpControlPrefix(prefix: string, serverName: string): string {
  if (prefix !== "") return prefix;
  const escaped = Array.from(serverName, (ch) =>
    /^[A-Za-z0-9]$/u.test(ch) ? ch : `-${(ch.codePointAt(0) as number).toString(16)}-`,
  ).join("");
  const full = `mcp_${escaped}`;
  if (full.length <= MAX_DISCLOSURE_PREFIX_LENGTH) return full;
  const hash = createHash("sha256").update(serverName, "utf8").digest("hex").slice(0, 8);
  return `${full.slice(0, MAX_DISCLOSURE_PREFIX_LENGTH - 9)}_${hash}`;
}

/** `<prefix>_list_mcp_tools`, `<prefix>_load_tool`, `<prefix>_unload_tool` for one server. */
export function mcpControlToolNames(prefix: string, serverName: string): [string, string, string] {
  const p = mcpControlPrefix(prefix, serverName);
  return [`${p}_list_mcp_tools`, `${p}_load_tool`, `${p}_unload_tool`];
}
