// The peer engines (LangGraph JS, Mastra) live in bench/peers/, a package of its own outside the pnpm
// workspace with its own lockfile, so that `pnpm install` (and CI) never fetches them. `pnpm bench` installs
// them there on first use; the peer children import them through bench/peers/*.mjs, whose bare imports
// resolve from bench/peers/node_modules.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const PEERS_DIR = fileURLToPath(new URL("../peers/", import.meta.url));

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/**
 * What `dir/node_modules` holds of the dependencies pinned in `dir/package.json`:
 * `{ ready, pinned: { name: version }, installed: { name: version | null }, stale: [name] }`.
 * `ready` is true when every pinned dependency is installed at its pinned version; `stale` names the others.
 */
export function peerState(dir) {
  const manifest = readJson(join(dir, "package.json"));
  if (manifest === null) throw new Error(`cannot read ${join(dir, "package.json")}`);
  const pinned = manifest.dependencies ?? {};
  const installed = {};
  const stale = [];
  for (const [name, version] of Object.entries(pinned)) {
    installed[name] = readJson(join(dir, "node_modules", name, "package.json"))?.version ?? null;
    if (installed[name] !== version) stale.push(name);
  }
  return { ready: stale.length === 0, pinned, installed, stale };
}

/** The pnpm the repository pins (`packageManager` of the root package.json), as `pnpm@X.Y.Z`. */
function pinnedPnpm(repoRoot) {
  const spec = readJson(join(repoRoot, "package.json"))?.packageManager;
  return typeof spec === "string" && spec.startsWith("pnpm@") ? spec.split("+")[0] : "pnpm@10.34.9";
}

/** The command that installs the peers from their lockfile, as an argv (run from `repoRoot`). */
export function installCommand(repoRoot, dir = PEERS_DIR) {
  const where = relative(repoRoot, dir) || ".";
  return [
    "npx",
    "-y",
    pinnedPnpm(repoRoot),
    "install",
    "--dir",
    where,
    "--frozen-lockfile",
    "--ignore-workspace",
  ];
}

/**
 * Makes sure the peers are installed in `dir`, installing them from their lockfile when they are not (pnpm's
 * output goes to stderr). Returns `{ ok: true, installed: boolean }` or `{ ok: false, error }`.
 */
export function ensurePeers({ repoRoot, dir = PEERS_DIR, env, log }) {
  const before = peerState(dir);
  if (before.ready) return { ok: true, installed: false };
  const argv = installCommand(repoRoot, dir);
  log(`installing the peer engines into ${relative(repoRoot, dir)} (first use): ${argv.join(" ")}`);
  const result = spawnSync(argv[0], argv.slice(1), {
    cwd: repoRoot,
    env,
    stdio: ["ignore", process.stderr, process.stderr],
  });
  if (result.error || result.status !== 0) {
    return {
      ok: false,
      error: `${argv.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`}); run it by hand to see why`,
    };
  }
  const after = peerState(dir);
  if (!after.ready) {
    return {
      ok: false,
      error: `after ${argv.join(" ")}, ${after.stale.map((n) => `${n} is ${after.installed[n] ?? "missing"}, expected ${after.pinned[n]}`).join("; ")}`,
    };
  }
  return { ok: true, installed: true };
}
