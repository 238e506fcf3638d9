import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { extname, isAbsolute, join, resolve } from "node:path";
import type { AgentProfile } from "./config";
import { isInside } from "./paths";
import { type ConfigProblem, ProblemSink } from "./problems";

/** The combined memory is capped at this many estimated tokens. */
export const MEMORY_TOKEN_LIMIT = 35_000;
/** A configured folder contributes at most this many files. */
export const MEMORY_FOLDER_FILE_LIMIT = 100;
/** Subfolder levels searched below a configured folder. */
export const MEMORY_FOLDER_DEPTH = 2;
const MEMORY_EXTENSIONS = [".md", ".txt"];

/** Our token estimate for memory: one token per 4 characters (UTF-16 code units), rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export interface MemoryFile {
  /** Absolute path. */
  path: string;
  content: string;
  tokens: number;
}

export interface LoadedMemory {
  files: MemoryFile[];
  tokens: number;
  problems: ConfigProblem[];
}

/**
 * Reads a profile's memory (agent-profiles.md 2.5): `memory.files` first, then each of `memory.folders`
 * (its own files, then subfolders level by level, two levels below it, at most 100 files per folder), only
 * `.md` and `.txt` files, each file once. Relative paths are resolved against `cwd` and may not leave it.
 * When the estimated tokens would pass 35,000, that file and all later ones are skipped with a warning.
 */
export async function loadMemory(
  profile: Pick<AgentProfile, "memory" | "file" | "source">,
  options: { cwd: string },
): Promise<LoadedMemory> {
  const sink = new ProblemSink(profile.file);
  const candidates: { path: string; field: string }[] = [];

  for (const [index, written] of profile.memory.files.entries()) {
    const field = `memory.files[${index}]`;
    const path = resolveInside(sink, options.cwd, written, field);
    if (path === null) continue;
    if (!MEMORY_EXTENSIONS.includes(extname(path).toLowerCase())) {
      sink.warn("memory_not_text_file", field, `${written} is not a .md or .txt file; it is not loaded`);
      continue;
    }
    candidates.push({ path, field });
  }
  for (const [index, written] of profile.memory.folders.entries()) {
    const field = `memory.folders[${index}]`;
    const dir = resolveInside(sink, options.cwd, written, field);
    if (dir === null) continue;
    const found = await scanFolder(sink, dir, written, field, profile.source === "builtin");
    candidates.push(...found.map((path) => ({ path, field })));
  }

  const files: MemoryFile[] = [];
  const seen = new Set<string>();
  let tokens = 0;
  const over: string[] = [];
  for (const c of candidates) {
    let real: string;
    let content: string;
    try {
      real = await realpath(c.path);
      if (seen.has(real)) continue;
      content = (await readFile(real, "utf8")).replace(/^\uFEFF/u, "");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" || profile.source !== "builtin") {
        sink.warn(
          "memory_unreadable",
          c.field,
          `cannot read ${c.path} (${code ?? String(error)}); it is not loaded`,
        );
      }
      continue;
    }
    seen.add(real);
    const t = estimateTokens(content);
    if (over.length > 0 || tokens + t > MEMORY_TOKEN_LIMIT) {
      over.push(c.path);
      continue;
    }
    tokens += t;
    files.push({ path: c.path, content, tokens: t });
  }
  if (over.length > 0) {
    sink.warn(
      "memory_token_limit",
      "memory",
      `memory is capped at ${MEMORY_TOKEN_LIMIT.toLocaleString("en-US")} estimated tokens (characters / 4); ${over.length} file(s) from ${over[0]} on are not loaded. List fewer or smaller files.`,
    );
  }
  return { files, tokens, problems: sink.problems };
}

function resolveInside(sink: ProblemSink, cwd: string, written: string, field: string): string | null {
  if (isAbsolute(written)) return resolve(written);
  const path = resolve(cwd, written);
  if (!isInside(cwd, path)) {
    sink.warn(
      "memory_path_outside_cwd",
      field,
      `${written} leaves the working directory; relative memory paths must stay inside it (use an absolute path instead)`,
    );
    return null;
  }
  return path;
}

async function scanFolder(
  sink: ProblemSink,
  dir: string,
  written: string,
  field: string,
  quietMissing: boolean,
): Promise<string[]> {
  const out: string[] = [];
  let level = [dir];
  for (let depth = 0; depth <= MEMORY_FOLDER_DEPTH && level.length > 0; depth += 1) {
    const next: string[] = [];
    for (const folder of level) {
      let entries: import("node:fs").Dirent[];
      try {
        entries = await readdir(folder, { withFileTypes: true });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (depth === 0 && !(code === "ENOENT" && quietMissing))
          sink.warn(
            "memory_unreadable",
            field,
            `cannot list the memory folder ${written} (${code ?? String(error)})`,
          );
        continue;
      }
      const names = entries
        .filter((e) => !e.name.startsWith("."))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of names) {
        const path = join(folder, e.name);
        let isDir = e.isDirectory();
        let isFile = e.isFile();
        if (e.isSymbolicLink()) {
          const s = await stat(path).catch(() => null);
          isFile = s?.isFile() ?? false;
          isDir = false; // linked folders are not followed (no cycles)
        }
        if (isDir) next.push(path);
        else if (isFile && MEMORY_EXTENSIONS.includes(extname(e.name).toLowerCase())) {
          if (out.length >= MEMORY_FOLDER_FILE_LIMIT) {
            sink.warn(
              "memory_folder_limit",
              field,
              `the memory folder ${written} has more than ${MEMORY_FOLDER_FILE_LIMIT} .md/.txt files; only the first ${MEMORY_FOLDER_FILE_LIMIT} are loaded`,
            );
            return out;
          }
          out.push(path);
        }
      }
    }
    level = next;
  }
  return out;
}
