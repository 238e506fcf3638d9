import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { findCycles, importsOf, workspaceCycles } from "./check-cycles.mjs";

test("reads every kind of import, type-only ones included", () => {
  const source = `import { a } from "./a";
import type { B } from "./b";
export { c } from "./c";
export * as d from "./d";
import "./e";
const f = await import("./f");
import {
  g,
  h,
} from "./gh";`;
  assert.deepEqual(
    importsOf(source),
    ["./a", "./b", "./c", "./d", "./e", "./gh", "./f"].sort((x, y) => source.indexOf(x) - source.indexOf(y)),
  );
});

test("finds each cycle once, and none in a tree", () => {
  const graph = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a", "d"]],
    ["d", []],
    ["e", ["e"]],
  ]);
  assert.deepEqual(findCycles(graph), [["a", "b", "c"], ["e"]]);
  assert.deepEqual(
    findCycles(
      new Map([
        ["a", ["b"]],
        ["b", []],
      ]),
    ),
    [],
  );
});

test("fails on a cycle between two modules of a package, through a type-only import", () => {
  const root = mkdtempSync(join(tmpdir(), "cycles-"));
  mkdirSync(join(root, "packages", "p", "src"), { recursive: true });
  writeFileSync(join(root, "packages", "p", "package.json"), JSON.stringify({ name: "@icode/p" }));
  writeFileSync(join(root, "packages", "p", "src", "run.ts"), 'import { Scheduler } from "./scheduler";\n');
  writeFileSync(join(root, "packages", "p", "src", "scheduler.ts"), 'import type { Run } from "./run";\n');
  const cycles = workspaceCycles(root);
  assert.equal(cycles.length, 1);
  assert.equal(cycles[0].where, "@icode/p");
  assert.deepEqual(
    cycles[0].cycle.map((f) => f.split("/").pop()),
    ["run.ts", "scheduler.ts"],
  );
});

test("the workspace has no import cycle", () => {
  assert.deepEqual(workspaceCycles(join(import.meta.dirname, "..")), []);
});
