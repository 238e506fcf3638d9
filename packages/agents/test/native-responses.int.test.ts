/*
 * `api_style: responses`: the native loop on OpenAI's Responses API through `@ai-sdk/openai`, plain and
 * streaming, against a loopback Responses server: a text reply, and a tool loop whose result goes back as
 * a `function_call_output` item.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNativeRunner } from "../src/native/runner";
import { attempt, MODES, noteTool, noWait, profileYaml, setup, toolsetOf } from "./native-harness";
import { type ResponsesServer, startResponsesServer } from "./responses-server";

let server: ResponsesServer;
beforeAll(async () => {
  server = await startResponsesServer();
});
afterAll(() => server.close());

describe.each(MODES)("responses, $name", ({ stream }) => {
  const model = () =>
    `name: responses\nprovider: openai\napi_style: responses\nmodel_id: gpt-test\nbase_url: ${server.baseUrl}\napi_key: "{{KEY}}"\nmax_output_tokens: 700\nstream: ${stream}\n`;

  it("answers with the reply's text and reports usage", async () => {
    const s = await setup({
      models: { r: model() },
      agents: { Tester: profileYaml("Tester", ["instructions: Be brief."]) },
    });
    const runner = createNativeRunner({ buildToolset: toolsetOf([]).build, sleep: noWait });
    const before = server.bodies.length;
    server.script([{ type: "text", text: "Hello from responses." }]);
    const { result, io } = await attempt(runner, s, { model: "r", env: { KEY: "sk-resp" } });
    expect(result).toEqual({ status: "completed", value: { text: "Hello from responses.", data: null } });
    expect(io.text).toBe("Hello from responses.");
    expect(io.of("usage").at(-1)?.usage).toMatchObject({ input_tokens: 12, output_tokens: 3 });
    const body = server.bodies[before]!;
    expect(body).toMatchObject({ model: "gpt-test", max_output_tokens: 700 });
    expect((body["input"] as unknown[])[0]).toMatchObject({ role: "system", content: "Be brief." });
    expect(server.headers[before]!["authorization"]).toBe("Bearer sk-resp");
    expect(body["stream"] === true).toBe(stream);
  });

  it("runs a tool loop: the result goes back as function_call_output", async () => {
    const s = await setup({ models: { r: model() }, agents: { Tester: profileYaml("Tester") } });
    const note = noteTool();
    const runner = createNativeRunner({ buildToolset: toolsetOf([note.tool]).build, sleep: noWait });
    const before = server.bodies.length;
    server.script([
      { type: "calls", calls: [{ name: "write_note", arguments: { note: "r1" } }] },
      { type: "text", text: "Noted." },
    ]);
    const { result } = await attempt(runner, s, { model: "r", env: { KEY: "k" } });
    expect(result).toMatchObject({ status: "completed", value: { text: "Noted." } });
    expect(note.runs).toEqual([{ note: "r1" }]);
    expect(server.bodies).toHaveLength(before + 2);
    const input = server.bodies[before + 1]!["input"] as {
      type?: string;
      output?: unknown;
      call_id?: string;
    }[];
    expect(input.filter((i) => i.type === "function_call_output")).toEqual([
      expect.objectContaining({ call_id: `call_${before + 1}_0`, output: 'wrote "r1"' }),
    ]);
  });
});
