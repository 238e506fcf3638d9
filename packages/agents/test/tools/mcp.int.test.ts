import { join } from "node:path";
import { DEFAULT_INSTRUCTIONS, readMcpCallLog } from "@icode/mcp-server-double";
import { processRunning, tmpDir, waitUntil } from "@icode/test-utils";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentTool, Toolset } from "../../src/tool";
import { buildToolset } from "../../src/tools/build-toolset";
import {
  closeTestServers,
  doubleServer,
  mcpProfile,
  requireDoubleBuilt,
  type Transport,
} from "./mcp-support";
import { callContext, loadProfile, toolsetOptions, type Workspace, workspace } from "./support";

beforeAll(requireDoubleBuilt);

const toolsets: Toolset[] = [];
afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((t) => t.close()));
  await closeTestServers();
});

async function build(ws: Workspace, servers: Record<string, unknown>[], env: Record<string, string> = {}) {
  const loaded = await loadProfile(ws, mcpProfile(servers));
  const toolset = await buildToolset(
    toolsetOptions(ws, loaded, { env: { PATH: process.env["PATH"], HOME: ws.homeDir, ...env } }),
  );
  toolsets.push(toolset);
  return toolset;
}

function find(toolset: Toolset, name: string): AgentTool {
  const tool = toolset.tools.find((t) => t.name === name);
  if (tool === undefined)
    throw new Error(`no tool ${name} among ${toolset.tools.map((t) => t.name).join(", ")}`);
  return tool;
}

describe.each<Transport>(["stdio", "http"])("MCP over %s", (transport) => {
  it("offers every tool and the prompt, exposes the instructions, and answers calls", async () => {
    const ws = workspace();
    const log = join(tmpDir(), "calls.jsonl");
    const toolset = await build(ws, [await doubleServer(transport, "main", { log })]);
    expect(toolset.warnings).toEqual([]);
    expect(toolset.tools.map((t) => [t.name, t.kind, t.activityKind])).toEqual(
      ["echo", "add", "slow", "big", "fail", "count", "prompt_greet"].map((n) => [n, "mcp", "mcp"]),
    );
    expect(find(toolset, "echo").inputSchema).toMatchObject({ type: "object", required: ["text"] });
    expect(toolset.instructions).toEqual([`Instructions of the MCP server "main":\n${DEFAULT_INSTRUCTIONS}`]);
    const ctx = callContext(ws);
    expect(await find(toolset, "echo").execute({ text: "hello" }, ctx)).toEqual({
      ok: true,
      output: "hello",
    });
    expect(await find(toolset, "add").execute({ a: 2, b: 40 }, ctx)).toEqual({ ok: true, output: "42" });
    expect(await find(toolset, "prompt_greet").execute({ name: "Ada" }, ctx)).toEqual({
      ok: true,
      output: "user: Say hello to Ada.",
    });
    expect(find(toolset, "echo").title({ text: "hello" })).toBe('echo {"text":"hello"}');
    expect(readMcpCallLog(log).map((e) => [e.tool, e.transport, e.server])).toEqual([
      ["echo", transport, "main"],
      ["add", transport, "main"],
    ]);
  });

  it("narrows to allowed_tools, applies tool_name_prefix, and warns about an allowed tool the server lacks", async () => {
    const ws = workspace();
    const toolset = await build(ws, [
      await doubleServer(
        transport,
        "main",
        {},
        { allowed_tools: ["echo", "add", "nope"], tool_name_prefix: "dbl" },
      ),
    ]);
    expect(toolset.tools.map((t) => t.name)).toEqual(["dbl_echo", "dbl_add", "dbl_prompt_greet"]);
    expect(toolset.warnings).toEqual([
      {
        code: "mcp_allowed_tool_missing",
        message: expect.stringContaining("lists nope, which the server does not offer"),
      },
    ]);
    expect(await find(toolset, "dbl_echo").execute({ text: "x" }, callContext(ws))).toEqual({
      ok: true,
      output: "x",
    });
  });

  it("offers no prompts with load_prompts off, and no instructions with expose_instructions off", async () => {
    const ws = workspace();
    const toolset = await build(ws, [
      await doubleServer(
        transport,
        "main",
        {},
        { load_prompts: false, expose_instructions: false, allowed_tools: ["echo"] },
      ),
    ]);
    expect(toolset.tools.map((t) => t.name)).toEqual(["echo"]);
    expect(toolset.instructions).toEqual([]);
  });

  it("gives up on a call past the server's timeout and keeps the connection for the next one", async () => {
    const ws = workspace();
    const toolset = await build(ws, [await doubleServer(transport, "main", {}, { timeout: 1 })]);
    const slow = await find(toolset, "slow").execute({ ms: 30_000 }, callContext(ws));
    expect(slow).toEqual({
      ok: false,
      error:
        'MCP server "main" did not answer tools/call slow within 1 s (its timeout); try again or do without it',
    });
    expect(await find(toolset, "echo").execute({ text: "still here" }, callContext(ws))).toEqual({
      ok: true,
      output: "still here",
    });
  });

  it("cuts a result to max_tool_result_tokens with a note, and passes it whole with 0", async () => {
    const ws = workspace();
    const toolset = await build(ws, [
      await doubleServer(transport, "cut", {}, { max_tool_result_tokens: 100, tool_name_prefix: "cut" }),
      await doubleServer(transport, "whole", {}, { max_tool_result_tokens: 0, tool_name_prefix: "whole" }),
    ]);
    const cut = await find(toolset, "cut_big").execute({ chars: 1000 }, callContext(ws));
    expect(cut.ok).toBe(true);
    const text = cut.ok ? cut.output : "";
    expect(text.startsWith("0123456789".repeat(40))).toBe(true);
    expect(text.split("\n")[0]).toHaveLength(400);
    expect(text).toContain(
      '[result truncated: about 250 tokens, more than the 100-token limit of MCP server "cut" (max_tool_result_tokens)]',
    );
    const whole = await find(toolset, "whole_big").execute({ chars: 50_000 }, callContext(ws));
    expect(whole.ok && whole.output).toHaveLength(50_000);
  });

  it("turns a tool error and invalid arguments into error outcomes", async () => {
    const ws = workspace();
    const toolset = await build(ws, [await doubleServer(transport, "main")]);
    expect(await find(toolset, "fail").execute({ message: "disk on fire" }, callContext(ws))).toEqual({
      ok: false,
      error: "disk on fire",
    });
    const invalid = await find(toolset, "add").execute({ a: "two", b: 1 }, callContext(ws));
    expect(invalid).toMatchObject({ ok: false, error: expect.stringContaining("Invalid arguments") });
    expect(await find(toolset, "echo").execute([1, 2], callContext(ws))).toMatchObject({ ok: false });
  });

  it("loads and unloads tools on demand through the control tools (progressive disclosure)", async () => {
    const ws = workspace();
    const toolset = await build(ws, [
      await doubleServer(
        transport,
        "lazy",
        {},
        {
          use_progressive_disclosure: true,
          always_load: ["echo"],
          tool_name_prefix: "p",
          load_prompts: false,
        },
      ),
    ]);
    const names = () => toolset.tools.map((t) => t.name);
    expect(names()).toEqual(["p_list_mcp_tools", "p_load_tool", "p_unload_tool", "p_echo"]);
    const listed = await find(toolset, "p_list_mcp_tools").execute({}, callContext(ws));
    expect(listed.ok && listed.output.split("\n")).toEqual([
      'Tools of MCP server "lazy" (load with p_load_tool, unload with p_unload_tool):',
      expect.stringMatching(/^- p_echo \[loaded\]: /),
      expect.stringMatching(/^- p_add: /),
      expect.stringMatching(/^- p_slow: /),
      expect.stringMatching(/^- p_big: /),
      expect.stringMatching(/^- p_fail: /),
      expect.stringMatching(/^- p_count: /),
    ]);
    expect(
      await find(toolset, "p_load_tool").execute({ names: ["add", "p_count", "zzz"] }, callContext(ws)),
    ).toEqual({
      ok: true,
      output: "loaded p_add, p_count (callable from your next step); not found: zzz",
    });
    expect(names()).toEqual([
      "p_list_mcp_tools",
      "p_load_tool",
      "p_unload_tool",
      "p_echo",
      "p_add",
      "p_count",
    ]);
    expect(await find(toolset, "p_add").execute({ a: 1, b: 2 }, callContext(ws))).toEqual({
      ok: true,
      output: "3",
    });
    expect(await find(toolset, "p_unload_tool").execute({ names: ["p_echo"] }, callContext(ws))).toEqual({
      ok: true,
      output: "unloaded p_echo",
    });
    expect(names()).toEqual(["p_list_mcp_tools", "p_load_tool", "p_unload_tool", "p_add", "p_count"]);
    expect(await find(toolset, "p_load_tool").execute({ names: ["zzz"] }, callContext(ws))).toMatchObject({
      ok: false,
      error: expect.stringContaining("has no tool zzz on offer"),
    });
  });

  it("connects the other servers when one needs a template variable that is missing", async () => {
    const ws = workspace();
    const missing =
      transport === "stdio"
        ? { env: { MCP_DOUBLE_NAME: "{{NOT_SET_ANYWHERE}}" } }
        : { headers: { authorization: "Bearer {{NOT_SET_ANYWHERE}}" } };
    const toolset = await build(ws, [
      await doubleServer(transport, "broken", {}, { ...missing, tool_name_prefix: "broken" }),
      await doubleServer(transport, "fine", {}, { allowed_tools: ["echo"] }),
    ]);
    const field = transport === "stdio" ? "env.MCP_DOUBLE_NAME" : "headers.authorization";
    expect(toolset.warnings).toEqual([
      {
        code: "mcp_server_unavailable",
        message: `MCP server "broken" (${transport}) is not available: ${field} needs the environment variable NOT_SET_ANYWHERE, which is unset or empty; set it for the engine, or remove it from the profile; the agent runs without it`,
      },
    ]);
    expect(toolset.tools.map((t) => t.name)).toEqual(["echo", "prompt_greet"]);
    expect(await find(toolset, "echo").execute({ text: "ok" }, callContext(ws))).toEqual({
      ok: true,
      output: "ok",
    });
  });

  it("keeps the first tool of a name and leaves out a second server's tool of the same name", async () => {
    const ws = workspace();
    const toolset = await build(ws, [
      await doubleServer(transport, "one", {}, { allowed_tools: ["echo"], load_prompts: false }),
      await doubleServer(transport, "two", {}, { allowed_tools: ["echo", "add"], load_prompts: false }),
    ]);
    expect(toolset.tools.map((t) => t.name)).toEqual(["echo", "add"]);
    expect(toolset.warnings).toEqual([
      {
        code: "tool_name_conflict",
        message: expect.stringContaining('tool echo of MCP server "two" would be named echo'),
      },
    ]);
  });
});

describe("MCP over stdio", () => {
  it("resolves env templates from the engine's environment, and passes no other variable of it", async () => {
    const ws = workspace();
    const log = join(tmpDir(), "calls.jsonl");
    const entry = await doubleServer("stdio", "bare");
    const toolset = await build(
      ws,
      [
        {
          ...entry,
          args: [(entry["args"] as string[])[0]], // no flags: the double reads MCP_DOUBLE_* only
          env: { MCP_DOUBLE_NAME: "{{DOUBLE_NAME}}", MCP_DOUBLE_LOG: log, MCP_DOUBLE_TOOLS: "echo" },
        },
      ],
      { DOUBLE_NAME: "from-template", MCP_DOUBLE_INSTRUCTIONS: "leaked from the engine" },
    );
    expect(toolset.tools.map((t) => t.name)).toEqual(["echo", "prompt_greet"]);
    expect(toolset.instructions).toEqual([`Instructions of the MCP server "bare":\n${DEFAULT_INSTRUCTIONS}`]);
    await find(toolset, "echo").execute({ text: "x" }, callContext(ws));
    expect(readMcpCallLog(log)).toEqual([expect.objectContaining({ server: "from-template", tool: "echo" })]);
  });

  it("leaves no process behind after close(), also with a call still running", async () => {
    const ws = workspace();
    const log = join(tmpDir(), "calls.jsonl");
    const toolset = await build(ws, [
      await doubleServer("stdio", "a", { log }, { tool_name_prefix: "a" }),
      await doubleServer("stdio", "b", { log }, { tool_name_prefix: "b" }),
    ]);
    await find(toolset, "a_echo").execute({ text: "1" }, callContext(ws));
    await find(toolset, "b_echo").execute({ text: "2" }, callContext(ws));
    const pids = [...new Set(readMcpCallLog(log).map((e) => e.pid))];
    expect(pids).toHaveLength(2);
    expect(pids.every(processRunning)).toBe(true);
    const pending = find(toolset, "a_slow").execute({ ms: 600_000 }, callContext(ws));
    await toolset.close();
    expect(pids.some(processRunning)).toBe(false);
    expect(await pending).toMatchObject({ ok: false });
  });

  it("cancels a call on the server when the tool call is cancelled", async () => {
    const ws = workspace();
    const log = join(tmpDir(), "calls.jsonl");
    const toolset = await build(ws, [await doubleServer("stdio", "main", { log })]);
    const controller = new AbortController();
    const call = find(toolset, "slow").execute({ ms: 600_000 }, callContext(ws, controller.signal));
    // The server surely runs the slow call once a later call on the same pipe was answered.
    await find(toolset, "echo").execute({ text: "after" }, callContext(ws));
    controller.abort();
    expect(await call).toEqual({
      ok: false,
      error: 'tools/call slow was cancelled; MCP server "main" was told to stop it',
    });
    expect(await waitUntil(() => readMcpCallLog(log).some((e) => e.tool === "slow"), 30_000)).toBe(true);
    expect(readMcpCallLog(log).find((e) => e.tool === "slow")).toMatchObject({ isError: true });
  });

  it("warns about a server that cannot start or exits at once, naming what it wrote to stderr", async () => {
    const ws = workspace();
    const toolset = await build(ws, [
      { name: "ghost", transport: "stdio", command: join(ws.cwd, "no-such-server") },
      {
        name: "quitter",
        transport: "stdio",
        command: process.execPath,
        args: ["-e", "process.stderr.write('missing API key\\n'); process.exit(3)"],
      },
      { name: "odd", transport: "stdio", command: process.execPath, encoding: "cp1252" },
    ]);
    expect(toolset.tools).toEqual([]);
    expect(toolset.warnings.map((w) => w.code)).toEqual([
      "mcp_server_unavailable",
      "mcp_server_unavailable",
      "mcp_server_unavailable",
    ]);
    expect(toolset.warnings[0]?.message).toMatch(/MCP server "ghost" \(stdio\) is not available: .*ENOENT/);
    expect(toolset.warnings[1]?.message).toContain("missing API key");
    expect(toolset.warnings[2]?.message).toContain('encoding "cp1252" is not one Node can read and write');
  });

  it("speaks another stdio encoding that Node knows (latin1)", async () => {
    const ws = workspace();
    const toolset = await build(ws, [
      await doubleServer(
        "stdio",
        "latin",
        {},
        { encoding: "latin1", allowed_tools: ["echo"], load_prompts: false },
      ),
    ]);
    expect(await find(toolset, "echo").execute({ text: "plain ascii" }, callContext(ws))).toEqual({
      ok: true,
      output: "plain ascii",
    });
  });
});
