import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { resolve } from "node:path";
import { MAX_STRING_CHARS } from "@icode/workflow-graph";
import type { Input } from "./io";

/** A UTF-8 character takes at most 4 bytes: more than this many bytes is over the input limit for sure. */
const MAX_BYTES = 4 * MAX_STRING_CHARS;

export type InputFileResult =
  | { ok: true; text: string }
  | { ok: false; code: "input_file_unreadable" | "input_too_large"; message: string; hint: string };

/**
 * The text of `--input-file PATH` (relative to `cwd`), or of standard input for `-`: UTF-8, taken exactly
 * (a trailing newline stays). Reading stops once more bytes came than the input limit can hold, so a huge
 * file or an endless pipe is refused without being read whole; the character limit itself (4,194,304) is
 * checked by the engine, with the same code.
 */
export async function readInputFile(path: string, cwd: string, stdin: Input): Promise<InputFileResult> {
  const what = path === "-" ? "standard input" : resolve(cwd, path);
  let bytes: Buffer;
  try {
    bytes = path === "-" ? await readStream(stdin) : readFileBounded(what);
  } catch (error) {
    if (error instanceof TooLarge) return tooLarge(what);
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "it does not exist"
        : code === "EISDIR"
          ? "it is a folder"
          : code === "EACCES" || code === "EPERM"
            ? "permission denied"
            : error instanceof Error
              ? error.message
              : String(error);
    return {
      ok: false,
      code: "input_file_unreadable",
      message: `cannot read the input file ${what}: ${reason}${code === undefined ? "" : ` (${code})`}`,
      hint: "name a readable UTF-8 text file, or '-' for standard input",
    };
  }
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return {
      ok: false,
      code: "input_file_unreadable",
      message: `the input file ${what} is not UTF-8 text`,
      hint: "convert it to UTF-8 (for example with iconv), or pass the text with --input",
    };
  }
}

class TooLarge extends Error {}

function tooLarge(what: string): InputFileResult {
  return {
    ok: false,
    code: "input_too_large",
    message: `the input in ${what} is longer than the limit of ${MAX_STRING_CHARS} characters for one string`,
    hint: "pass a shorter input, or a path to the data that a node reads itself",
  };
}

function readFileBounded(file: string): Buffer {
  const fd = openSync(file, "r");
  try {
    if (fstatSync(fd).isDirectory()) throw Object.assign(new Error("is a folder"), { code: "EISDIR" });
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(1 << 20);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > MAX_BYTES) throw new TooLarge();
      chunks.push(chunk.subarray(0, n));
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

async function readStream(stream: Input): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    total += bytes.length;
    if (total > MAX_BYTES) throw new TooLarge();
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, total);
}
