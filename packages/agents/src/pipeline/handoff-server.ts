/**
 * The engine's handoff MCP server for ACP pipeline nodes: a stdio MCP server (newline-delimited JSON-RPC)
 * with two tools, `submit_handoff` (the arguments are the handoff) and `report_blocked` (`{ reason }`).
 * Each call is appended as one JSON line to the file `ICODE_HANDOFF_FILE` names, which the node executor
 * reads when the agent's turn ends. The schema of `submit_handoff`'s input is read from the file
 * `ICODE_HANDOFF_SCHEMA_FILE` at every `tools/list` (a continued session's next node may have another
 * schema), else taken from `ICODE_HANDOFF_SCHEMA`.
 * Started by the agent (it is in `session/new`'s `mcpServers`) with the engine's Node binary; it needs no
 * package at run time.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const file = process.env["ICODE_HANDOFF_FILE"];
const schemaFile = process.env["ICODE_HANDOFF_SCHEMA_FILE"];

/** The current node's handoff schema. */
function currentSchema(): Record<string, unknown> {
  if (schemaFile !== undefined && schemaFile !== "") {
    try {
      return parseSchema(readFileSync(schemaFile, "utf8"));
    } catch {
      // fall back to the schema the session started with
    }
  }
  return parseSchema(process.env["ICODE_HANDOFF_SCHEMA"]);
}

function parseSchema(text: string | undefined): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text ?? "");
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // fall through: any object
  }
  return { type: "object" };
}

function tools() {
  return [
    {
      name: "submit_handoff",
      description:
        "Submit this node's structured handoff (a JSON object matching the node's output schema) as your final step. The engine checks it when your turn ends and tells you exactly what is wrong if it does not match.",
      inputSchema: { ...currentSchema(), type: "object" },
    },
    {
      name: "report_blocked",
      description:
        "Report that you cannot finish this node (missing access, contradictory task, …), with the reason. The node ends blocked; a person decides what happens next.",
      inputSchema: {
        type: "object",
        properties: { reason: { type: "string", description: "Why the node cannot be finished." } },
        required: ["reason"],
      },
    },
  ];
}

type Message = { jsonrpc?: string; id?: string | number | null; method?: string; params?: unknown };

function send(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

function record(entry: Record<string, unknown>): void {
  if (file === undefined || file === "") throw new Error("ICODE_HANDOFF_FILE is not set");
  appendFileSync(file, `${JSON.stringify({ ...entry, at: Date.now() })}\n`);
}

function call(params: unknown): { text: string; isError: boolean } {
  const p = (params ?? {}) as { name?: unknown; arguments?: unknown };
  const args = p.arguments ?? {};
  if (p.name === "submit_handoff") {
    record({ tool: "submit_handoff", handoff: args });
    return {
      text: "Handoff received. The engine checks it against the node's output schema when your turn ends; end your turn now.",
      isError: false,
    };
  }
  if (p.name === "report_blocked") {
    const reason = (args as { reason?: unknown }).reason;
    if (typeof reason !== "string" || reason.trim() === "") {
      return { text: "report_blocked needs a non-empty string `reason`.", isError: true };
    }
    record({ tool: "report_blocked", reason });
    return { text: "Reported blocked. End your turn now.", isError: false };
  }
  return { text: `unknown tool ${JSON.stringify(p.name)}`, isError: true };
}

function handle(message: Message): void {
  const { id, method } = message;
  if (id === undefined || id === null) return; // notifications (initialized, cancelled) need no answer
  switch (method) {
    case "initialize": {
      const asked = (message.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      send({
        id,
        result: {
          protocolVersion: typeof asked === "string" ? asked : "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "icode-handoff", version: "1" },
        },
      });
      return;
    }
    case "ping":
      send({ id, result: {} });
      return;
    case "tools/list":
      send({ id, result: { tools: tools() } });
      return;
    case "tools/call": {
      try {
        const { text, isError } = call(message.params);
        send({ id, result: { content: [{ type: "text", text }], isError } });
      } catch (error) {
        send({
          id,
          result: {
            content: [{ type: "text", text: `the engine could not take the call: ${String(error)}` }],
            isError: true,
          },
        });
      }
      return;
    }
    default:
      send({ id, error: { code: -32601, message: `method not found: ${String(method)}` } });
  }
}

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "") return;
  let message: Message;
  try {
    message = JSON.parse(line) as Message;
  } catch {
    send({ id: null, error: { code: -32700, message: "parse error" } });
    return;
  }
  handle(message);
});
