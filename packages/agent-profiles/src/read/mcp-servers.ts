import {
  MAX_DISCLOSURE_PREFIX_LENGTH,
  MAX_TOOL_NAME_LENGTH,
  mcpControlToolNames,
  mcpToolName,
} from "../mcp-names";
import { describeValue } from "../problems";
import { McpHttpServerSchema, McpStdioServerSchema } from "../schema/agent-profile";
import { childPath } from "../yaml-source";
import { DROP, type Reader, readList, readObject, warnLiteralTemplates } from "./fields";

const STDIO_ONLY = ["command", "args", "env", "encoding"];
const HTTP_ONLY = [
  "url",
  "headers",
  "resolve_header_templates",
  "verify_ssl",
  "bypass_proxy",
  "terminate_on_close",
];

/** Reads `tools.mcp`: every rule is a load error, except fields of the other transport (ignored). */
export function readMcpList(r: Reader, value: unknown, field: string): unknown {
  const names = new Map<string, number>();
  return readList(r, value, field, "error", (item, at, index) => {
    const entry = readMcpEntry(r, item, at);
    if (entry === DROP) return DROP;
    const name = (entry as { name?: unknown }).name;
    if (typeof name === "string") {
      const key = name.trim().toLowerCase();
      const first = names.get(key);
      if (first !== undefined) {
        r.sink.error(
          "config_field_invalid",
          childPath(at, "name"),
          `MCP server name "${name.trim()}" is already used by tools.mcp[${first}] (names are compared ignoring case); ${r.errorEffect}`,
        );
      } else names.set(key, index);
    }
    return entry;
  });
}

function readMcpEntry(r: Reader, item: Record<string, unknown>, at: string): unknown {
  const transport = item["transport"];
  if (transport !== "stdio" && transport !== "http") {
    const found =
      transport === undefined || transport === null ? "is missing" : `is ${describeValue(transport)}`;
    r.sink.error(
      "config_field_invalid",
      childPath(at, "transport"),
      `transport ${found}; expected "stdio" or "http"; ${r.errorEffect}`,
    );
    return DROP;
  }
  const schema = transport === "stdio" ? McpStdioServerSchema : McpHttpServerSchema;
  const other = transport === "stdio" ? HTTP_ONLY : STDIO_ONLY;
  const own: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(item)) {
    if (other.includes(key)) {
      r.sink.warn(
        "config_key_ignored",
        childPath(at, key),
        `"${key}" applies only to ${transport === "stdio" ? "http" : "stdio"} servers and is ignored for a ${transport} server`,
      );
    } else own[key] = v;
  }
  const before = r.sink.problems.length;
  const accepted = readObject(r, own, at, { schema, invalid: "error" });
  for (const key of ["command", "args", "url"]) {
    warnLiteralTemplates(
      r,
      accepted[key],
      childPath(at, key),
      transport === "stdio" ? "env values" : "header values (with resolve_header_templates)",
    );
  }
  if (r.sink.problems.slice(before).some((p) => p.severity === "error")) return accepted;
  const parsed = schema.safeParse(accepted);
  if (parsed.success) checkMcpNames(r, parsed.data, at);
  return accepted;
}

/** Prefix length, disclosure limits and name collisions of one MCP entry (all load errors). */
function checkMcpNames(
  r: Reader,
  s: {
    name: string;
    tool_name_prefix: string;
    allowed_tools: string[] | null;
    use_progressive_disclosure: boolean;
    always_load: string[];
  },
  at: string,
): void {
  const fail = (key: string, message: string) =>
    r.sink.error("config_field_invalid", childPath(at, key), `${message}; ${r.errorEffect}`);
  const prefix = s.tool_name_prefix;
  if (s.use_progressive_disclosure && prefix.length > MAX_DISCLOSURE_PREFIX_LENGTH) {
    fail(
      "tool_name_prefix",
      `with use_progressive_disclosure the prefix may have at most ${MAX_DISCLOSURE_PREFIX_LENGTH} characters (it has ${prefix.length}), so that ${prefix}_list_mcp_tools fits in ${MAX_TOOL_NAME_LENGTH}`,
    );
  } else if (prefix.length > MAX_TOOL_NAME_LENGTH) {
    fail(
      "tool_name_prefix",
      `the prefix may have at most ${MAX_TOOL_NAME_LENGTH} characters (it has ${prefix.length})`,
    );
  }
  if (s.use_progressive_disclosure && s.allowed_tools !== null && s.allowed_tools.length === 0) {
    fail(
      "use_progressive_disclosure",
      "allowed_tools: [] offers no tools, so there is nothing to load on demand; remove one of the two",
    );
  }
  if (!s.use_progressive_disclosure && s.always_load.length > 0) {
    fail(
      "always_load",
      "always_load applies only with use_progressive_disclosure: true; remove it or turn that on",
    );
  }
  if (s.allowed_tools !== null) {
    const outside = s.always_load.filter((t) => !(s.allowed_tools as string[]).includes(t));
    if (outside.length > 0)
      fail(
        "always_load",
        `always_load names ${outside.map((t) => `"${t}"`).join(", ")}, which allowed_tools does not allow`,
      );
  }
  const seen = new Map<string, string>();
  // With progressive disclosure the control tools take three names of their own.
  const controls: string[] = s.use_progressive_disclosure ? mcpControlToolNames(prefix, s.name) : [];
  for (const [key, list] of [
    ["allowed_tools", s.allowed_tools ?? []],
    ["always_load", s.always_load],
  ] as const) {
    list.forEach((tool, index) => {
      const full = mcpToolName(prefix, tool);
      const where = childPath(childPath(at, key), index);
      if (full.length > MAX_TOOL_NAME_LENGTH) {
        r.sink.error(
          "config_field_invalid",
          where,
          `the tool name ${full} has ${full.length} characters, over the limit of ${MAX_TOOL_NAME_LENGTH}; shorten tool_name_prefix; ${r.errorEffect}`,
        );
      }
      const earlier = seen.get(full);
      if (controls.includes(full)) {
        r.sink.error(
          "config_field_invalid",
          where,
          `"${tool}" of server "${s.name}" becomes ${full}, the name of one of its on-demand loading tools; ${r.errorEffect}. Change tool_name_prefix or leave it out.`,
        );
      } else if (earlier !== undefined && earlier !== tool) {
        r.sink.error(
          "config_field_invalid",
          where,
          `"${tool}" and "${earlier}" of server "${s.name}" both become the tool ${full}; ${r.errorEffect}. Change tool_name_prefix or list only one of them.`,
        );
      } else seen.set(full, tool);
    });
  }
}
