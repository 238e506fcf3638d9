/**
 * A child process for the spawn tests: spawns a worker with `spawnWorker`, prints its pid and returns without
 * adopting or discarding it. Node must then exit on its own: an unadopted worker keeps nothing alive.
 *
 * argv: python cwd cacheDir sdkRoot
 */
import { spawnWorker } from "../../src/spawn";

const [python, cwd, cacheDir, sdkRoot] = process.argv.slice(2) as [string, string, string, string];
const spawned = spawnWorker({ python, cwd, cacheDir, sdkRoot, loadOnly: true });
process.stdout.write(`${spawned.child.pid}\n`);
