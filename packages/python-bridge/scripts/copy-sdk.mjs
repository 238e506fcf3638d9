// Ships the stdlib-only `chrys.workflows` SDK and worker inside this package: repo `python/chrys` → `python/chrys`,
// and the worker's bootstrap `python/icode_worker.py` beside it.
import { copyFileSync, cpSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..", "python");
const shipped = join(here, "..", "python");
rmSync(shipped, { recursive: true, force: true });
cpSync(join(repo, "chrys"), join(shipped, "chrys"), {
  recursive: true,
  filter: (src) => !src.includes("__pycache__") && !src.endsWith(".pyc"),
});
copyFileSync(join(repo, "icode_worker.py"), join(shipped, "icode_worker.py"));
