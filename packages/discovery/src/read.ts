import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import type { Diagnostic } from "@icode/workflow-errors";
import { folderDigest } from "./digest";
import { LIMITS } from "./limits";
import { describeFsError, problem } from "./problem";
import { type CheckedFile, checkWorkflow } from "./safety";
import type { ReadResult, SourceFile, Target } from "./schema";
import { findInvalidUtf8, type Utf8Error } from "./utf8";

const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const CHUNK = 1024 * 1024;

export interface ReadOptions {
  /** The user files must belong to; see `DiscoveryOptions.uid`. Built-in targets are never checked. */
  uid?: number | null;
  gid?: number | null;
}

/**
 * The `read` stage of `icode workflow validate`, also what a run reads before trust is compared: runs
 * `checkWorkflow` on the target (every problem, not just the first), then reads every file that counts,
 * hashing it, and decodes the entry file as strict UTF-8. The source digest follows clarification 23: a
 * single file's SHA-256, or `folderDigest` over the folder's files.
 */
export async function readTarget(target: Target, options: ReadOptions = {}): Promise<ReadResult> {
  const checked = await checkWorkflow(
    { layout: target.layout, path: target.entry, packageDir: target.packageDir },
    { uid: target.location === "builtin" ? null : options.uid, gid: options.gid, stopAtFirst: false },
  );
  const failed: ReadResult = {
    files: [],
    entrySource: null,
    sourceDigest: null,
    diagnostics: checked.diagnostics,
  };
  if (checked.diagnostics.some((d) => d.severity === "error")) return failed;

  const diagnostics: Diagnostic[] = [];
  const files: SourceFile[] = [];
  let entryBytes: Buffer | null = null;
  let total = 0;
  for (const file of checked.files) {
    const isEntry = file.absPath === target.entry;
    const result = await readOne(file, isEntry);
    if ("diagnostic" in result) {
      diagnostics.push(result.diagnostic);
      continue;
    }
    total += result.file.size;
    files.push(result.file);
    if (isEntry) entryBytes = result.bytes;
  }
  if (target.layout === "package" && total > LIMITS.packageBytes) {
    diagnostics.push(
      problem(
        "package_too_large",
        `The files in the workflow folder ${target.packageDir} grew past ${LIMITS.packageBytes / 1024 / 1024} MiB while they were read.`,
        target.packageDir,
        "Move large data files out of the folder, or into a folder whose name starts with `.`.",
      ),
    );
  }
  if (diagnostics.length > 0) return { ...failed, diagnostics };
  if (entryBytes === null) {
    return {
      ...failed,
      diagnostics: [
        problem("source_unreadable", `The entry file ${target.entry} could not be read.`, target.entry, null),
      ],
    };
  }
  const sourceDigest = target.layout === "file" ? files[0]!.sha256 : folderDigest(files);
  const bad = findInvalidUtf8(entryBytes);
  if (bad !== null) {
    return { files, entrySource: null, sourceDigest, diagnostics: [notUtf8(target.entry, entryBytes, bad)] };
  }
  const entrySource = new TextDecoder("utf-8", { fatal: true }).decode(entryBytes);
  return { files, entrySource, sourceDigest, diagnostics: [] };
}

type ReadOne = { file: SourceFile; bytes: Buffer | null } | { diagnostic: Diagnostic };

async function readOne(file: CheckedFile, isEntry: boolean): Promise<ReadOne> {
  const code = isEntry ? "source_unreadable" : "package_unreadable";
  let handle: FileHandle;
  try {
    handle = await open(file.absPath, READ_FLAGS);
  } catch (error) {
    return {
      diagnostic: problem(
        code,
        `Cannot read ${file.absPath}: ${describeFsError(error)}.`,
        file.absPath,
        null,
      ),
    };
  }
  try {
    if (!(await handle.stat()).isFile()) {
      return {
        diagnostic: problem(
          code,
          `${file.absPath} stopped being a regular file while it was read.`,
          file.absPath,
          null,
        ),
      };
    }
    const hash = createHash("sha256");
    const kept: Buffer[] = [];
    const buffer = Buffer.allocUnsafe(CHUNK);
    let size = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      size += bytesRead;
      if (isEntry) {
        if (size > LIMITS.sourceBytes) {
          return {
            diagnostic: problem(
              "source_too_large",
              `${file.absPath} is over ${LIMITS.sourceBytes} bytes (4 MiB), the limit for a workflow's entry file.`,
              file.absPath,
              "Move data out of the entry file into files the workflow reads, or into other modules.",
            ),
          };
        }
        kept.push(Buffer.from(chunk));
      }
    }
    return {
      file: { relPath: file.relPath, absPath: file.absPath, size, sha256: hash.digest("hex") },
      bytes: isEntry ? Buffer.concat(kept) : null,
    };
  } catch (error) {
    return {
      diagnostic: problem(
        code,
        `Cannot read ${file.absPath}: ${describeFsError(error)}.`,
        file.absPath,
        null,
      ),
    };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** `source_not_utf8` at the first bad byte: its line, its column in characters and the line's text. */
function notUtf8(file: string, bytes: Buffer, bad: Utf8Error): Diagnostic {
  let start = bad.offset;
  while (start > 0 && bytes[start - 1] !== 0x0a) start--;
  let end = bad.offset;
  while (end < bytes.length && bytes[end] !== 0x0a) end++;
  const lenient = new TextDecoder("utf-8");
  const before = lenient.decode(bytes.subarray(start, bad.offset));
  const text = lenient.decode(bytes.subarray(start, end)).replace(/\r$/, "");
  const d = problem(
    "source_not_utf8",
    `${file} is not UTF-8: byte 0x${bad.byte.toString(16).padStart(2, "0")} at line ${bad.line} ` +
      `(byte offset ${bad.offset}) cannot be decoded.`,
    file,
    'Save the file as UTF-8 (most editors offer it under "Save with encoding"); iCode reads workflow source only as UTF-8.',
  );
  d.line = bad.line;
  d.column = Array.from(before).length + 1;
  d.source_line = text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g, "\ufffd");
  return d;
}
