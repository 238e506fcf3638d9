import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../src/codes";

/** The codes docs/errors.md has a heading for (`## \`code\``, `### \`code\``, `#### \`code\``). */
function documented(): Set<string> {
  const doc = readFileSync(join(REPO_ROOT, "docs", "errors.md"), "utf8");
  return new Set([...doc.matchAll(/^#{2,4} `([a-z0-9_.]+)`/gm)].map((m) => m[1]!));
}

/** Non-test TypeScript sources of the packages and the CLI. */
function sources(): string[] {
  const roots = ["packages", "apps"].flatMap((group) =>
    readdirSync(join(REPO_ROOT, group)).map((name) => join(REPO_ROOT, group, name, "src")),
  );
  const files: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts"))
        files.push(path);
    }
  };
  for (const root of roots) walk(root);
  return files;
}

/**
 * Codes in the sources that are not ours to document: zod's issue code, and the error codes of model
 * providers' response bodies that the native loop reads to classify a failure.
 */
const FOREIGN = new Set([
  "custom",
  "insufficient_quota",
  "context_length_exceeded",
  "rate_limit_exceeded",
  "model_not_found",
  "quota_exhausted",
]);

describe("docs/errors.md", () => {
  it("has a heading for every code of every package's closed list", () => {
    const headings = documented();
    const missing = Object.entries(ERROR_CODES).flatMap(([list, codes]) =>
      (codes as readonly string[]).filter((code) => !headings.has(code)).map((code) => `${list}: ${code}`),
    );
    expect(missing).toEqual([]);
  });

  it("has a heading for every code the sources emit as a literal (code: / class:)", () => {
    const headings = documented();
    const missing = new Set<string>();
    for (const file of sources()) {
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/\b(?:code|class): "([a-z][a-z0-9_]*)"/g)) {
        const code = match[1]!;
        if (!headings.has(code) && !FOREIGN.has(code))
          missing.add(`${code} (${file.slice(REPO_ROOT.length + 1)})`);
      }
    }
    expect([...missing].sort()).toEqual([]);
  });
});
