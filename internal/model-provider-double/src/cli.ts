#!/usr/bin/env node
/*
 * The provider double in its own process, for benchmarks: `node dist/cli.js --script FILE --port 0`.
 * The first stdout line is the JSON `{"url", "openaiBaseUrl", "anthropicBaseUrl", "port", "pid"}`.
 * This bin owns its process: it alone reads argv and cwd, prints and exits.
 */
import { resolve } from "node:path";
import { CLI_USAGE, parseCliArgs } from "./cli-args";
import { isProviderDoubleError } from "./errors";
import { loadScriptFile } from "./script-file";
import { startProviderDouble } from "./server";

async function main(): Promise<number> {
  const args = parseCliArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(CLI_USAGE);
    return 0;
  }
  const script = args.script === undefined ? {} : await loadScriptFile(resolve(process.cwd(), args.script));
  const provider = await startProviderDouble({ ...script, port: args.port });
  const { url, openaiBaseUrl, anthropicBaseUrl, port } = provider;
  process.stdout.write(
    `${JSON.stringify({ url, openaiBaseUrl, anthropicBaseUrl, port, pid: process.pid })}\n`,
  );
  await new Promise<void>((done) => {
    process.once("SIGTERM", done);
    process.once("SIGINT", done);
  });
  await provider.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (isProviderDoubleError(error)) {
      process.stderr.write(
        `icode-provider-double: ${error.message}\n${error.hint ? `hint: ${error.hint}\n` : ""}`,
      );
      process.exit(error.code === "invalid_arguments" ? 2 : 1);
    }
    process.stderr.write(
      `icode-provider-double: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
