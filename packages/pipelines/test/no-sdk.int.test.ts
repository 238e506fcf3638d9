import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ENTRY, ensureBuilt, PACKAGE_DIR } from "./build";

// The package carries no model or protocol SDK: the engine, the CLI and a server import it to validate and
// to store pipelines, and the run side brings the agents.
describe("no model or protocol SDK", () => {
  beforeAll(ensureBuilt, 180_000);

  it("depends only on zod, jsonc-parser, better-sqlite3 and three @icode packages, pinned exactly", async () => {
    const manifest = JSON.parse(await readFile(join(PACKAGE_DIR, "package.json"), "utf8"));
    expect(manifest.dependencies).toEqual({
      "@icode/agent-profiles": "workspace:*",
      "@icode/workflow-errors": "workspace:*",
      // The executor contract's activity and usage schemas (no SDK either).
      "@icode/workflow-scheduler": "workspace:*",
      "better-sqlite3": "12.11.1",
      "jsonc-parser": "3.3.1",
      zod: "4.6.7",
    });
    expect(manifest.peerDependencies).toBeUndefined();
    expect(manifest.optionalDependencies).toBeUndefined();
  });

  it("the built bundle imports only those packages (agent-profiles for types only) and Node built-ins", async () => {
    const code = await readFile(ENTRY, "utf8");
    const specifiers = [
      ...code.matchAll(
        /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gu,
      ),
    ].map((m) => m[1] ?? m[2]);
    const builtin = (s: string) => s.startsWith("node:") || builtinModules.includes(s);
    const packages = [
      ...new Set(specifiers.filter((s): s is string => s !== undefined && !builtin(s))),
    ].sort();
    expect(packages).toEqual([
      "@icode/workflow-errors",
      "@icode/workflow-scheduler",
      "better-sqlite3",
      "jsonc-parser",
      "zod",
    ]);
  });
});
