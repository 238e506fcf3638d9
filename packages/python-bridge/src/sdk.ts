import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The folder holding the `chrys/` package that the worker runs from (put on `sys.path` after the workflow's
 * folder): `python/` beside `dist/` in a built package (the build copies the repo's `python/chrys` there),
 * else the repository's `python/` (tests and typecheck run from `src/`).
 */
export function sdkRoot(): string {
  const shipped = join(here, "..", "python");
  const repo = join(here, "..", "..", "..", "python");
  if (basename(here) === "dist" && existsSync(join(shipped, "chrys", "workflows", "_worker.py")))
    return shipped;
  if (existsSync(join(repo, "chrys", "workflows", "_worker.py"))) return repo;
  return shipped;
}

/** The script the worker process runs: `<sdkRoot>/chrys/workflows/_worker.py`. */
export function workerScript(root: string = sdkRoot()): string {
  return join(root, "chrys", "workflows", "_worker.py");
}

const digests = new Map<string, Promise<string>>();

/**
 * A sha256 over the SDK files (everything under `<root>/chrys` except names starting with `.`, `__pycache__`
 * and `.pyc`): the hex digest of the canonical JSON of the sorted `[relative path with "/", sha256 of
 * content]` pairs. Part of the environment fingerprint: a new SDK asks for trust again. Cached per root.
 */
export function sdkDigest(root: string = sdkRoot()): Promise<string> {
  let digest = digests.get(root);
  if (digest === undefined) {
    digest = computeDigest(root);
    digests.set(root, digest);
    digest.catch(() => digests.delete(root));
  }
  return digest;
}

async function computeDigest(root: string): Promise<string> {
  const base = join(root, "chrys");
  const pairs: [string, string][] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name.startsWith(".") || entry.name === "__pycache__" || entry.name.endsWith(".pyc")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const content = await readFile(path);
        pairs.push(["chrys/" + relative(base, path).split(sep).join("/"), sha256(content)]);
      }
    }
  };
  await walk(base);
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return sha256(Buffer.from(JSON.stringify(pairs), "utf8"));
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
