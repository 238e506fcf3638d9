import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
/** A definition as a test edits it: any field may be broken. */
export type LooseDefinition = {
  name?: unknown;
  nodes: Array<Record<string, unknown>>;
  [field: string]: unknown;
};

/** A valid three-node chain: plan → build → check. Tests break one thing in a copy of it. */
export function baseDefinition(): LooseDefinition {
  return {
    name: "Base",
    nodes: [
      { id: "plan", name: "Plan", prompt_template: "Plan {{task}}" },
      {
        id: "build",
        name: "Build",
        prompt_template: "Build {{upstream.plan.summary}}",
        depends_on: ["plan"],
      },
      { id: "check", name: "Check", prompt_template: "Check {{upstream_summaries}}", depends_on: ["build"] },
    ],
  };
}

/** `count` independent nodes n0…n(count-1). */
export function manyNodes(count: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => ({
    id: `n${i}`,
    name: `N${i}`,
    prompt_template: "{{task}}",
  }));
}

/** The text a test validates: 2-space JSON, as people write it. */
export function pretty(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Where `needle` starts in `text` (its `occurrence`-th match): 1-based line and column counting characters,
 * found by plain searching, independently of the validator's JSON parser.
 */
export function place(text: string, needle: string, occurrence = 0): { line: number; column: number } {
  let index = -1;
  for (let i = 0; i <= occurrence; i++) {
    index = text.indexOf(needle, index + 1);
    if (index === -1) throw new Error(`"${needle}" (occurrence ${occurrence}) is not in the text`);
  }
  const before = text.slice(0, index);
  const line = before.split("\n").length;
  const lineStart = before.lastIndexOf("\n") + 1;
  return { line, column: [...text.slice(lineStart, index)].length + 1 };
}

export function tempDir(prefix = "icode-pipelines-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
