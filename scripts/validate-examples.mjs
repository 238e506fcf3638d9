// Validates every shipped example with the built CLI; exits non-zero when one does not PASS.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const examples = readdirSync(join(root, "examples"), { withFileTypes: true })
  .filter((e) => !e.name.startsWith(".") && !e.name.startsWith("_"))
  .filter((e) => e.isDirectory() || e.name.endsWith(".py"))
  .map((e) => join("examples", e.name));
let failed = 0;
for (const example of examples) {
  const r = spawnSync(
    process.execPath,
    [join(root, "apps/cli/dist/bin.js"), "workflow", "validate", example],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
  if (r.status !== 0) failed++;
}
console.log(`${examples.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
