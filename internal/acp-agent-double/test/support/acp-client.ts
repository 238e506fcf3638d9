import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import {
  type ClientConnection,
  client,
  type InitializeResponse,
  type McpServer,
  type NewSessionResponse,
  ndJsonStream,
  type PromptResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
} from "@agentclientprotocol/sdk/unstable";
import { tmpDir } from "@icode/test-utils";
import { execa, type ResultPromise } from "execa";
import {
  type AcpDoubleScriptInput,
  AGENT_BIN,
  agentCommand,
  agentEnv,
  writeAgentScript,
} from "../../src/index";

export function requireBuilt(): void {
  if (!existsSync(AGENT_BIN)) {
    throw new Error(
      `${AGENT_BIN} is missing; build first: npx -y pnpm@10.34.9 exec turbo run build --filter=@icode/acp-agent-double...`,
    );
  }
}

export type StartOptions = {
  /** Agent log file (ACP_DOUBLE_LOG). */
  log?: string;
  /** Pass the script inline in ACP_DOUBLE_SCRIPT instead of as `--script FILE`. */
  inline?: boolean;
  /** What the client advertises; both fs methods by default. */
  fs?: { readTextFile: boolean; writeTextFile: boolean };
  /** How the client answers permission requests; the first allow option by default. */
  permission?: (
    request: RequestPermissionRequest,
  ) => RequestPermissionResponse | Promise<RequestPermissionResponse>;
};

/** A spawned agent double driven by a real ACP client (the SDK's client side) over its stdio. */
export type AgentUnderTest = {
  child: ResultPromise<{ reject: false; buffer: false }>;
  connection: ClientConnection;
  dir: string;
  updates: SessionNotification[];
  permissionRequests: RequestPermissionRequest[];
  fsRequests: { method: string; path: string }[];
  stderr(): string;
  initialize(): Promise<InitializeResponse>;
  newSession(options?: { cwd?: string; mcpServers?: McpServer[] }): Promise<NewSessionResponse>;
  prompt(sessionId: string, text: string): Promise<PromptResponse>;
  updatesOf(sessionId: string): SessionUpdate[];
  /** Closes stdin (the agent then exits) and waits for the process. */
  close(): Promise<{ exitCode?: number; signal?: string }>;
};

export async function startAgent(
  script: AcpDoubleScriptInput,
  options: StartOptions = {},
): Promise<AgentUnderTest> {
  requireBuilt();
  const dir = tmpDir("acp-double-");
  const scriptFile = options.inline ? undefined : writeAgentScript(join(dir, "script.json"), script);
  const { command, args } = agentCommand(scriptFile ? { script: scriptFile } : {});
  const env = agentEnv({
    ...(options.inline ? { script: JSON.stringify(script) } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  const child = execa(command, args, {
    env,
    reject: false,
    buffer: false,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const updates: SessionNotification[] = [];
  const permissionRequests: RequestPermissionRequest[] = [];
  const fsRequests: { method: string; path: string }[] = [];
  const permission =
    options.permission ??
    ((request: RequestPermissionRequest): RequestPermissionResponse => {
      const allow = request.options.find((o) => o.kind.startsWith("allow"));
      return {
        outcome: allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" },
      };
    });
  const app = client({ name: "icode-test-client" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params);
    })
    .onRequest("session/request_permission", async ({ params }) => {
      permissionRequests.push(params);
      return permission(params);
    })
    .onRequest("fs/read_text_file", ({ params }) => {
      fsRequests.push({ method: "fs/read_text_file", path: params.path });
      const lines = readFileSync(params.path, "utf8").split("\n");
      const from = (params.line ?? 1) - 1;
      const to = params.limit === undefined || params.limit === null ? lines.length : from + params.limit;
      return { content: lines.slice(from, to).join("\n") };
    })
    .onRequest("fs/write_text_file", ({ params }) => {
      fsRequests.push({ method: "fs/write_text_file", path: params.path });
      mkdirSync(dirname(params.path), { recursive: true });
      writeFileSync(params.path, params.content);
      return {};
    });
  const connection = app.connect(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  const fs = options.fs ?? { readTextFile: true, writeTextFile: true };
  return {
    child,
    connection,
    dir,
    updates,
    permissionRequests,
    fsRequests,
    stderr: () => stderr,
    initialize: () =>
      connection.agent.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: { fs, terminal: false },
      }),
    newSession: (session = {}) =>
      connection.agent.request("session/new", {
        cwd: session.cwd ?? dir,
        mcpServers: session.mcpServers ?? [],
      }),
    prompt: (sessionId, text) =>
      connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }),
    updatesOf: (sessionId) => updates.filter((u) => u.sessionId === sessionId).map((u) => u.update),
    async close() {
      child.stdin.end();
      const result = await child;
      return {
        ...(result.exitCode === undefined ? {} : { exitCode: result.exitCode }),
        ...(result.signal === undefined ? {} : { signal: result.signal }),
      };
    },
  };
}

/** An agent double after `initialize` and `session/new`, for tests about turns. */
export async function startSession(
  script: AcpDoubleScriptInput,
  options: StartOptions & { mcpServers?: McpServer[] } = {},
): Promise<AgentUnderTest & { sessionId: string }> {
  const agent = await startAgent(script, options);
  await agent.initialize();
  const { sessionId } = await agent.newSession({
    ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
  });
  return Object.assign(agent, { sessionId });
}

/** The text of the agent message chunks among `updates`, joined. */
export function messageText(updates: readonly SessionUpdate[]): string {
  return updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) =>
      u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : "",
    )
    .join("");
}

/** What a rejected ACP request carried: its JSON-RPC code and message. */
export async function rpcError(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (error) {
    const { code, message } = error as { code: number; message: string };
    return { code, message };
  }
  throw new Error("expected the request to fail");
}
