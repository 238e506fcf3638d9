// Marks `dist/` as CommonJS (the build's format, see tsup.config.ts; the package itself is "type": "module"),
// and ships what the bundled CLI finds beside its `dist/` folder, as the packages it bundles ship it:
//   repo `python/chrys` and `python/icode_worker.py` → `python/` (the worker and SDK; `sdkRoot()` of
//   @icode/python-bridge looks in `<dist>/../python`), and the engine's `builtin/` → `builtin/` (the engine's
//   `defaultBuiltinDir()` is `<dist>/../builtin`), and the built-in pipelines of @icode/pipelines →
//   `builtin-pipelines/` (its `builtinPipelinesDir()` is `<dist>/../builtin-pipelines`).
import { copyFileSync, cpSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const cli = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(cli, "..", "..");
const noBytecode = (src) => !src.includes("__pycache__") && !src.endsWith(".pyc");

writeFileSync(join(cli, "dist", "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);

rmSync(join(cli, "python"), { recursive: true, force: true });
cpSync(join(repo, "python", "chrys"), join(cli, "python", "chrys"), { recursive: true, filter: noBytecode });
copyFileSync(join(repo, "python", "icode_worker.py"), join(cli, "python", "icode_worker.py"));

rmSync(join(cli, "builtin"), { recursive: true, force: true });
cpSync(join(repo, "packages", "engine", "builtin"), join(cli, "builtin"), {
  recursive: true,
  filter: noBytecode,
});

rmSync(join(cli, "builtin-pipelines"), { recursive: true, force: true });
cpSync(join(repo, "packages", "pipelines", "builtin-pipelines"), join(cli, "builtin-pipelines"), {
  recursive: true,
});
