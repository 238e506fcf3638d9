import type { Client } from "@modelcontextprotocol/client";
import { expect } from "vitest";
import { DEFAULT_INSTRUCTIONS, PROMPT_NAME, TOOL_NAMES } from "../../src/index";
import { resultText } from "./clients";

/**
 * Lists and calls every tool of a default double through `client`, checks prompts and instructions, and
 * returns how many tool calls it made (for the call log).
 */
export async function exerciseEveryTool(client: Client): Promise<number> {
  expect(client.getInstructions()).toBe(DEFAULT_INSTRUCTIONS);

  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
  const schemaOf = (name: string) => tools.find((t) => t.name === name)?.inputSchema;
  expect(schemaOf("echo")).toMatchObject({
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
  });
  expect(schemaOf("add")).toMatchObject({ required: ["a", "b"] });
  expect(schemaOf("slow")).toMatchObject({ properties: { ms: { type: "integer" } }, required: ["ms"] });
  expect(schemaOf("big")).toMatchObject({ properties: { chars: { type: "integer" } }, required: ["chars"] });
  expect(schemaOf("fail")).toMatchObject({ required: ["message"] });
  expect(schemaOf("count")).toMatchObject({ type: "object" });

  const echo = await client.callTool({ name: "echo", arguments: { text: "hello there" } });
  expect(echo).toMatchObject({ content: [{ type: "text", text: "hello there" }] });
  expect(echo.isError).not.toBe(true);

  const add = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  expect(resultText(add)).toBe("42");
  expect(add.structuredContent).toEqual({ sum: 42 });

  const slow = await client.callTool({ name: "slow", arguments: { ms: 5 } });
  expect(resultText(slow)).toBe("waited 5 ms");

  const big = await client.callTool({ name: "big", arguments: { chars: 300_000 } });
  const bigText = resultText(big);
  expect(bigText).toHaveLength(300_000);
  expect(bigText.slice(0, 12)).toBe("012345678901");

  const fail = await client.callTool({ name: "fail", arguments: { message: "disk on fire" } });
  expect(fail).toMatchObject({ isError: true, content: [{ type: "text", text: "disk on fire" }] });

  const first = await client.callTool({ name: "count", arguments: {} });
  const second = await client.callTool({ name: "count", arguments: {} });
  expect(Number(resultText(second))).toBe(Number(resultText(first)) + 1);
  expect(second.structuredContent).toMatchObject({ count: Number(resultText(second)) });

  const invalid = await client.callTool({ name: "add", arguments: { a: "two", b: 1 } });
  expect(invalid.isError).toBe(true);
  expect(resultText(invalid)).toContain("Invalid arguments");

  const { prompts } = await client.listPrompts();
  expect(prompts).toEqual([expect.objectContaining({ name: PROMPT_NAME })]);
  expect(prompts[0]?.arguments).toEqual([expect.objectContaining({ name: "name", required: true })]);
  const prompt = await client.getPrompt({ name: PROMPT_NAME, arguments: { name: "Ada" } });
  expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Say hello to Ada." } }]);

  return 7; // echo, add, slow, big, fail, count ×2 (the rejected add never reaches its handler)
}
