import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decideApproval } from "@icode/agent-profiles/policy";
import { tmpDir, writeTree } from "@icode/test-utils";
import { beforeEach, describe, expect, it } from "vitest";
import type { AgentTool, ToolContext } from "../tool";
import { editFileTool } from "./edit-file";
import { READ_FILE_DEFAULT_LINES, READ_FILE_MAX_LINE_CHARS, readFileTool } from "./read-file";
import { viewImageTool } from "./view-image";
import { writeFileTool } from "./write-file";

let cwd: string;
let outside: string;
let context: ToolContext;
beforeEach(() => {
  cwd = realpathSync(tmpDir());
  outside = realpathSync(tmpDir());
  context = { cwd, signal: new AbortController().signal, toolCallId: "call-1" };
});

const run = (tool: AgentTool, input: unknown) => tool.execute(input, context);
const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");

describe("read_file", () => {
  it("returns numbered lines, a range with offset and limit, and how to read on", async () => {
    writeTree(cwd, { "src/a.txt": "one\ntwo\nthree\nfour\n" });
    expect(await run(readFileTool(), { path: "src/a.txt" })).toEqual({
      ok: true,
      output: "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour",
    });
    expect(await run(readFileTool(), { path: "src/a.txt", offset: 2, limit: 2 })).toEqual({
      ok: true,
      output: "     2\ttwo\n     3\tthree\n[lines 2-3 of 4 shown; read on with offset 4]",
    });
  });

  it("stops at the default line count, cuts long lines, and refuses an offset past the end", async () => {
    const many = Array.from({ length: READ_FILE_DEFAULT_LINES + 5 }, (_, i) => `line ${i + 1}`).join("\n");
    writeTree(cwd, { "many.txt": many, "long.txt": "x".repeat(READ_FILE_MAX_LINE_CHARS + 10) });
    const out = await run(readFileTool(), { path: "many.txt" });
    expect(out.ok && out.output.split("\n")).toHaveLength(READ_FILE_DEFAULT_LINES + 1);
    expect(out.ok && out.output.endsWith(`read on with offset ${READ_FILE_DEFAULT_LINES + 1}]`)).toBe(true);
    const long = await run(readFileTool(), { path: "long.txt" });
    expect(long.ok && long.output).toContain(
      `[line cut at ${READ_FILE_MAX_LINE_CHARS} of ${READ_FILE_MAX_LINE_CHARS + 10} characters]`,
    );
    expect(await run(readFileTool(), { path: "many.txt", offset: 99_999 })).toMatchObject({
      ok: false,
      error: expect.stringContaining("offset 99999 is past its end"),
    });
  });

  it("refuses binary files, folders and missing files, with what to do instead", async () => {
    writeTree(cwd, {
      "bin.dat": Buffer.from([0x41, 0x00, 0x42]),
      "latin.txt": Buffer.from([0xe9, 0x74, 0xe9]),
    });
    mkdirSync(join(cwd, "dir"));
    expect(await run(readFileTool(), { path: "bin.dat" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("binary"),
    });
    expect(await run(readFileTool(), { path: "latin.txt" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("binary"),
    });
    expect(await run(readFileTool(), { path: "dir" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("is a folder"),
    });
    expect(await run(readFileTool(), { path: "nope.txt" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("does not exist"),
    });
  });

  it("answers invalid arguments with the problem, not a throw", async () => {
    const out = await run(readFileTool(), { path: "a", limit: 0, extra: true });
    expect(out.ok).toBe(false);
    expect(!out.ok && out.error).toMatch(/invalid arguments for read_file/);
    expect(!out.ok && out.error).toMatch(/extra/);
  });
});

describe("confinement to the working directory", () => {
  it("refuses paths that leave it lexically, and accepts absolute paths inside it", async () => {
    writeFileSync(join(outside, "secret.txt"), "s");
    writeTree(cwd, { "in.txt": "inside" });
    for (const path of ["../secret.txt", join(outside, "secret.txt"), "/etc/passwd", "a/../../x"]) {
      expect(await run(readFileTool(), { path })).toMatchObject({
        ok: false,
        error: expect.stringContaining("outside the working directory"),
      });
      expect(await run(writeFileTool(), { path, content: "x" })).toMatchObject({ ok: false });
    }
    expect(await run(readFileTool(), { path: join(cwd, "in.txt") })).toEqual({
      ok: true,
      output: "     1\tinside",
    });
  });

  it("refuses to read or write through a link that points out of it, also a link to a folder", async () => {
    writeFileSync(join(outside, "secret.txt"), "s");
    symlinkSync(join(outside, "secret.txt"), join(cwd, "link.txt"));
    symlinkSync(outside, join(cwd, "out"));
    expect(await run(readFileTool(), { path: "link.txt" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("outside"),
    });
    expect(await run(writeFileTool(), { path: "link.txt", content: "x" })).toMatchObject({ ok: false });
    expect(await run(writeFileTool(), { path: "out/new.txt", content: "x" })).toMatchObject({ ok: false });
    expect(await run(editFileTool(), { path: "link.txt", old_string: "s", new_string: "t" })).toMatchObject({
      ok: false,
    });
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("s");
  });

  it("refuses a dangling link, follows links that stay inside", async () => {
    symlinkSync(join(outside, "not-there"), join(cwd, "dangling"));
    writeTree(cwd, { "real/file.txt": "hello" });
    symlinkSync(join(cwd, "real"), join(cwd, "alias"));
    expect(await run(writeFileTool(), { path: "dangling", content: "x" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("symbolic link to something that does not exist"),
    });
    expect(await run(readFileTool(), { path: "alias/file.txt" })).toEqual({
      ok: true,
      output: "     1\thello",
    });
  });
});

describe("write_file and edit_file", () => {
  it("creates a file with its folders, then overwrites it", async () => {
    expect(await run(writeFileTool(), { path: "a/b/c.txt", content: "x\ny\n" })).toEqual({
      ok: true,
      output: "created a/b/c.txt (2 lines, 4 bytes)",
    });
    expect(await run(writeFileTool(), { path: "a/b/c.txt", content: "z" })).toEqual({
      ok: true,
      output: "overwrote a/b/c.txt (1 lines, 1 bytes)",
    });
    expect(readFileSync(join(cwd, "a/b/c.txt"), "utf8")).toBe("z");
    expect(await run(writeFileTool(), { path: "a", content: "z" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("is a folder"),
    });
  });

  it("replaces a unique string and says where; refuses none or several matches and writes nothing", async () => {
    writeTree(cwd, { "f.ts": "const a = 1;\nconst b = 2;\nconst a2 = 1;\n" });
    expect(await run(editFileTool(), { path: "f.ts", old_string: "b = 2", new_string: "b = 3" })).toEqual({
      ok: true,
      output: "edited f.ts: replaced 1 occurrence at line 2",
    });
    const several = await run(editFileTool(), { path: "f.ts", old_string: "= 1;", new_string: "= 9;" });
    expect(several).toEqual({
      ok: false,
      error: expect.stringContaining("occurs 2 times in f.ts (lines 1, 3)"),
    });
    expect(await run(editFileTool(), { path: "f.ts", old_string: "nothing", new_string: "x" })).toMatchObject(
      {
        ok: false,
        error: expect.stringContaining("does not occur"),
      },
    );
    expect(await run(editFileTool(), { path: "f.ts", old_string: "x", new_string: "x" })).toMatchObject({
      ok: false,
    });
    expect(readFileSync(join(cwd, "f.ts"), "utf8")).toBe("const a = 1;\nconst b = 3;\nconst a2 = 1;\n");
    expect(
      await run(editFileTool(), { path: "f.ts", old_string: "= 1;", new_string: "= 9;", replace_all: true }),
    ).toEqual({
      ok: true,
      output: "edited f.ts: replaced 2 occurrences",
    });
    expect(readFileSync(join(cwd, "f.ts"), "utf8")).toBe("const a = 9;\nconst b = 3;\nconst a2 = 9;\n");
  });

  it("keeps a byte-order mark", async () => {
    writeTree(cwd, { "bom.txt": "\uFEFFhello" });
    expect(
      await run(editFileTool(), { path: "bom.txt", old_string: "hello", new_string: "bye" }),
    ).toMatchObject({ ok: true });
    expect(readFileSync(join(cwd, "bom.txt"), "utf8")).toBe("\uFEFFbye");
  });
});

describe("approval targets of file tools", () => {
  it("reports read and write targets with the resolved path and whether the write is inside the Git repository", () => {
    writeTree(cwd, { "notes.txt": "n", ".env": "KEY=1" });
    const write = writeFileTool().target?.({ path: "src/x.ts", content: "" }, context);
    expect(write).toEqual({ type: "write", path: join(cwd, "src/x.ts"), insideGitRepository: false });
    mkdirSync(join(cwd, ".git"));
    expect(editFileTool().target?.({ path: "notes.txt", old_string: "n", new_string: "m" }, context)).toEqual(
      {
        type: "write",
        path: join(cwd, "notes.txt"),
        insideGitRepository: true,
      },
    );
    expect(writeFileTool().target?.({ path: ".git/config", content: "" }, context)).toMatchObject({
      insideGitRepository: false,
    });
    expect(readFileTool().target?.({ path: "notes.txt" }, context)).toEqual({
      type: "read",
      path: join(cwd, "notes.txt"),
    });
  });

  it("names the file a link points to, so a link to .env is a sensitive target", () => {
    writeTree(cwd, { ".env": "KEY=1" });
    symlinkSync(join(cwd, ".env"), join(cwd, "innocent.txt"));
    const target = readFileTool().target?.({ path: "innocent.txt" }, context);
    expect(target).toEqual({ type: "read", path: join(cwd, ".env") });
    const decision = decideApproval({
      approval: { default: "auto", overrides: {} },
      tool: { kind: "filesystem.read", name: "read_file" },
      target,
      mode: "manual",
    });
    expect(decision).toMatchObject({ action: "ask", reason: "sensitive_target" });
  });
});

describe("view_image", () => {
  it("hands a PNG to the model as media and refuses what is not an image", async () => {
    writeTree(cwd, { "pic.png": PNG, "fake.png": "not an image" });
    expect(await run(viewImageTool(), { path: "pic.png" })).toEqual({
      ok: true,
      output: `pic.png (image/png, ${PNG.length} bytes)`,
      media: [{ mediaType: "image/png", data: PNG.toString("base64") }],
    });
    expect(await run(viewImageTool(), { path: "fake.png" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("not a PNG"),
    });
    expect(await run(viewImageTool(), { path: "../x.png" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("outside"),
    });
  });
});
