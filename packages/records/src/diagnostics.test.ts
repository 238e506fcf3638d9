import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  diagnosticsFileName,
  readNodeDiagnostics,
  recordHash,
  sanitizeForFileName,
  writeNodeDiagnostics,
} from "./diagnostics";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("node diagnostics file names", () => {
  it.each([
    ["review@iter#2", "review@iter_2"],
    ["a/b@iter#1", "a_b@iter_1"],
    ["join:dst@iter#1", "join_dst@iter_1"],
    ["..@iter#1", "_..@iter_1"],
    ["CON", "_CON"],
    ["naïve@iter#1", "na_ve@iter_1"],
  ])("sanitizes %s to %s", (id, name) => {
    expect(sanitizeForFileName(id)).toBe(name);
  });

  it("keeps names distinct after sanitizing with the 8-character identity hash", () => {
    const a = diagnosticsFileName("a/b@iter#1", 1);
    const b = diagnosticsFileName("a_b@iter#1", 1);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^a_b@iter_1\.1\.diagnostics\.[0-9a-f]{8}\.json$/);
    expect(recordHash("x", 1)).not.toBe(recordHash("x", 2));
    expect(sanitizeForFileName("n".repeat(300))).toHaveLength(96);
  });

  it("writes only phases with content, no file when there is none, and reads records back", () => {
    const dir = mkdtempSync(join(tmpdir(), "diag-"));
    dirs.push(dir);
    expect(
      writeNodeDiagnostics(dir, {
        node_id: "n",
        activation_id: "n@iter#1",
        attempt: 1,
        phases: [{ phase: "node", stdout: { text: "", truncated: false } }],
      }),
    ).toBeNull();
    expect(() => readdirSync(join(dir, "nodes"))).toThrow();
    const file = writeNodeDiagnostics(dir, {
      node_id: "n",
      activation_id: "n@iter#1",
      attempt: 2,
      phases: [
        { phase: "node", stdout: { text: "", truncated: false } },
        { phase: "conditions", stdout: { text: "checked\n", truncated: false } },
      ],
    });
    expect(file).toBe(join(dir, "nodes", diagnosticsFileName("n@iter#1", 2)));
    expect(JSON.parse(readFileSync(file!, "utf8")).phases).toEqual([
      { phase: "conditions", stdout: { text: "checked\n", truncated: false } },
    ]);
    expect(readNodeDiagnostics(dir).map((r) => [r.activation_id, r.attempt])).toEqual([["n@iter#1", 2]]);
  });
});
