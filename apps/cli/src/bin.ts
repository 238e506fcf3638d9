#!/usr/bin/env node
import { isatty } from "node:tty";
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
    // EIO: the terminal is gone (SIGHUP).
    if (error.code !== "EPIPE" && error.code !== "EIO") throw error;
    closed = true;
  });
  return { write: (chunk) => closed || stream.write(chunk) };
}

/** Settles once what was written to `stream` before has been handed to the system (or the stream failed). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((done) => {
    if (stream.destroyed) done();
    else stream.write("", () => done());
  });
}

/**
 * Whether nothing but the output streams themselves (pipes or terminals) is left open once a command is
 * done. Anything else (a non-blocking hook still running, a file being written, a timer) keeps the process
 * alive, as Node always does.
 */
function onlyOutputLeft(): boolean {
  let streams = 0;
  for (const resource of process.getActiveResourcesInfo()) {
    if (resource !== "PipeWrap" && resource !== "TTYWrap") return false;
    streams++;
  }
  return streams <= 3;
}

/**
 * The working directory, or, when it was deleted under the shell, the path the shell still names (`$PWD`,
 * else ""): `process.cwd()` throws then, and the commands that need the directory report it (exit 1).
 */
function workingDirectory(): string {
  try {
    return process.cwd();
  } catch {
    return process.env["PWD"] ?? "";
  }
}

// No top-level await: the build makes this file CommonJS (see tsup.config.ts).
void main(process.argv.slice(2), {
  cwd: workingDirectory(),
  env: process.env,
  // Opened only when a command reads it (`--input-file -`, `--interactive`).
  get stdin() {
    return process.stdin;
  },
  stdout: toleratingClosedReader(process.stdout),
  stderr: toleratingClosedReader(process.stderr),
  // Looked at only by a command that needs it (`--interactive`).
  get terminal() {
    return { stdin: isatty(0), stderr: isatty(2), columns: process.stderr.columns };
  },
}).then(async (code) => {
  process.exitCode = code;
  await flushed(process.stdout);
  await flushed(process.stderr);
  // Done, and nothing else running: exit now instead of letting Node tear the heap down first, a few
  // milliseconds after every command (the exit handlers still run).
  if (onlyOutputLeft()) process.exit(code);
});
