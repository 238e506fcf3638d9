#!/usr/bin/env node
import { main } from "./main";

// No top-level await: the build makes this file CommonJS (see tsup.config.ts).
void main(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
}).then((code) => {
  process.exitCode = code;
});
