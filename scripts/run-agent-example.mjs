// Runs examples/agent-review end to end with the built CLI: a Python node, the Reviewer agent (a native agent
// loop calling a model over HTTP), a Python node. The model provider is @icode/model-provider-double, a
// loopback stand-in started in its own process, so the example needs no key and no network; the
// configuration directory is a temporary one with a model profile pointing at it.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const root = new URL("..", import.meta.url).pathname;
const project = join(root, "examples", "agent-review");
const double = spawn(
  process.execPath,
  [join(root, "internal/model-provider-double/dist/cli.js"), "--script", join(project, "provider-script.json"), "--port", "0"],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const first = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: double.stdout });
  lines.once("line", (line) => resolve(JSON.parse(line)));
  double.once("exit", (code) => reject(new Error(`the provider double exited with ${code} before it listened`)));
});
const home = mkdtempSync(join(tmpdir(), "icode-agent-example-"));
let status = 1;
try {
  mkdirSync(join(home, "models"));
  writeFileSync(
    join(home, "models", "double.yaml"),
    `name: Loopback double\nprovider: openai\nmodel_id: reviewer\nbase_url: ${first.openaiBaseUrl}\napi_key: unused\n`,
  );
  writeFileSync(join(home, "settings.yaml"), "model:\n  profile:\n    active: Loopback double\n");
  const diff = [
    "--- a/app.py",
    "+++ b/app.py",
    "@@ -1,2 +1,3 @@",
    " def average(values):",
    "-    return sum(values) / len(values)",
    "+    total = sum(values)",
    "+    return total / len(values)",
  ].join("\n");
  const run = spawnSync(
    process.execPath,
    [join(root, "apps/cli/dist/bin.js"), "workflow", "run", "review-changes", "--trust", `--input=${diff}`],
    { cwd: project, stdio: "inherit", env: { ...process.env, CHRYS_HOME: home } },
  );
  status = run.status ?? 1;
} finally {
  double.kill("SIGTERM");
  rmSync(home, { recursive: true, force: true });
}
process.exit(status);
