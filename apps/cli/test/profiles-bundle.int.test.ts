/**
 * `icode agents` / `icode models` load no model or protocol SDK and no native module (issue 18, item 1: "a
 * front end that lists profiles must not import the AI SDK or the ACP SDK"). Two views of the built CLI:
 * what went into the `profiles` bundle (its source map lists every file bundled, checked against the
 * `workflow-run` bundle, which must hold them), and what a listing process actually loads (a `--require`
 * hook records every module request and the files Node compiles).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { REPO_ROOT } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { icode, project } from "./run-helpers";

const DIST = join(REPO_ROOT, "apps", "cli", "dist");

/** What must stay out of a listing: the agents package, the AI SDK, the ACP SDK, MCP, SQLite, the records. */
const FORBIDDEN = [
  /(^|\/)packages\/agents\//,
  /\/node_modules\/ai\//,
  /\/node_modules\/@ai-sdk\//,
  /\/node_modules\/@agentclientprotocol\//,
  /\/node_modules\/@modelcontextprotocol\//,
  /better-sqlite3/,
  /(^|\/)packages\/records\//,
  /(^|\/)packages\/python-bridge\//,
];

const sourcesOf = (bundle: string): string[] =>
  (JSON.parse(readFileSync(join(DIST, `${bundle}.js.map`), "utf8")) as { sources: string[] }).sources;

describe("the profiles bundle", () => {
  it("bundles agent-profiles and none of the agents package or its SDKs (workflow-run does bundle them)", () => {
    const listing = sourcesOf("profiles");
    expect(listing.some((s) => s.includes("packages/agent-profiles/src/listings.ts"))).toBe(true);
    for (const pattern of FORBIDDEN) expect(listing.filter((s) => pattern.test(s))).toEqual([]);
    // The same check finds them where they belong: the test would notice if the bundle layout changed.
    const run = sourcesOf("workflow-run");
    for (const pattern of FORBIDDEN.slice(0, 4)) expect(run.some((s) => pattern.test(s))).toBe(true);
  });

  it.each([["agents"], ["models"]])(
    "icode %s --json requires only Node's own modules and compiles only the bin and its bundle",
    async (command) => {
      const p = project({ ".home/models/m.yaml": "name: M\nmodel_id: x\n" });
      const log = join(p.dir, "loaded.json");
      const hook = join(p.dir, "record-loads.cjs");
      writeFileSync(
        hook,
        `const Module = require("node:module");
const fs = require("node:fs");
const requests = new Set();
const compiled = new Set();
const load = Module._load;
Module._load = function (request, parent, isMain) {
  requests.add(request);
  return load.apply(this, arguments);
};
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) {
  compiled.add(filename);
  return compile.apply(this, arguments);
};
process.on("exit", () => {
  fs.writeFileSync(${JSON.stringify(log)}, JSON.stringify({ requests: [...requests], compiled: [...compiled] }));
});
`,
      );
      const r = await icode(p, [command, "--json"], { NODE_OPTIONS: `--require ${hook}` });
      expect(r.exitCode, r.stderr).toBe(0);
      const { requests, compiled } = JSON.parse(readFileSync(log, "utf8")) as {
        requests: string[];
        compiled: string[];
      };
      const builtin = new Set(builtinModules);
      const foreign = requests.filter(
        (m) => !m.startsWith("node:") && !builtin.has(m) && !builtin.has(m.split("/")[0]!),
      );
      // The bin itself is the main module (an absolute path); the bundle is compiled by load-command.ts.
      expect(foreign.filter((m) => m !== join(DIST, "bin.js"))).toEqual([]);
      expect(compiled.filter((f) => f !== hook)).toEqual([join(DIST, "bin.js")]);
    },
  );
});
