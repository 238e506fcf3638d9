import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { damagedBytecode, dropCompiledFiles } from "./bytecode-cache";

describe("damagedBytecode", () => {
  it("names the marshal error of a cut-short or garbled .pyc, and nothing else", () => {
    const trace = (last: string) =>
      `Traceback (most recent call last):\n  File "<frozen importlib._bootstrap_external>", line 729, in _compile_bytecode\n${last}\n`;
    expect(damagedBytecode(trace("EOFError: marshal data too short"))).toBe(
      "EOFError: marshal data too short",
    );
    expect(damagedBytecode(trace("ValueError: bad marshal data (unknown type code)"))).toBe(
      "ValueError: bad marshal data (unknown type code)",
    );
    expect(damagedBytecode(trace("EOFError: EOF when reading a line"))).toBeNull();
    expect(damagedBytecode("ModuleNotFoundError: No module named 'x'")).toBeNull();
    expect(damagedBytecode("")).toBeNull();
  });
});

describe("dropCompiledFiles", () => {
  it("removes the .pyc files under the folder, and only those; links are not followed", async () => {
    const root = mkdtempSync(join(tmpdir(), "icode-pyc-"));
    const cache = join(root, "cache");
    const outside = join(root, "outside");
    mkdirSync(join(cache, "usr", "lib", "python3.11"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(cache, "usr", "lib", "python3.11", "typing.cpython-311.pyc"), "cut");
    writeFileSync(join(cache, "a.cpython-311.pyc"), "x");
    writeFileSync(join(cache, "notes.txt"), "keep");
    writeFileSync(join(outside, "theirs.cpython-311.pyc"), "keep");
    symlinkSync(outside, join(cache, "linked"));
    symlinkSync(join(outside, "theirs.cpython-311.pyc"), join(cache, "link.cpython-311.pyc"));
    expect(await dropCompiledFiles(cache)).toBe(2);
    expect(existsSync(join(cache, "usr", "lib", "python3.11", "typing.cpython-311.pyc"))).toBe(false);
    expect(existsSync(join(cache, "a.cpython-311.pyc"))).toBe(false);
    expect(existsSync(join(cache, "notes.txt"))).toBe(true);
    expect(existsSync(join(outside, "theirs.cpython-311.pyc"))).toBe(true);
    expect(await dropCompiledFiles(join(root, "missing"))).toBe(0);
  });
});
