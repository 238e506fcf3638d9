#!/usr/bin/env node
import type { Writable } from "./io";
import { main } from "./main";

/**
 * `process.stdout`/`stderr` for the CLI. A reader that goes away first (`icode workflow list | head -n 3`)
 * is not an error: what is left to print is dropped and the command finishes as it would have (a run still
 * records its end), instead of Node crashing on an unhandled `EPIPE`.
 */
function toleratingClosedReader(stream: NodeJS.WriteStream): Writable {
  let closed = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    closed = true;
  });
  return { write: (chunk) => closed || stream.write(chunk) };
}

// No top-level await: the build makes this file CommonJS (see tsup.config.ts).
void main(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: toleratingClosedReader(process.stdout),
  stderr: toleratingClosedReader(process.stderr),
}).then((code) => {
  process.exitCode = code;
});
