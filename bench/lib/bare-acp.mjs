// The bare ACP SDK client both ACP floors use (the agent rows' and the pipeline row's): one session of the
// agent double with no engine in between, so the two floors measure the same thing the same way.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

/** Resolves once a process exits, with its code (or signal). */
export function exitOf(child) {
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(signal ?? code));
  });
}

/**
 * Spawn `agentCommand` in `cwd` with `env`, `initialize`, `session/new`, then one `session/prompt` per text
 * (a function is called for its text), each answered `expected` with `end_turn`; close stdin and wait for a
 * clean exit. Returns `{ answers, turns, start_ms }`: turn times when `timeTurns`, and the time from the
 * spawn to `session/new` answered.
 */
export async function bareAcpSession(acp, agentCommand, { cwd, env, texts, expected, timeTurns = false }) {
  const t0 = performance.now();
  const child = spawn(agentCommand.command, agentCommand.args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  const exited = exitOf(child);
  child.stderr.resume();
  let answer = "";
  const app = acp.client({ name: "bench" }).onNotification("session/update", ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      answer += update.content.text;
    }
  });
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  const answers = [];
  const turns = [];
  let startMs;
  try {
    await connection.agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "bench", version: "0" },
    });
    const { sessionId } = await connection.agent.request("session/new", { cwd, mcpServers: [] });
    startMs = performance.now() - t0;
    for (const text of texts) {
      answer = "";
      const t1 = performance.now();
      const { stopReason } = await connection.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: typeof text === "function" ? text() : text }],
      });
      // Updates sent before the answer may still be on their way through the SDK's handlers.
      await new Promise((resolve) => setImmediate(resolve));
      if (timeTurns) turns.push(performance.now() - t1);
      if (stopReason !== "end_turn" || answer !== expected) {
        throw new Error(`the agent answered ${JSON.stringify(answer)} (${stopReason}), expected ${expected}`);
      }
      answers.push(answer);
    }
  } finally {
    connection.close();
    child.stdin.end();
  }
  const code = await exited;
  if (code !== 0) throw new Error(`the agent exited with ${code}`);
  return { answers, turns, start_ms: startMs };
}
