/**
 * `icode workflow run --input-file PATH|-` (issue 17, item 2): input larger than the shell's argument limit,
 * from a file or standard input, up to the reference's limit of 4,194,304 characters, with a coded error past
 * it; `--input` with `--input-file` is a usage error.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI_BIN, type CliResult } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import {
  icode,
  type Project,
  parseErrorJson,
  parseRunJson,
  project,
  runJson,
  SLOW,
  sessionIds,
} from "./run-helpers";

const LIMIT = 4_194_304;

/** A workflow that returns the length of its input and its first and last characters. */
const MEASURE = `from chrys.workflows import WorkflowBuilder


def measure(value):
    text = value.text
    return "%d %s %s" % (len(text), text[:1], text[-1:])


wf = WorkflowBuilder("Measure")
node = wf.python("measure", measure)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

/** Runs the CLI with `stdin` piped in (streamed in pieces, as a pipe delivers it). */
function withStdin(p: Project, args: string[], stdin: string): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: p.dir,
    env: { ...process.env, CHRYS_HOME: p.home, NO_COLOR: "1" },
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (c: Buffer) => out.push(c));
  child.stderr.on("data", (c: Buffer) => err.push(c));
  child.stdin.on("error", () => undefined); // the CLI may stop reading early (too large)
  child.stdin.end(stdin);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (exitCode, signal) =>
      resolve({
        exitCode,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
}

describe.concurrent("icode workflow run --input-file", SLOW, () => {
  it("passes a file far over the argument limit (1 MiB) whole, a trailing newline included", async () => {
    const p = project({ ".chrys/workflows/measure.py": MEASURE });
    const text = `${"x".repeat(1024 * 1024)}\n`;
    writeFileSync(join(p.dir, "big.txt"), text);
    const r = await runJson(p, "measure", ["--trust", "--input-file", "big.txt"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.outputs[0]?.text).toBe(`${text.length} x \n`);
  });

  it("reads standard input for '-', exactly at the limit of 4,194,304 characters (not bytes)", async () => {
    const p = project({ ".chrys/workflows/measure.py": MEASURE });
    const text = `é${"y".repeat(LIMIT - 2)}z`; // é is 2 bytes in UTF-8: more bytes than characters
    const r = await withStdin(
      p,
      ["workflow", "run", "measure", "--trust", "--json", "--input-file", "-"],
      text,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(parseRunJson(r).outputs[0]?.text).toBe(`${LIMIT} é z`);
  });

  it("one character past the limit is input_too_large (exit 1), from a file or from stdin, nothing recorded", async () => {
    const p = project({ ".chrys/workflows/measure.py": MEASURE });
    writeFileSync(join(p.dir, "over.txt"), "a".repeat(LIMIT + 1));
    const file = await icode(p, [
      "workflow",
      "run",
      "measure",
      "--trust",
      "--json",
      "--input-file",
      "over.txt",
    ]);
    expect(file.exitCode).toBe(1);
    expect(parseErrorJson(file, "input_too_large").message).toContain("4194304 characters");
    const piped = await withStdin(
      p,
      ["workflow", "run", "measure", "--trust", "--input-file", "-"],
      "b".repeat(4 * LIMIT + 10), // past what the limit can hold in any UTF-8: refused without reading it all
    );
    expect(piped.exitCode).toBe(1);
    expect(piped.stderr).toContain("[input_too_large]");
    expect(sessionIds(p.home)).toEqual([]);
  });

  it("a missing file, a folder and a file that is not UTF-8 are input_file_unreadable with a hint", async () => {
    const p = project({ ".chrys/workflows/measure.py": MEASURE, "folder/x": "" });
    writeFileSync(join(p.dir, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    for (const [path, reason] of [
      ["missing.txt", "it does not exist (ENOENT)"],
      ["folder", "it is a folder"],
      ["latin1.txt", "is not UTF-8 text"],
    ] as const) {
      const r = await icode(p, ["workflow", "run", "measure", "--json", "--input-file", path]);
      expect(r.exitCode).toBe(1);
      const error = parseErrorJson(r, "input_file_unreadable");
      expect(error.message).toContain(reason);
      expect(error.hint).not.toBeNull();
      const text = await icode(p, ["workflow", "run", "measure", "--input-file", path]);
      expect(text.stderr).toMatch(/^error: .* \[input_file_unreadable\]\n {2}help: /);
    }
    expect(sessionIds(p.home)).toEqual([]);
  });

  it("--input with --input-file is a usage error (exit 2)", async () => {
    const p = project({ "in.txt": "x" });
    const r = await icode(p, ["workflow", "run", "echo", "--input", "a", "--input-file", "in.txt"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("icode: --input and --input-file cannot be used together");
  });
});
