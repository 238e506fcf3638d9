import { realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir, writeTree } from "@icode/test-utils";
import { beforeEach, describe, expect, it } from "vitest";
import type { AgentTool, ToolContext } from "../tool";
import { GLOB_MAX_RESULTS, globTool } from "./glob";
import { globFilter, globToRegExp } from "./glob-pattern";
import { grepTool } from "./grep";

let cwd: string;
let context: ToolContext;
beforeEach(() => {
  cwd = realpathSync(tmpDir());
  context = { cwd, signal: new AbortController().signal, toolCallId: "call-1" };
});
const run = (tool: AgentTool, input: unknown) => tool.execute(input, context);
const lines = (out: Awaited<ReturnType<AgentTool["execute"]>>) =>
  out.ok ? out.output.split("\n") : [out.error];

describe("globToRegExp", () => {
  it.each([
    ["*.ts", "a.ts", true],
    ["*.ts", "src/a.ts", false],
    ["src/**/*.ts", "src/a.ts", true],
    ["src/**/*.ts", "src/x/y/a.ts", true],
    ["src/**/*.ts", "lib/a.ts", false],
    ["**/*.md", "README.md", true],
    ["**/*.md", "docs/a/b.md", true],
    ["docs/**", "docs", true],
    ["docs/**", "docs/a/b.txt", true],
    ["docs/**", "docsx/a", false],
    ["**", "any/thing", true],
    ["a?c", "abc", true],
    ["a?c", "a/c", false],
    ["[ab]x", "bx", true],
    ["[!ab]x", "cx", true],
    ["[!ab]x", "ax", false],
    ["*.{ts,tsx}", "a.tsx", true],
    ["*.{ts,tsx}", "a.js", false],
    ["{src,lib}/**/*.{ts,js}", "lib/q/z.js", true],
    ["a\\*b", "a*b", true],
    ["a\\*b", "axb", false],
    ["{a", "{a", true],
    ["file.(1).txt", "file.(1).txt", true],
    [".env*", ".env.local", true],
  ])("%s on %s is %s", (glob, path, expected) => {
    expect(globToRegExp(glob).test(path)).toBe(expected);
  });

  it("reads a grep filter without a slash as a name pattern at any depth", () => {
    expect(globFilter("*.ts")("deep/down/a.ts")).toBe(true);
    expect(globFilter("src/*.ts")("deep/src/a.ts")).toBe(false);
    expect(globFilter("src/*.ts")("src/a.ts")).toBe(true);
  });
});

describe("glob", () => {
  it("lists matching files sorted by path, relative to the working directory, never inside .git", async () => {
    writeTree(cwd, {
      "src/b.ts": "",
      "src/a.ts": "",
      "src/deep/c.ts": "",
      "src/d.js": "",
      ".git/hooks/x.ts": "",
      "README.md": "",
    });
    expect(lines(await run(globTool(), { pattern: "**/*.ts" }))).toEqual([
      "src/a.ts",
      "src/b.ts",
      "src/deep/c.ts",
    ]);
    expect(lines(await run(globTool(), { pattern: "*.ts", path: "src" }))).toEqual(["src/a.ts", "src/b.ts"]);
    expect(await run(globTool(), { pattern: "*.py" })).toEqual({
      ok: true,
      output: "no files match *.py in .",
    });
  });

  it("stops at its result limit and says how many more there are", async () => {
    const tree: Record<string, string> = {};
    for (let i = 0; i < GLOB_MAX_RESULTS + 7; i++) tree[`f/${String(i).padStart(4, "0")}.txt`] = "";
    writeTree(cwd, tree);
    const out = lines(await run(globTool(), { pattern: "f/*.txt" }));
    expect(out).toHaveLength(GLOB_MAX_RESULTS + 1);
    expect(out.at(-1)).toBe("[7 more files match; narrow the pattern]");
  });

  it("refuses a path outside the working directory and patterns that climb out", async () => {
    expect(await run(globTool(), { pattern: "*", path: ".." })).toMatchObject({
      ok: false,
      error: expect.stringContaining("outside"),
    });
    expect(await run(globTool(), { pattern: "../*" })).toMatchObject({ ok: false });
  });

  it("does not follow a link to a folder outside; lists a linked file inside", async () => {
    const outside = realpathSync(tmpDir());
    writeFileSync(join(outside, "secret.ts"), "");
    symlinkSync(outside, join(cwd, "out"));
    writeTree(cwd, { "real.ts": "" });
    symlinkSync(join(cwd, "real.ts"), join(cwd, "alias.ts"));
    expect(lines(await run(globTool(), { pattern: "**/*.ts" }))).toEqual(["alias.ts", "real.ts"]);
  });
});

describe("grep", () => {
  beforeEach(() => {
    writeTree(cwd, {
      "src/app.ts": "import x from 'y';\nexport function main() {\n  return TODO;\n}\n",
      "src/util.js": "// TODO: later\nconst todo = 1;\n",
      "docs/readme.md": "Nothing to do\n",
      ".git/config": "TODO in git\n",
      "image.bin": Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0x00, 0x01]),
    });
  });

  it("finds matching lines as path:line: text, in path order, skipping .git and binary files", async () => {
    expect(lines(await run(grepTool(), { pattern: "TODO" }))).toEqual([
      "src/app.ts:3:   return TODO;",
      "src/util.js:1: // TODO: later",
      "[1 binary files skipped]",
    ]);
  });

  it("narrows by glob and path, ignores case on request", async () => {
    expect(lines(await run(grepTool(), { pattern: "todo", glob: "*.js", case_insensitive: true }))).toEqual([
      "src/util.js:1: // TODO: later",
      "src/util.js:2: const todo = 1;",
    ]);
    expect(lines(await run(grepTool(), { pattern: "do", path: "docs" }))).toEqual([
      "docs/readme.md:1: Nothing to do",
    ]);
    expect(lines(await run(grepTool(), { pattern: "main", path: "src/app.ts" }))).toEqual([
      "src/app.ts:2: export function main() {",
    ]);
  });

  it("stops at max_results and says so", async () => {
    const out = lines(await run(grepTool(), { pattern: ".", max_results: 2 }));
    expect(out.slice(0, 2)).toEqual(["docs/readme.md:1: Nothing to do", "src/app.ts:1: import x from 'y';"]);
    expect(out[2]).toBe("[stopped at 2 matching lines; narrow the pattern, path or glob]");
  });

  it("reports no match, a bad pattern and a path outside as the model should read them", async () => {
    expect(await run(grepTool(), { pattern: "zzz" })).toEqual({
      ok: true,
      output: "no lines match /zzz/ in . (3 files searched)\n[1 binary files skipped]",
    });
    expect(await run(grepTool(), { pattern: "(" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("not a valid regular expression"),
    });
    expect(await run(grepTool(), { pattern: "x", path: "/etc" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("outside"),
    });
  });
});
