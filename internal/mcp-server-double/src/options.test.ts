import { isWorkflowError } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_INSTRUCTIONS,
  optionsFromArgv,
  optionsToArgv,
  parseMcpDoubleOptions,
  TOOL_NAMES,
} from "./options";

describe("optionsFromArgv", () => {
  it("defaults to every tool, the prompt and the instructions", () => {
    expect(optionsFromArgv([], {})).toEqual({
      options: {
        name: "mcp-double",
        tools: [...TOOL_NAMES],
        prefix: "",
        instructions: DEFAULT_INSTRUCTIONS,
        prompts: true,
      },
      port: 0,
    });
  });

  it("reads the environment, and flags win over it", () => {
    const env = { MCP_DOUBLE_TOOLS: "echo,add", MCP_DOUBLE_PREFIX: "env_", MCP_DOUBLE_LOG: "/tmp/a.jsonl" };
    const { options } = optionsFromArgv(["--prefix", "flag_", "--no-prompts", "--no-instructions"], env);
    expect(options).toMatchObject({
      tools: ["echo", "add"],
      prefix: "flag_",
      prompts: false,
      instructions: null,
      log: "/tmp/a.jsonl",
    });
  });

  it("rejects an unknown tool with options_invalid", () => {
    let caught: unknown;
    try {
      optionsFromArgv(["--tools", "echo,launch"], {});
    } catch (error) {
      caught = error;
    }
    expect(isWorkflowError(caught)).toBe(true);
    expect(caught).toMatchObject({ code: "options_invalid" });
    expect(String((caught as Error).message)).toContain("tools");
  });

  it("rejects a port that is not a number", () => {
    expect(() => optionsFromArgv(["--port", "http"], {})).toThrow(
      expect.objectContaining({ code: "options_invalid" }),
    );
  });

  it("is the inverse of optionsToArgv", () => {
    const input = {
      name: "b",
      tools: ["count" as const],
      prefix: "p_",
      instructions: null,
      prompts: false,
      log: "/x",
    };
    expect(optionsFromArgv(optionsToArgv(input), {}).options).toEqual(parseMcpDoubleOptions(input));
    expect(optionsFromArgv(optionsToArgv({ tools: [] }), {}).options.tools).toEqual([]);
  });
});
