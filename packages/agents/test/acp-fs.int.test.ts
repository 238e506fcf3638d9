import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createAcpAttempt } from "../src/acp/run-attempt";
import { attemptContext, doubleSetup } from "./support/acp";

const run = createAcpAttempt({ graceMs: 500 });

function fsOutcomes(entries: ReturnType<ReturnType<typeof doubleSetup>["entries"]>) {
  return entries.flatMap((e) =>
    e.event === "client_request" && e.method.startsWith("fs/")
      ? [{ method: e.method, outcome: e.outcome, error: e.error }]
      : [],
  );
}

describe("an ACP agent's file requests", () => {
  it("write a file inside the workspace, creating its folders, and are kept in the transcript", async () => {
    const setup = doubleSetup({
      turns: [{ steps: [{ writeFile: { path: "out/notes.md", content: "# Notes\n" } }] }],
    });
    const { context, transcripts } = await attemptContext(setup);
    const result = await run(context);
    const target = join(setup.workspace, "out", "notes.md");
    expect(result).toEqual({
      status: "completed",
      value: { text: `wrote 8 characters to ${target}`, data: null },
    });
    expect(readFileSync(target, "utf8")).toBe("# Notes\n");
    expect(transcripts[0]?.tool_calls).toMatchObject([
      {
        id: "fs_1",
        name: "fs/write_text_file",
        kind: "edit",
        input: { path: target, characters: 8 },
        status: "completed",
        output: "wrote 8 characters",
        approval: "not_required",
      },
    ]);
  });

  it("refuse a write outside the workspace, and nothing is written", async () => {
    const setup = doubleSetup({
      turns: [
        {
          steps: [
            { writeFile: { path: "../escaped.txt", content: "x" }, onError: [{ message: " (refused)" }] },
          ],
        },
      ],
    });
    const { context, transcripts } = await attemptContext(setup);
    const result = await run(context);
    expect(existsSync(join(setup.dir, "escaped.txt"))).toBe(false);
    expect(result.status).toBe("completed");
    const text = result.status === "completed" ? result.value.text : "";
    expect(text).toContain("is outside the workspace");
    expect(text.endsWith(" (refused)")).toBe(true);
    expect(fsOutcomes(setup.entries())).toMatchObject([{ method: "fs/write_text_file", outcome: "error" }]);
    expect(transcripts[0]?.tool_calls).toMatchObject([{ name: "fs/write_text_file", status: "failed" }]);
  });

  it("refuse a write through a link that leads out of the workspace", async () => {
    const setup = doubleSetup({
      turns: [{ steps: [{ writeFile: { path: "link/owned.txt", content: "x" } }] }],
    });
    symlinkSync(setup.dir, join(setup.workspace, "link"));
    const result = await run((await attemptContext(setup)).context);
    expect(existsSync(join(setup.dir, "owned.txt"))).toBe(false);
    expect(result.status === "completed" && result.value.text).toContain("is outside the workspace");
  });

  it("read a file inside the workspace, by line and limit", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ readFile: { path: "a.txt", line: 2, limit: 2 } }] }] });
    writeFileSync(join(setup.workspace, "a.txt"), "one\ntwo\nthree\nfour\n");
    const result = await run((await attemptContext(setup)).context);
    expect(result).toEqual({ status: "completed", value: { text: "two\nthree", data: null } });
  });

  it("refuse to read outside the workspace and report a missing file", async () => {
    const secret = doubleSetup({ turns: [{ steps: [{ empty: true }] }] });
    writeFileSync(join(secret.dir, "secret.txt"), "hidden");
    const setup = doubleSetup({
      turns: [
        {
          steps: [
            { readFile: { path: join(secret.dir, "secret.txt") } },
            { toolCall: { title: "separator" } },
            { readFile: { path: "missing.txt" } },
          ],
        },
      ],
    });
    const result = await run((await attemptContext(setup)).context);
    const [outside, missing] = fsOutcomes(setup.entries());
    expect(outside).toMatchObject({
      outcome: "error",
      error: expect.stringContaining("is outside the workspace"),
    });
    expect(missing).toMatchObject({ outcome: "error" });
    expect(result.status === "completed" && result.value.text).toMatch(
      /^read failed: Resource not found: .*missing\.txt$/,
    );
    const log = JSON.stringify(setup.entries());
    expect(log).not.toContain("hidden");
  });
});
