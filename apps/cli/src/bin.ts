#!/usr/bin/env node
import { main } from "./main";

const code = await main(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
process.exitCode = code;
