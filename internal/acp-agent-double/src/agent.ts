/**
 * The ACP agent double as a process: `node dist/agent.js [--script FILE]`, the script otherwise from
 * `ACP_DOUBLE_SCRIPT` (a path, or inline JSON), the log file from `ACP_DOUBLE_LOG`. It speaks ACP on
 * stdin/stdout through the SDK's agent side and exits when stdin closes.
 */
import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk/unstable";
import { createDoubleAgent } from "./app";
import { createAgentLog } from "./log";
import { LOG_ENV, loadAgentScript } from "./script-file";
import type { AgentHost } from "./turn";

const log = createAgentLog(process.env[LOG_ENV], process.pid);
const SIGNALS = { SIGTERM: 15, SIGINT: 2 } as const;

function fail(reason: "fatal", error: unknown): never {
  process.stderr.write(
    `acp-agent-double: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  log({ event: "exit", code: 2, signal: null, reason });
  process.exit(2);
}

function main(): void {
  let loaded: ReturnType<typeof loadAgentScript>;
  try {
    loaded = loadAgentScript(process.argv.slice(2), process.env);
  } catch (error) {
    fail("fatal", error);
  }
  log({ event: "start", script: loaded.script.name ?? null, source: loaded.source });

  const host: AgentHost = {
    log,
    stderr: (text) => {
      process.stderr.write(text);
    },
    async crash(how) {
      log({
        event: "exit",
        code: typeof how === "number" ? how : null,
        signal: typeof how === "string" ? how : null,
        reason: "crash",
      });
      await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
      if (typeof how === "number") process.exit(how);
      for (const signal of Object.keys(SIGNALS)) process.removeAllListeners(signal);
      process.kill(process.pid, how);
      return new Promise<never>(() => {});
    },
  };

  const agent = createDoubleAgent(loaded.script, host);
  const connection = agent.app.connect(
    ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
  );
  void connection.closed.then(async () => {
    await agent.close();
    log({ event: "exit", code: 0, signal: null, reason: "stdin_closed" });
    process.exit(0);
  });
  for (const [signal, number] of Object.entries(SIGNALS)) {
    process.once(signal, () => {
      log({ event: "exit", code: 128 + number, signal, reason: "signal" });
      void agent.close().finally(() => process.exit(128 + number));
    });
  }
  process.on("uncaughtException", (error) => fail("fatal", error));
}

main();
