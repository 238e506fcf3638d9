// Reading V8 CPU profiles (`node --cpu-prof`) written by `pnpm bench --profile`: where the engine's process
// spent its time, by function, so a missed target can be explained.
import { readFileSync } from "node:fs";

/**
 * The functions with the most self time in a `.cpuprofile`, as `{ name, where, self_ms, share }` (share of
 * the whole profile, 0–1). "(idle)" is time the process waited, typically for its Python worker;
 * "(garbage collector)" and "(program)" are V8's own.
 */
export function topFunctions(profile, limit = 12) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const totals = new Map();
  let all = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const name = frame.functionName || "(anonymous)";
    const file = frame.url
      ? frame.url
          .replace(/^file:\/\//, "")
          .split("/node_modules/")
          .pop()
      : "";
    const where = file ? `${file}:${frame.lineNumber + 1}` : "";
    const key = `${name}\u0000${where}`;
    totals.set(key, (totals.get(key) ?? 0) + us);
    all += us;
  }
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([key, us]) => {
      const [name, where] = key.split("\u0000");
      return { name, where, self_ms: us / 1000, share: all > 0 ? us / all : 0 };
    });
}

export function readProfile(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}
