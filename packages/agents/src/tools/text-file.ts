import { readFile, stat } from "node:fs/promises";

/** Files larger than this are not read whole (read_file, edit_file). */
export const TEXT_FILE_MAX_BYTES = 16 * 1024 * 1024;
/** Bytes looked at for a NUL byte, the sign of a binary file. */
const BINARY_SNIFF_BYTES = 8192;

// `ignoreBOM` keeps a byte-order mark in the text, so that an edit can write it back.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A text file's content without its byte-order mark (`bom` says whether it had one). */
export type TextFile = { ok: true; text: string; bytes: number; bom: boolean } | { ok: false; error: string };

/** True when the bytes hold a NUL in their first 8 KiB or are not valid UTF-8. */
export function looksBinary(bytes: Uint8Array): boolean {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return true;
  try {
    utf8.decode(bytes);
    return false;
  } catch {
    return true;
  }
}

/**
 * Reads a UTF-8 text file for a file tool, or says why not: missing, a folder, larger than 16 MiB, or
 * binary (a NUL byte, or bytes that are not UTF-8). `display` names it in messages.
 */
export async function readTextFile(real: string, display: string): Promise<TextFile> {
  let size: number;
  try {
    const s = await stat(real);
    if (s.isDirectory()) return { ok: false, error: `${display} is a folder, not a file; list it with glob` };
    if (!s.isFile()) return { ok: false, error: `${display} is not a regular file` };
    size = s.size;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT"
      ? { ok: false, error: `${display} does not exist; check the path with glob` }
      : { ok: false, error: `cannot read ${display}: ${(error as Error).message}` };
  }
  if (size > TEXT_FILE_MAX_BYTES) {
    return {
      ok: false,
      error:
        `${display} has ${size} bytes, more than the ${TEXT_FILE_MAX_BYTES}-byte limit of file tools; ` +
        `search it with grep instead`,
    };
  }
  const bytes = await readFile(real);
  if (looksBinary(bytes)) {
    return { ok: false, error: `${display} is not a UTF-8 text file (it looks binary); it is not read` };
  }
  const text = utf8.decode(bytes);
  const bom = text.startsWith("\uFEFF");
  return { ok: true, text: bom ? text.slice(1) : text, bytes: bytes.length, bom };
}

/** The lines of a text, without the empty last line a final newline makes. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/u);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}
