import { mkdir, readFile, realpath, stat, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { isInside } from "./paths";

/** Largest file `fs/read_text_file` serves (ours): a bigger one would not fit an ACP message anyway. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/** Why a file request was refused, as the JSON-RPC error the agent gets. */
export class FileRequestError extends Error {
  constructor(
    readonly reason: "outside_workspace" | "not_found" | "invalid" | "too_large" | "io",
    message: string,
  ) {
    super(message);
    this.name = "FileRequestError";
  }
}

/**
 * The real path `path` names: itself when it exists, else its nearest existing ancestor's real path with
 * the rest appended, so that a link anywhere on the way is followed before the workspace check.
 */
async function realTarget(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realTarget(parent), basename(path));
  }
}

/**
 * Serves an ACP agent's `fs/read_text_file` and `fs/write_text_file` within the session's working
 * directory only: a path must be absolute and, with every link followed, inside the workspace, or the
 * request fails with an error naming the workspace. Writes create missing parent folders.
 */
export class WorkspaceFs {
  private root: string | null = null;

  constructor(private readonly workspace: string) {}

  private async check(path: string): Promise<string> {
    if (!isAbsolute(path)) {
      throw new FileRequestError(
        "invalid",
        `the path ${JSON.stringify(path)} is not absolute; ACP paths are`,
      );
    }
    this.root ??= await realpath(this.workspace);
    const target = await realTarget(resolve(path));
    if (!isInside(this.root, target)) {
      throw new FileRequestError(
        "outside_workspace",
        `${path} is outside the workspace ${this.root}; this client serves files inside it only`,
      );
    }
    return target;
  }

  /** The text of the file, from 1-based `line` for `limit` lines when given. */
  async read(request: { path: string; line?: number | null; limit?: number | null }): Promise<string> {
    const target = await this.check(request.path);
    let size: number;
    try {
      const info = await stat(target);
      if (!info.isFile()) throw new FileRequestError("invalid", `${request.path} is not a file`);
      size = info.size;
    } catch (error) {
      if (error instanceof FileRequestError) throw error;
      throw new FileRequestError("not_found", `${request.path} does not exist`);
    }
    if (size > MAX_READ_BYTES) {
      throw new FileRequestError(
        "too_large",
        `${request.path} has ${size} bytes; fs/read_text_file serves files up to ${MAX_READ_BYTES}`,
      );
    }
    const text = await readFile(target, "utf8");
    if (request.line == null && request.limit == null) return text;
    const lines = text.split("\n");
    const from = Math.max(0, (request.line ?? 1) - 1);
    const to = request.limit == null ? lines.length : from + request.limit;
    return lines.slice(from, to).join("\n");
  }

  async write(request: { path: string; content: string }): Promise<void> {
    const target = await this.check(request.path);
    try {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, request.content);
    } catch (error) {
      throw new FileRequestError(
        "io",
        `cannot write ${request.path}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
