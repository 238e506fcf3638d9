import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { NodeError, TokenUsage } from "@icode/workflow-scheduler";
import { AcpRun, type AcpRunnerOptions, resolveAcpOptions } from "../acp/run-attempt";
import type { AcpAttemptContext } from "../attempt";
import type { AgentTranscript } from "../transcript";
import { NodeFailure } from "./codes";
import { NodeAttemptIO } from "./io";
import {
  attemptRequest,
  type HandoffCall,
  type NodeSession,
  type SessionBinding,
  type SessionSetup,
  type TurnOutcome,
} from "./session";

/** The name of the engine's handoff MCP server in `session/new`. */
const HANDOFF_SERVER_NAME = "icode_handoff";

/** The handoff server script: `dist/pipeline/handoff-server.js` beside the built module, or the package's dist. */
function handoffServerScript(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, "handoff-server.js"),
    join(here, "..", "..", "dist", "pipeline", "handoff-server.js"),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (found === undefined) {
    throw new NodeFailure(
      "pipeline_node_handoff_server_missing",
      `the handoff MCP server script is missing (looked for ${candidates.join(", ")}); build @icode/workflow-agents`,
    );
  }
  return found;
}

/** Reads the handoff calls appended to `file` since `offset` (bytes); returns them and the new offset. */
function readCalls(file: string, offset: number): { calls: HandoffCall[]; offset: number } {
  let buffer: Buffer;
  try {
    buffer = readFileSync(file);
  } catch {
    return { calls: [], offset };
  }
  const end = buffer.lastIndexOf(0x0a) + 1;
  if (end <= offset) return { calls: [], offset };
  const calls: HandoffCall[] = [];
  for (const line of buffer.subarray(offset, end).toString("utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      const entry = JSON.parse(line) as { tool?: unknown; handoff?: unknown; reason?: unknown };
      if (entry.tool === "submit_handoff") calls.push({ tool: "submit_handoff", handoff: entry.handoff });
      else if (entry.tool === "report_blocked" && typeof entry.reason === "string")
        calls.push({ tool: "report_blocked", reason: entry.reason });
    } catch {
      // a torn line cannot happen (one append per call); anything unreadable is not a call
    }
  }
  return { calls, offset: end };
}

/**
 * A pipeline node's ACP session: the profile's agent process with one session, kept open between turns
 * (correction rounds) and attempts (`reuse_session_of`). The session gets the engine's handoff server
 * (stdio, started by the agent with this Node binary), which appends each `submit_handoff` /
 * `report_blocked` call to a file the session reads after every turn.
 */
export class AcpNodeSession implements NodeSession {
  readonly runtime = "acp";
  busy = false;
  private run: AcpRun | null = null;
  private offset = 0;
  private captured: AgentTranscript | null = null;
  private binding: SessionBinding;
  private ended = false;

  private constructor(
    public ref: string,
    readonly runId: string,
    readonly setup: SessionSetup,
    private readonly callsFile: string,
    private readonly schemaFile: string,
    binding: SessionBinding,
    private readonly effort: string | null,
  ) {
    this.binding = binding;
  }

  /** Starts the agent and opens the session for the first attempt; throws what `errorOf` reads. */
  static async open(options: {
    ref: string;
    setup: SessionSetup;
    binding: SessionBinding;
    attemptDir: string;
    effort: string | null;
    acp: Omit<AcpRunnerOptions, "mcpServers">;
  }): Promise<AcpNodeSession> {
    const script = handoffServerScript();
    const callsFile = join(options.attemptDir, "handoff-calls.jsonl");
    const schemaFile = join(options.attemptDir, "handoff-schema.json");
    writeFileSync(callsFile, "");
    writeFileSync(schemaFile, JSON.stringify(options.binding.outputSchema));
    const session = new AcpNodeSession(
      options.ref,
      options.binding.runId,
      options.setup,
      callsFile,
      schemaFile,
      options.binding,
      options.effort,
    );
    const resolved = resolveAcpOptions({
      ...options.acp,
      mcpServers: () => [
        {
          type: "stdio",
          name: HANDOFF_SERVER_NAME,
          command: process.execPath,
          args: [script],
          env: {
            ICODE_HANDOFF_FILE: callsFile,
            ICODE_HANDOFF_SCHEMA_FILE: schemaFile,
            ICODE_HANDOFF_SCHEMA: JSON.stringify(options.binding.outputSchema),
          },
        },
      ],
    });
    const run = new AcpRun(session.context(options.binding), resolved);
    session.run = run;
    try {
      await run.open();
      // The ref names the live agent and its ACP session.
      session.ref = `${options.ref}:${run.session}`;
    } catch (error) {
      const known = await run.errorOf(error);
      await run.shutdown();
      if (known === null) throw error;
      throw new NodeFailure(known.class, known.message);
    }
    return session;
  }

  private context(binding: SessionBinding): AcpAttemptContext {
    const { setup } = this;
    return {
      request: attemptRequest(binding, setup.profile, ""),
      io: new NodeAttemptIO(binding.signal, binding.activity),
      profile: setup.profile,
      config: setup.config,
      workspace: setup.workspace,
      env: setup.env,
      chrysHome: setup.chrysHome,
      homeDir: setup.homeDir,
      approvalMode: binding.approvalMode,
      ...(binding.approve === undefined ? {} : { approve: binding.approve }),
      transcript: (t) => {
        this.captured = t;
      },
      modelId: setup.model,
      effort: this.effort,
    };
  }

  get sessionId(): string | null {
    return this.run?.session ?? null;
  }

  alive(): boolean {
    return !this.ended && this.run !== null && this.run.alive;
  }

  bind(binding: SessionBinding): void {
    this.binding = binding;
    // The next node's schema, for the handoff server's next `tools/list`.
    try {
      writeFileSync(this.schemaFile, JSON.stringify(binding.outputSchema));
    } catch {
      // the prompt states the schema too
    }
    this.captured = null;
    this.run?.bind(this.context(binding));
  }

  async turn(text: string): Promise<TurnOutcome> {
    const run = this.run!;
    try {
      const result = await run.turn(text, true);
      return { text: result, calls: this.newCalls() };
    } catch (error) {
      this.newCalls();
      throw error;
    }
  }

  private newCalls(): HandoffCall[] {
    const read = readCalls(this.callsFile, this.offset);
    this.offset = read.offset;
    return read.calls;
  }

  async errorOf(error: unknown): Promise<NodeError | null> {
    return (await this.run?.errorOf(error)) ?? null;
  }

  transcript(outcome: string): AgentTranscript {
    this.captured = null;
    this.run?.record(outcome);
    const t = this.captured as AgentTranscript | null;
    if (t === null) throw new Error("the ACP session recorded no transcript");
    return { ...t, activation_id: this.binding.nodeId, node_id: this.binding.nodeId };
  }

  usage(): TokenUsage | null {
    return this.run?.usage() ?? null;
  }

  async close(): Promise<void> {
    this.ended = true;
    await this.run?.shutdown();
  }
}
