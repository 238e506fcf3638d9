import { fileURLToPath } from "node:url";

/**
 * The built CLI (`dist/cli.js`), for a benchmark that runs the double in its own process:
 * `execa(process.execPath, [PROVIDER_DOUBLE_CLI, "--script", file])`, then read `{"url": …}` from the
 * first stdout line. Both `src/` and `dist/` sit one level under the package, so this holds for either.
 */
export const PROVIDER_DOUBLE_CLI = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
