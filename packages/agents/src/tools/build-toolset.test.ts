import { TOOL_KINDS } from "@icode/agent-profiles/policy";
import { describe, expect, it } from "vitest";
import { loadProfile, toolsetOptions, workspace } from "../../test/tools/support";
import { buildToolset } from "./build-toolset";
import { ToolsetWarningSchema } from "./codes";

const EVERYTHING = `name: Everything
tools:
  builtins: [filesystem.read, filesystem.write, search, shell, todo, sleep, ask_user, web_search, web_fetch, doc_converter]
sub_agents:
  agents:
    - profile: Explore
      tool_name: read_file
`;

describe("buildToolset", () => {
  it("offers the tools of the enabled built-in kinds in their order, and leaves out the kinds we do not offer with one warning each", async () => {
    const ws = workspace();
    const toolset = await buildToolset(toolsetOptions(ws, await loadProfile(ws, EVERYTHING)));
    expect(toolset.tools.map((t) => [t.name, t.kind])).toEqual([
      ["read_file", "filesystem.read"],
      ["write_file", "filesystem.write"],
      ["edit_file", "filesystem.write"],
      ["grep", "search"],
      ["glob", "search"],
      ["bash", "shell"],
      ["todo_write", "todo"],
      ["sleep", "sleep"],
    ]);
    for (const t of toolset.tools) {
      if (t.kind !== "shell") expect(TOOL_KINDS[t.kind].tools as readonly string[]).toContain(t.name);
      expect(t.inputSchema).toMatchObject({ type: "object" });
      expect(t.inputSchema).not.toHaveProperty("$schema");
    }
    expect(toolset.warnings.map((w) => ToolsetWarningSchema.parse(w))).toEqual([
      { code: "tool_kind_unavailable", message: expect.stringContaining("enables ask_user") },
      { code: "tool_kind_unavailable", message: expect.stringContaining("enables web_search") },
      { code: "tool_kind_unavailable", message: expect.stringContaining("enables web_fetch") },
      { code: "tool_kind_unavailable", message: expect.stringContaining("enables doc_converter") },
      {
        code: "tool_name_conflict",
        message: expect.stringContaining("sub-agent tool read_file is left out"),
      },
    ]);
    expect(toolset.instructions).toEqual([]);
    await toolset.close();
  });

  it("adds view_image only for a model with vision", async () => {
    const ws = workspace();
    const loaded = await loadProfile(ws, "name: Viewer\ntools:\n  builtins: [filesystem.read]\n");
    expect((await buildToolset(toolsetOptions(ws, loaded))).tools.map((t) => t.name)).toEqual(["read_file"]);
    expect(
      (await buildToolset(toolsetOptions(ws, loaded, { vision: true }))).tools.map((t) => t.name),
    ).toEqual(["read_file", "view_image"]);
  });

  it("does not connect a server with enabled: false", async () => {
    const ws = workspace();
    const off = await loadProfile(
      ws,
      "name: Off\ntools:\n  mcp: [{name: off, transport: stdio, command: /no/such/server, enabled: false}]\n",
    );
    const toolset = await buildToolset(toolsetOptions(ws, off));
    expect(toolset.tools).toEqual([]);
    expect(toolset.warnings).toEqual([]);
    await toolset.close();
  });

  it("gives an ACP profile no tools", async () => {
    const ws = workspace();
    const acp = await loadProfile(ws, "name: External\nacp:\n  command: some-agent\n");
    const toolset = await buildToolset(toolsetOptions(ws, acp));
    expect(toolset.tools).toEqual([]);
    expect(toolset.warnings).toEqual([]);
    await toolset.close();
  });
});
