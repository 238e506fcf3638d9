import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { sdkDigest, sdkRoot, workerScript } from "./sdk";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test("from the sources, the SDK root is the repository's python/ folder", () => {
  const root = sdkRoot();
  expect(root).toMatch(/[/\\]python$/);
  expect(workerScript(root)).toBe(join(root, "chrys", "workflows", "_worker.py"));
});

test("the digest covers the SDK files and nothing else", async () => {
  const root = mkdtempSync(join(tmpdir(), "icode-sdk-"));
  temps.push(root);
  cpSync(join(sdkRoot(), "chrys"), join(root, "chrys"), {
    recursive: true,
    filter: (src) => !src.includes("__pycache__"),
  });
  const first = await sdkDigest(root);
  expect(first).toMatch(/^[0-9a-f]{64}$/);
  expect(await sdkDigest(root)).toBe(first);

  // Compiled copies, dot files and files beside chrys/ do not count.
  mkdirSync(join(root, "chrys", "workflows", "__pycache__"));
  writeFileSync(join(root, "chrys", "workflows", "__pycache__", "x.cpython-311.pyc"), "x");
  writeFileSync(join(root, "chrys", ".DS_Store"), "x");
  writeFileSync(join(root, "icode_worker.py"), "x");
  const other = mkdtempSync(join(tmpdir(), "icode-sdk-"));
  temps.push(other);
  cpSync(root, other, { recursive: true });
  expect(await sdkDigest(other)).toBe(first);

  // Any change to an SDK file does.
  writeFileSync(join(other, "chrys", "workflows", "_values.py"), "changed");
  const changed = mkdtempSync(join(tmpdir(), "icode-sdk-"));
  temps.push(changed);
  cpSync(other, changed, { recursive: true });
  expect(await sdkDigest(changed)).not.toBe(first);
});
