import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type ConfigProblem, ProblemSink } from "./problems";

/** A configuration file read from disk: its bytes' SHA-256 and its text, or why it could not be read. */
export type FileText =
  | { ok: true; path: string; text: string; digest: string }
  | { ok: false; path: string; problem: ConfigProblem; errno: string | null };

/**
 * The profile files of a directory in load order: names ending in `.yaml` sorted, then `.yml` sorted; names
 * starting with `.` are ignored. A missing directory contributes nothing; one that cannot be listed is a
 * problem.
 */
export async function listProfileFiles(
  dir: string,
  what: string,
): Promise<{ files: string[]; problems: ConfigProblem[] }> {
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries.filter((e) => e.isFile() || e.isSymbolicLink()).map((e) => e.name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { files: [], problems: [] };
    const sink = new ProblemSink(dir);
    sink.warn(
      "config_unreadable",
      null,
      `cannot list the ${what} folder (${code ?? String(error)}); none of its profiles are loaded. Check that it is a folder you can read.`,
    );
    return { files: [], problems: sink.problems };
  }
  const visible = names.filter((n) => !n.startsWith("."));
  const yaml = visible.filter((n) => n.endsWith(".yaml")).sort(byCodeUnit);
  const yml = visible.filter((n) => n.endsWith(".yml")).sort(byCodeUnit);
  return { files: [...yaml, ...yml].map((n) => join(dir, n)), problems: [] };
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Reads a file as UTF-8 (a leading BOM is dropped); unreadable files and invalid UTF-8 are problems. */
export async function readConfigFile(path: string, effect: string): Promise<FileText> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    const sink = new ProblemSink(path);
    sink.error("config_unreadable", null, `cannot read the file (${code}); ${effect}`);
    return { ok: false, path, problem: sink.problems[0] as ConfigProblem, errno: code };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const sink = new ProblemSink(path);
    sink.error("config_unreadable", null, `the file is not UTF-8 text; ${effect}. Save it as UTF-8.`);
    return { ok: false, path, problem: sink.problems[0] as ConfigProblem, errno: null };
  }
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  return { ok: true, path, text, digest: sha256(bytes) };
}

export function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
