// Ships the stdlib-only `chrys.workflows` SDK and worker inside this package: repo `python/chrys` → `python/chrys`.
import { cpSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const from = join(here, "..", "..", "..", "python", "chrys");
const to = join(here, "..", "python", "chrys");
rmSync(to, { recursive: true, force: true });
cpSync(from, to, {
  recursive: true,
  filter: (src) => !src.includes("__pycache__") && !src.endsWith(".pyc"),
});
