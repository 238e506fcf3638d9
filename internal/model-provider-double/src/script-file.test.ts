import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadScriptFile } from "./script-file";

const dir = mkdtempSync(join(tmpdir(), "provider-double-script-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

describe("loadScriptFile", () => {
  it("reads a default reply and scripts per route", async () => {
    const script = {
      defaultReply: { type: "text", text: "ok" },
      scripts: {
        "model-a": [
          { type: "rate_limited", retryAfterMs: 5 },
          { type: "hang", sendHeaders: true },
        ],
      },
    };
    expect(await loadScriptFile(file("good.json", JSON.stringify(script)))).toEqual(script);
  });

  it.each([
    ["missing.json", null, "cannot read the script file"],
    ["broken.json", "{", "is not JSON: "],
    [
      "unknown-key.json",
      JSON.stringify({ replies: [] }),
      'is not a script: (root): Unrecognized key: "replies"',
    ],
    [
      "bad-reply.json",
      JSON.stringify({ scripts: { m: [{ type: "function" }] } }),
      "is not a script: scripts.m.0.type",
    ],
  ])("refuses %s with invalid_script_file", async (name, content, message) => {
    const path = content === null ? join(dir, name) : file(name, content);
    await expect(loadScriptFile(path)).rejects.toMatchObject({
      code: "invalid_script_file",
      message: expect.stringContaining(message),
      hint: expect.any(String),
    });
  });
});
