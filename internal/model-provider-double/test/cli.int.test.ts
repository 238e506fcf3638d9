/*
 * The built CLI (`dist/cli.js`, from `pnpm build`) in its own process, as a benchmark runs it: a script file
 * in, `{"url": …}` as the first stdout line, the real SDK against it, SIGTERM to stop.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { PROVIDER_DOUBLE_CLI, ProviderDoubleStatsSchema, type ScriptFile } from "../src/index";
import { apiCallError, call, caught } from "./sdk";

const StartLineSchema = z.strictObject({
  url: z.string(),
  openaiBaseUrl: z.string(),
  anthropicBaseUrl: z.string(),
  port: z.number().int().min(1),
  pid: z.number().int(),
});

beforeAll(() => {
  if (!existsSync(PROVIDER_DOUBLE_CLI)) {
    throw new Error(
      `${PROVIDER_DOUBLE_CLI} is missing; build first: npx -y pnpm@10.34.9 --filter @icode/model-provider-double build`,
    );
  }
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function scriptFile(script: ScriptFile | string): string {
  const dir = mkdtempSync(join(tmpdir(), "provider-double-cli-"));
  dirs.push(dir);
  const file = join(dir, "script.json");
  writeFileSync(file, typeof script === "string" ? script : JSON.stringify(script));
  return file;
}

async function firstLine(stream: NodeJS.ReadableStream): Promise<string> {
  const lines = createInterface({ input: stream });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  throw new Error("the CLI ended without printing a line");
}

describe("the CLI", () => {
  it("serves a script file in its own process and stops on SIGTERM", async () => {
    const file = scriptFile({
      defaultReply: { type: "text", text: "cli default" },
      scripts: {
        "gpt-cli": [{ type: "text", text: "scripted", usage: { inputTokens: 5, outputTokens: 1 } }],
        "claude-cli": [{ type: "overloaded" }],
      },
    });
    const child = execa(process.execPath, [PROVIDER_DOUBLE_CLI, "--script", file, "--port", "0"], {
      reject: false,
    });
    const start = StartLineSchema.parse(JSON.parse(await firstLine(child.stdout!)));
    expect(start.url).toBe(`http://127.0.0.1:${start.port}`);
    expect(start.pid).toBe(child.pid);

    const openai = createOpenAICompatible({ name: "cli", baseURL: start.openaiBaseUrl, apiKey: "k" });
    expect(await call(openai("gpt-cli"), "generate")).toMatchObject({
      text: "scripted",
      usage: { inputTokens: 5 },
    });
    expect((await call(openai("gpt-cli"), "stream")).text).toBe("cli default");
    const anthropic = createAnthropic({ baseURL: start.anthropicBaseUrl, apiKey: "k" });
    expect(apiCallError(await caught(call(anthropic("claude-cli"), "generate"))).statusCode).toBe(529);

    const stats = ProviderDoubleStatsSchema.parse(await (await fetch(`${start.url}/_double/stats`)).json());
    expect(stats).toEqual({
      requests: 3,
      counts: { "gpt-cli": 2, "claude-cli": 1 },
      inFlight: 0,
      maxInFlight: 1,
    });

    child.kill("SIGTERM");
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
  });

  it("refuses a script that is not one, saying what is wrong, with exit code 1", async () => {
    const file = scriptFile({ scripts: { m: [{ type: "text" }] } } as never);
    const result = await execa(process.execPath, [PROVIDER_DOUBLE_CLI, "--script", file], { reject: false });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`the script file ${file} is not a script: scripts.m.0.text:`);
    expect(result.stderr).toContain("hint: ");
  });

  it("refuses a script file that is not JSON or not there", async () => {
    const bad = await execa(process.execPath, [PROVIDER_DOUBLE_CLI, "--script", scriptFile("{oops")], {
      reject: false,
    });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/is not JSON: /);
    const missing = await execa(process.execPath, [PROVIDER_DOUBLE_CLI, "--script", "/nonexistent/s.json"], {
      reject: false,
    });
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("cannot read the script file /nonexistent/s.json");
  });

  it("refuses bad arguments with exit code 2 and the usage", async () => {
    const result = await execa(process.execPath, [PROVIDER_DOUBLE_CLI, "--port", "http"], { reject: false });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--port must be an integer 0-65535; found "http"');
    const unknown = await execa(process.execPath, [PROVIDER_DOUBLE_CLI, "--verbose"], { reject: false });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("usage: icode-provider-double");
  });
});
