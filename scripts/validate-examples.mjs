// Validates every shipped example with the built CLI; exits non-zero when one does not PASS.
// An example is a workflow (`examples/<name>.py` or a workflow folder) or a project (`examples/<name>/` with
// `.chrys/workflows/`), whose workflows are validated from the project folder, so its agent profiles count.
// Agent nodes need a model to bind to: validation runs with a configuration directory holding one model
// profile as the default (validate never calls it).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const home = mkdtempSync(join(tmpdir(), "icode-examples-"));
mkdirSync(join(home, "models"));
writeFileSync(
  join(home, "models", "example.yaml"),
  "name: Example model\nprovider: openai\nmodel_id: example\nbase_url: http://127.0.0.1:9/v1\napi_key: unused\n",
);
writeFileSync(join(home, "settings.yaml"), "model:\n  profile:\n    active: Example model\n");

const targets = [];
for (const entry of readdirSync(join(root, "examples"), { withFileTypes: true })) {
  if (entry.name.startsWith(".") || entry.name.startsWith("_")) continue;
  const path = join("examples", entry.name);
  const projectWorkflows = join(root, path, ".chrys", "workflows");
  if (entry.isDirectory() && existsSync(projectWorkflows)) {
    for (const name of readdirSync(projectWorkflows)) {
      if (name.endsWith(".py")) targets.push({ cwd: join(root, path), target: join(".chrys", "workflows", name) });
    }
  } else if (entry.isDirectory() || entry.name.endsWith(".py")) {
    targets.push({ cwd: root, target: path });
  }
}
let failed = 0;
for (const { cwd, target } of targets) {
  const r = spawnSync(process.execPath, [join(root, "apps/cli/dist/bin.js"), "workflow", "validate", target], {
    cwd,
    stdio: "inherit",
    env: { ...process.env, CHRYS_HOME: home },
  });
  if (r.status !== 0) failed++;
}
rmSync(home, { recursive: true, force: true });
console.log(`${targets.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
