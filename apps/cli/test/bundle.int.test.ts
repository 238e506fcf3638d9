/**
 * The built CLI as published: a bin and one bundle per command, the Python SDK and the built-in workflows
 * beside `dist/`, and V8's code cache for the command bundles (written once, reused, rewritten when wrong).
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI_BIN, REPO_ROOT, runCli, tmpDir } from "@icode/test-utils";
import { describe, expect, it } from "vitest";

const CLI_DIR = join(REPO_ROOT, "apps", "cli");

describe("the built CLI", () => {
  it("ships its bin, a bundle per command, the SDK and the built-in workflows", () => {
    const pkg = JSON.parse(readFileSync(join(CLI_DIR, "package.json"), "utf8")) as {
      bin: Record<string, string>;
      files: string[];
    };
    expect(join(CLI_DIR, pkg.bin.icode!)).toBe(CLI_BIN);
    expect(statSync(CLI_BIN).mode & 0o111).not.toBe(0);
    for (const name of [
      "workflow-list",
      "workflow-validate",
      "workflow-run",
      "trajectory-export",
      "history",
      "pipeline",
      "pipeline-run",
      "completion",
      "profiles",
    ]) {
      expect(existsSync(join(CLI_DIR, "dist", `${name}.js`))).toBe(true);
    }
    // `validate` loads dist/prestart.js to start Python before its bundle: that file must load no zod, and
    // the bin (loaded by every command) must not carry it.
    const prestart = readFileSync(join(CLI_DIR, "dist", "prestart.js"), "utf8");
    expect(prestart).toContain("prestartValidation");
    expect(prestart).not.toMatch(/\bzod\b|_zod|\$ZodType/);
    expect(readFileSync(CLI_BIN, "utf8")).not.toContain("prestartValidation");
    expect(readFileSync(CLI_BIN, "utf8")).not.toMatch(/\bzod\b|_zod|\$ZodType/);
    expect(existsSync(join(CLI_DIR, "schemas", "run-result.schema.json"))).toBe(true);
    // The bundles are CommonJS inside a package of ES modules.
    expect(JSON.parse(readFileSync(join(CLI_DIR, "dist", "package.json"), "utf8"))).toEqual({
      type: "commonjs",
    });
    expect(pkg.files).toEqual(
      expect.arrayContaining(["dist", "python", "builtin", "builtin-pipelines", "schemas"]),
    );
    expect(existsSync(join(CLI_DIR, "python", "chrys", "workflows", "_worker.py"))).toBe(true);
    expect(existsSync(join(CLI_DIR, "python", "icode_worker.py"))).toBe(true);
    expect(existsSync(join(CLI_DIR, "builtin", "index.json"))).toBe(true);
    expect(existsSync(join(CLI_DIR, "builtin-pipelines", "review-fan-out.json"))).toBe(true);
  });

  it("keeps the pipeline commands apart from the agents package, the model SDKs and the ACP SDK", () => {
    const bundle = readFileSync(join(CLI_DIR, "dist", "pipeline.js"), "utf8");
    // The bundled sources name their files in comments: none of the agents package or the SDKs is there.
    expect(bundle).toContain("packages/pipelines/src/");
    expect(bundle).not.toContain("packages/agents/src/");
    expect(bundle).not.toMatch(
      /node_modules\/\.pnpm\/(ai@|@ai-sdk|@agentclientprotocol|@modelcontextprotocol)/,
    );
    expect(bundle).not.toMatch(
      /require\("(ai|@ai-sdk\/[^"]+|@agentclientprotocol\/sdk|@modelcontextprotocol\/[^"]+)"\)/,
    );
    // SQLite is the one native module it loads, from the CLI's own dependencies.
    expect(bundle).toContain('require("better-sqlite3")');
  });

  it("compiles a command with V8's code cache once it exists, and replaces a cache that is wrong", async () => {
    // A command line the parser accepts, so that the bundle is loaded (and then refuses the session).
    const EXPORT = ["trajectory", "export", "--session", "none", "--format", "json", "--out", "-"];
    const cwd = tmpDir();
    const cache = join(CLI_DIR, ".cache", "v8", "trajectory-export.bin");
    const first = await runCli(EXPORT, { cwd });
    expect(first.exitCode).toBe(1);
    expect(existsSync(cache)).toBe(true);
    const again = await runCli(EXPORT, { cwd });
    expect(again).toEqual(first);

    writeFileSync(cache, "not a code cache");
    const afterBad = await runCli(EXPORT, { cwd });
    expect(afterBad).toEqual(first);
    expect(readFileSync(cache).toString()).not.toBe("not a code cache");
  });
});
