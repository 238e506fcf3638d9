import { describe, expect, it } from "vitest";
import { mcpControlPrefix, mcpControlToolNames, mcpToolName } from "./mcp-names";

describe("MCP tool names (section 3)", () => {
  it.each([
    ["", "search", "search"],
    ["github", "search", "github_search"],
    ["github", "_search", "github_search"],
    ["github", "--search", "github_search"],
    ["gh", "get.issue", "gh_get-issue"],
    ["gh", "a b/c", "gh_a-b-c"],
    ["", "a.b", "a-b"],
    ["", "_x", "_x"],
    ["gh", "__", "gh"],
    ["gh", "é", "gh"],
    ["gh", "x_é", "gh_x_-"],
  ])("prefix %j and name %j give %j", (prefix, name, expected) => {
    expect(mcpToolName(prefix, name)).toBe(expected);
  });

  it.each([
    ["gh", "server", ["gh_list_mcp_tools", "gh_load_tool", "gh_unload_tool"]],
    [
      "",
      "my-server",
      ["mcp_my-2d-server_list_mcp_tools", "mcp_my-2d-server_load_tool", "mcp_my-2d-server_unload_tool"],
    ],
    ["", "a_b", ["mcp_a-5f-b_list_mcp_tools", "mcp_a-5f-b_load_tool", "mcp_a-5f-b_unload_tool"]],
    ["", "ü", ["mcp_-fc-_list_mcp_tools", "mcp_-fc-_load_tool", "mcp_-fc-_unload_tool"]],
  ])("control tools of prefix %j, server %j", (prefix, server, expected) => {
    expect(mcpControlToolNames(prefix, server)).toEqual(expected);
  });

  it("shortens a long derived prefix and ends it in a hash, so every control name fits in 64", () => {
    const long = "a-very-long-server-name-with-many-hyphens-that-goes-on";
    const prefix = mcpControlPrefix("", long);
    expect(prefix).toMatch(/^mcp_a-2d-very-2d-.*_[0-9a-f]{8}$/u);
    expect(prefix).toHaveLength(49);
    for (const name of mcpControlToolNames("", long)) expect(name.length).toBeLessThanOrEqual(64);
    expect(mcpControlPrefix("", `${long}x`)).not.toBe(prefix);
  });
});
