import { Readable, Writable } from "node:stream";
import {
  type ClientConnection,
  client,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
} from "@agentclientprotocol/sdk/unstable";
import { isWorkflowError } from "@icode/workflow-errors";
import type { AttemptResult, NodeError } from "@icode/workflow-scheduler";
import { version } from "../../package.json";
import type { AcpAttempt, AcpAttemptContext } from "../attempt";
import { AgentProcess } from "./agent-process";
import { type AcpErrorClass, AcpErrorClassSchema, type AcpWarningCode, acpNodeError } from "./codes";
import { configureSession } from "./configure";
import { AcpFailure, describeError, RPC, rpcErrorOf } from "./failure";
import { type AcpLaunch, resolveLaunch } from "./launch";
import { type AcpMcpServer, acpMcpServers } from "./mcp-servers";
import { gitRoot, permissionResponse, planPermission } from "./permission";
import { STDERR_LIMIT_BYTES, StderrTail } from "./stderr-tail";
import { TurnRecorder } from "./turn-recorder";
import {
  type AuthMethod,
  type InitializeAnswer,
  InitializeAnswerSchema,
  NewSessionAnswerSchema,
  PromptAnswerSchema,
  parseAnswer,
  selfServeAuthMethod,
} from "./wire";
import { FileRequestError, WorkspaceFs } from "./workspace-fs";

/** Options of an ACP runner; every one has a default fit for the CLI. */
export interface AcpRunnerOptions {
  /**
   * MCP servers of the engine's own to give each attempt's session (the pipelines' handoff server), by
   * attempt. A profile's `tools` never apply to ACP agents.
   */
  readonly mcpServers?: (
    context: AcpAttemptContext,
  ) => readonly AcpMcpServer[] | Promise<readonly AcpMcpServer[]>;
  /** How long each step of stopping the agent waits (after `session/cancel`, after closing its stdin,
   * after SIGTERM) before the next. Default 3000 ms. */
  readonly graceMs?: number;
  /** Connection tries per attempt while the agent cannot be reached during the handshake. Default 3. */
  readonly connectTries?: number;
  /** The part of the agent's stderr kept (its end). Default 64 KiB. */
  readonly stderrLimitBytes?: number;
  /** Clock for the transcript's timestamps. Default `Date.now`. */
  readonly now?: () => number;
  /** Which base environment the child gets (POSIX or Windows names). Default `process.platform`. */
  readonly platform?: NodeJS.Platform;
}

const DEFAULT_GRACE_MS = 3000;
const DEFAULT_CONNECT_TRIES = 3;

/** Why the adapter stopped waiting for the agent. */
type Stop =
  | { why: "aborted"; reason: string }
  | { why: "closed" }
  | { why: "handshake_timeout"; step: string }
  | { why: "idle" };

class Stopped extends Error {
  constructor(readonly stop: Stop) {
    super(`stopped: ${stop.why}`);
  }
}

/** The connection try did not get through the handshake: try again, or end `acp_unreachable`. */
class Unreachable extends Error {}

function isAcpFailure(error: unknown): error is AcpFailure {
  return isWorkflowError(error) && AcpErrorClassSchema.safeParse(error.code).success;
}

/** The longest delay a Node timer takes (a longer one would fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

function timerMs(seconds: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(1, Math.round(seconds * 1000)));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** The text sent as the prompt: the node input, then `instructions_suffix` after a blank line. */
export function promptText(input: string, suffix: string | null): string {
  if (suffix === null || suffix.trim() === "") return input;
  return input === "" ? suffix : `${input}\n\n${suffix}`;
}

function exitText(proc: AgentProcess): string {
  const exit = proc.exitStatus;
  if (exit === null) return "closed its output";
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

function stderrHint(stderr: StderrTail): string {
  const lines = stderr
    .captured()
    .text.split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const last = lines.at(-1);
  return last === undefined ? "" : `; its stderr ends with: ${last.slice(0, 300)}`;
}

/**
 * One ACP attempt, start to end: the process, the connection, the session and the turn. Built per call
 * by `createAcpAttempt`; holds everything that must be let go when the attempt ends.
 */
export class AcpRun {
  private recorder: TurnRecorder;
  private readonly stderr: StderrTail;
  private readonly fs: WorkspaceFs;
  private readonly repository: string | null;
  private proc: AgentProcess | null = null;
  private connection: ClientConnection | null = null;
  private sessionId: string | null = null;
  /** Stops the current wait; replaced for every connection try. */
  private stop = new AbortController();
  private aborted: string | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Idle time is not counted while a person decides a permission request. */
  private idlePaused = 0;
  private idleArmed = false;

  constructor(
    private context: AcpAttemptContext,
    private readonly options: Required<Omit<AcpRunnerOptions, "mcpServers">> &
      Pick<AcpRunnerOptions, "mcpServers">,
  ) {
    this.stderr = new StderrTail(options.stderrLimitBytes);
    this.fs = new WorkspaceFs(context.workspace);
    this.repository = gitRoot(context.workspace);
    this.recorder = this.newRecorder(context);
    this.listen(context);
  }

  private newRecorder(context: AcpAttemptContext): TurnRecorder {
    return new TurnRecorder({
      attempt: context.request.attempt,
      now: this.options.now,
      emit: (activity) => context.io.activity(activity),
    });
  }

  private listen(context: AcpAttemptContext): void {
    context.io.onAbort((reason) => {
      if (this.context !== context) return;
      this.aborted = reason;
      this.stop.abort({ why: "aborted", reason } satisfies Stop);
    });
  }

  /**
   * Hands a session kept open (see `open`) to another attempt (a pipeline node's `reuse_session_of`): its
   * activity, abort signal and transcript are the new attempt's from now on.
   */
  bind(context: AcpAttemptContext): void {
    this.context = context;
    this.recorder = this.newRecorder(context);
    this.aborted = null;
    this.stop = new AbortController();
    if (this.proc === null || this.proc.exitStatus !== null)
      this.stop.abort({ why: "closed" } satisfies Stop);
    this.listen(context);
  }

  /** The session id, once `open` got one; null after `shutdown`. */
  get session(): string | null {
    return this.sessionId;
  }

  /** True while the agent process runs and the connection is open. */
  get alive(): boolean {
    return (
      this.proc !== null &&
      this.proc.exitStatus === null &&
      this.connection !== null &&
      !this.connection.signal.aborted
    );
  }

  private get acp() {
    const acp = this.context.profile.acp;
    if (this.context.profile.kind !== "acp" || acp === undefined) {
      throw new AcpFailure(
        "acp_start_failed",
        `profile "${this.context.profile.name}" is not an ACP profile (it has no acp section)`,
      );
    }
    return acp;
  }

  private warn(code: AcpWarningCode, message: string): void {
    this.context.io.activity({ kind: "warning", code, message });
  }

  /** Waits for `promise`, unless the current stop comes first (then rejects with `Stopped`). */
  private until<T>(promise: Promise<T>): Promise<T> {
    const signal = this.stop.signal;
    if (signal.aborted) {
      promise.catch(() => {});
      return Promise.reject(new Stopped(signal.reason as Stop));
    }
    return new Promise<T>((resolve, reject) => {
      const onStop = () => reject(new Stopped(signal.reason as Stop));
      signal.addEventListener("abort", onStop, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener("abort", onStop);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener("abort", onStop);
          reject(error);
        },
      );
    });
  }

  private request(method: string, params: Record<string, unknown>): Promise<unknown> {
    const agent = this.connection!.agent;
    return this.until(agent.request<unknown, Record<string, unknown>>(method, params));
  }

  // --- idle watchdog -------------------------------------------------------------------------------

  private touch(): void {
    if (!this.idleArmed || this.idlePaused > 0) return;
    const seconds = this.acp.idle_timeout_seconds;
    if (seconds <= 0) return;
    if (this.idleTimer) this.idleTimer.refresh();
    else this.idleTimer = setTimeout(() => this.stop.abort({ why: "idle" } satisfies Stop), timerMs(seconds));
  }

  private armIdle(on: boolean): void {
    this.idleArmed = on;
    if (on) this.touch();
    else if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
  }

  private pauseIdle(): () => void {
    this.idlePaused += 1;
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    return () => {
      this.idlePaused -= 1;
      this.touch();
    };
  }

  // --- the client side ------------------------------------------------------------------------------

  private async permission(params: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    this.recorder.permissionRequested(params.toolCall);
    const id = params.toolCall.toolCallId;
    const title = params.toolCall.title ?? id;
    const answer = (decision: "allowed" | "rejected" | "cancelled", by: string) => {
      this.recorder.permission(id, title, decision, by);
      return permissionResponse(params.options, decision);
    };
    if (this.stop.signal.aborted) return answer("cancelled", "the attempt is ending");
    const plan = planPermission({
      request: params,
      approval: this.context.profile.approval,
      mode: this.context.approvalMode,
      workspace: this.context.workspace,
      repository: this.repository,
    });
    if (plan.action === "allow") return answer("allowed", plan.by);
    const approve = this.context.approve;
    if (approve === undefined) return answer("rejected", `${plan.by}: no approval callback`);
    const resume = this.pauseIdle();
    try {
      const { request } = this.context;
      const verdict = await this.until(
        approve({
          runId: request.runId,
          activationId: request.activationId,
          attempt: request.attempt,
          toolCallId: id,
          tool: plan.tool,
          title,
          input: params.toolCall.rawInput ?? null,
          signal: this.context.io.signal,
        }),
      );
      return answer(verdict === "allow" ? "allowed" : "rejected", `${plan.by}: approval callback`);
    } catch (error) {
      if (error instanceof Stopped) return answer("cancelled", "the attempt is ending");
      return answer("rejected", `${plan.by}: the approval callback failed: ${describeError(error)}`);
    } finally {
      resume();
    }
  }

  private async fileRequest<T>(
    method: "fs/read_text_file" | "fs/write_text_file",
    input: Record<string, string | number | null>,
    serve: () => Promise<{ value: T; output: string }>,
  ): Promise<T> {
    const startedAt = this.options.now();
    const kind = method === "fs/read_text_file" ? "read" : "edit";
    try {
      const { value, output } = await serve();
      this.recorder.fileRequest({ method, kind, input, ok: true, output, startedAt });
      return value;
    } catch (error) {
      const message = describeError(error);
      this.recorder.fileRequest({ method, kind, input, ok: false, output: message, startedAt });
      if (error instanceof FileRequestError) {
        if (error.reason === "not_found") throw RequestError.resourceNotFound(String(input["path"]));
        if (error.reason === "io") throw RequestError.internalError(undefined, error.message);
        throw RequestError.invalidParams(undefined, error.message);
      }
      throw RequestError.internalError(undefined, message);
    }
  }

  private connect(proc: AgentProcess): ClientConnection {
    const app = client({ name: "icode" })
      .onNotification("session/update", ({ params }) => {
        if (this.sessionId !== null && params.sessionId === this.sessionId)
          this.recorder.update(params.update);
      })
      .onRequest("session/request_permission", ({ params }) => this.permission(params))
      .onRequest("fs/read_text_file", ({ params }) =>
        this.fileRequest(
          "fs/read_text_file",
          { path: params.path, line: params.line ?? null, limit: params.limit ?? null },
          async () => {
            const content = await this.fs.read(params);
            return { value: { content }, output: `read ${content.length} characters` };
          },
        ),
      )
      .onRequest("fs/write_text_file", ({ params }) =>
        this.fileRequest(
          "fs/write_text_file",
          { path: params.path, characters: params.content.length },
          async () => {
            await this.fs.write(params);
            return { value: {}, output: `wrote ${params.content.length} characters` };
          },
        ),
      );
    const wire = ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout) as ReadableStream);
    const readable = wire.readable.pipeThrough(
      new TransformStream({
        transform: (message, controller) => {
          this.touch();
          controller.enqueue(message);
        },
      }),
    );
    const connection = app.connect({ writable: wire.writable, readable });
    // Ends the wait of whichever attempt uses this process now (a kept session changes hands).
    const closed = () => {
      if (this.proc === proc) this.stop.abort({ why: "closed" } satisfies Stop);
    };
    void connection.closed.then(closed);
    void proc.exited.then(closed);
    return connection;
  }

  // --- the handshake --------------------------------------------------------------------------------

  private async openSession(init: InitializeAnswer, cwd: string): Promise<void> {
    let engineServers: readonly AcpMcpServer[];
    try {
      engineServers = (await this.options.mcpServers?.(this.context)) ?? [];
    } catch (error) {
      throw new AcpFailure(
        "acp_start_failed",
        `the engine's MCP servers for this session could not be prepared: ${describeError(error)}`,
      );
    }
    const servers = acpMcpServers(engineServers, init);
    const create = () => this.request("session/new", { cwd, mcpServers: servers });
    let raw: unknown;
    try {
      raw = await create();
    } catch (error) {
      const rpc = rpcErrorOf(error);
      if (rpc?.code !== RPC.authRequired) throw this.startError("session/new", error);
      await this.authenticate(init.authMethods ?? [], rpc.message);
      try {
        raw = await create();
      } catch (again) {
        const second = rpcErrorOf(again);
        if (second?.code === RPC.authRequired) {
          throw new AcpFailure(
            "acp_auth_required",
            `the agent still asks for authentication after authenticate: ${second.message}`,
            { hint: this.loginHint() },
          );
        }
        throw this.startError("session/new", again);
      }
    }
    const session = parseAnswer(NewSessionAnswerSchema, "session/new", raw);
    if (!session.ok) throw new AcpFailure("acp_start_failed", session.message);
    this.sessionId = session.value.sessionId;
    await configureSession({
      request: (method, params) => this.request(method, params),
      sessionId: session.value.sessionId,
      session: session.value,
      acp: this.acp,
      modelId: this.context.modelId,
      effort: this.context.effort ?? null,
      warn: (code, message) => this.warn(code, message),
    });
  }

  private loginHint(): string {
    return `log in with the agent's own command (run ${JSON.stringify(this.acp.command)} in a terminal), or pass its API key through acp.env (e.g. KEY: "{{KEY}}")`;
  }

  /** `authenticate` with the first method the agent can do by itself; methods needing a person fail. */
  private async authenticate(methods: readonly AuthMethod[], asked: string): Promise<void> {
    const usable = selfServeAuthMethod(methods);
    if (usable === null) {
      const offered = methods.map((m) => `${m.id}${m.type ? ` (${m.type})` : ""}`).join(", ") || "none";
      throw new AcpFailure(
        "acp_auth_required",
        `the agent needs you to log in (${asked}); its authentication methods need a person: ${offered}`,
        { hint: this.loginHint() },
      );
    }
    try {
      await this.request("authenticate", { methodId: usable.id });
    } catch (error) {
      if (error instanceof Stopped && error.stop.why !== "handshake_timeout") throw error;
      throw new AcpFailure(
        "acp_auth_required",
        error instanceof Stopped
          ? `authenticate with method "${usable.id}" did not finish within handshake_timeout_seconds; it may wait for you to log in`
          : `authenticate with method "${usable.id}" failed: ${describeError(error)}`,
        { hint: this.loginHint() },
      );
    }
  }

  private startError(method: string, error: unknown): unknown {
    if (error instanceof Stopped || isAcpFailure(error)) return error;
    const rpc = rpcErrorOf(error);
    if (rpc === null) return error;
    return new AcpFailure(
      "acp_start_failed",
      `the agent answered ${method} with an error: ${describeError(rpc)}`,
    );
  }

  /** One connection try: start the process, `initialize`, open and configure the session. */
  private async handshake(launch: AcpLaunch): Promise<void> {
    this.stop = new AbortController();
    if (this.aborted !== null) this.stop.abort({ why: "aborted", reason: this.aborted } satisfies Stop);
    const proc = await AgentProcess.start(launch, { stderr: this.stderr });
    this.proc = proc;
    this.connection = this.connect(proc);
    const seconds = this.acp.handshake_timeout_seconds;
    let step = "initialize";
    const timer = setTimeout(
      () => this.stop.abort({ why: "handshake_timeout", step } satisfies Stop),
      timerMs(seconds),
    );
    try {
      let raw: unknown;
      try {
        raw = await this.request("initialize", {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
          clientInfo: { name: "icode", version },
        });
      } catch (error) {
        throw this.startError("initialize", error);
      }
      const init = parseAnswer(InitializeAnswerSchema, "initialize", raw);
      if (!init.ok) throw new AcpFailure("acp_start_failed", init.message);
      if (init.value.protocolVersion !== PROTOCOL_VERSION) {
        throw new AcpFailure(
          "acp_start_failed",
          `the agent speaks ACP protocol version ${init.value.protocolVersion}; this engine speaks ${PROTOCOL_VERSION}`,
          { hint: "use a version of the agent that supports ACP v1" },
        );
      }
      step = "session/new";
      await this.openSession(init.value, launch.cwd);
    } catch (error) {
      if (error instanceof Stopped && error.stop.why !== "aborted") {
        if (error.stop.why === "closed") await Promise.race([proc.exited, delay(this.options.graceMs)]);
        throw new Unreachable(
          error.stop.why === "handshake_timeout"
            ? `the agent did not answer ${error.stop.step} within ${seconds} s (handshake_timeout_seconds)`
            : `the agent ${exitText(proc)} during the handshake`,
        );
      }
      if (!(error instanceof Stopped) && !isAcpFailure(error) && rpcErrorOf(error) === null) {
        // The SDK rejected a pending request because the connection closed.
        await Promise.race([proc.exited, delay(this.options.graceMs)]);
        throw new Unreachable(`the agent ${exitText(proc)} during the handshake`);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async shutdown(): Promise<void> {
    const proc = this.proc;
    this.armIdle(false);
    this.proc = null;
    this.connection?.close();
    this.connection = null;
    this.sessionId = null;
    if (proc) await proc.stop(this.options.graceMs);
  }

  // --- the turn -------------------------------------------------------------------------------------

  /**
   * One prompt turn of the open session; resolves with the turn's result text. `allowEmpty`: a turn that
   * ends with no message text resolves `""` (a pipeline node that submitted its handoff through the tool)
   * instead of failing `acp_empty_answer`.
   */
  async turn(text: string, allowEmpty = false): Promise<string> {
    const { profile } = this.context;
    if (this.aborted !== null) throw new Stopped({ why: "aborted", reason: this.aborted });
    if (!this.alive) throw new Stopped({ why: "closed" });
    this.recorder.prompt(text);
    const sessionId = this.sessionId!;
    const prompt = this.connection!.agent.request<unknown, Record<string, unknown>>("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    this.armIdle(true);
    let raw: unknown;
    try {
      raw = await this.until(prompt);
    } catch (error) {
      this.armIdle(false);
      if (error instanceof Stopped) {
        if (error.stop.why === "aborted" || error.stop.why === "idle") await this.cancel(prompt);
        throw error;
      }
      const rpc = rpcErrorOf(error);
      if (rpc === null) throw new Stopped({ why: "closed" });
      if (rpc.code === RPC.authRequired) {
        throw new AcpFailure("acp_auth_required", `the agent asks for authentication: ${rpc.message}`, {
          hint: this.loginHint(),
        });
      }
      throw new AcpFailure(
        "acp_agent_error",
        `the agent answered the prompt with an error: ${describeError(rpc)}`,
      );
    }
    this.armIdle(false);
    // Updates read before the answer may still be on their way through the SDK's handlers.
    await new Promise((resolve) => setImmediate(resolve));
    const answer = parseAnswer(PromptAnswerSchema, "session/prompt", raw);
    if (!answer.ok) throw new AcpFailure("acp_agent_error", answer.message);
    if (answer.value.usage) this.recorder.finalUsage(answer.value.usage);
    const stop = answer.value.stopReason;
    if (stop === "refusal")
      throw new AcpFailure("acp_refused", "the agent refused to answer (stop reason refusal)");
    if (stop === "max_tokens" || stop === "max_turn_requests") {
      throw new AcpFailure(
        "acp_cut_short",
        `the agent's answer was cut short (stop reason ${stop}); its partial answer is in the transcript`,
      );
    }
    if (stop !== "end_turn") {
      throw new AcpFailure(
        "acp_agent_error",
        `the agent ended the turn with stop reason ${JSON.stringify(stop)}`,
      );
    }
    const result = this.recorder.result(profile.acp?.result_mode ?? "last_segment");
    if (result.trim() === "" && !allowEmpty) {
      throw new AcpFailure(
        "acp_empty_answer",
        `the agent ended its turn without any message text (result_mode ${profile.acp?.result_mode ?? "last_segment"})`,
      );
    }
    return result;
  }

  /** `session/cancel`, then up to `graceMs` for the turn to end. */
  private async cancel(prompt: Promise<unknown>): Promise<void> {
    const connection = this.connection;
    if (connection === null || connection.signal.aborted) return;
    prompt.catch(() => {});
    await connection.agent.notify("session/cancel", { sessionId: this.sessionId! }).catch(() => {});
    await Promise.race([prompt.catch(() => {}), delay(this.options.graceMs)]);
  }

  // --- the attempt ----------------------------------------------------------------------------------

  /** The node error a stop or failure of `open` or `turn` stands for; null for anything else (a defect). */
  async errorOf(error: unknown): Promise<NodeError | null> {
    if (!(error instanceof Stopped) && !isAcpFailure(error)) return null;
    // An agent that closed its output is given a moment to exit, so that the message says how it ended.
    if (error instanceof Stopped && error.stop.why === "closed" && this.proc) {
      await Promise.race([this.proc.exited, delay(this.options.graceMs)]);
    }
    return this.failure(error);
  }

  private failure(error: Stopped | AcpFailure): NodeError {
    if (error instanceof Stopped) {
      const stop = error.stop;
      if (stop.why === "aborted") {
        return stop.reason === "timeout"
          ? {
              class: "timeout",
              message: "the attempt reached the node's timeout; the agent was cancelled",
              retryable: true,
              traceback: null,
            }
          : acpNodeError(
              "acp_cancelled",
              `the attempt was cancelled (${stop.reason}); the agent was stopped`,
            );
      }
      if (stop.why === "idle") {
        return acpNodeError(
          "acp_idle_timeout",
          `the agent sent nothing for ${this.acp.idle_timeout_seconds} s (idle_timeout_seconds) and was stopped`,
        );
      }
      return acpNodeError(
        "acp_connection_lost",
        `the agent ${this.proc ? exitText(this.proc) : "closed the connection"} while the turn ran${stderrHint(this.stderr)}`,
      );
    }
    return acpNodeError((error as AcpFailure).code as AcpErrorClass, (error as AcpFailure).message);
  }

  /** Starts the agent and opens the session (connection tries as `connectTries` says); throws a stop or failure. */
  async open(): Promise<void> {
    if (this.aborted !== null) throw new Stopped({ why: "aborted", reason: this.aborted });
    const launch = resolveLaunch({
      acp: this.acp,
      workspace: this.context.workspace,
      env: this.context.env,
      platform: this.options.platform,
    });
    for (let tryNumber = 1; ; tryNumber += 1) {
      try {
        await this.handshake(launch);
        break;
      } catch (error) {
        if (!(error instanceof Unreachable)) throw error;
        await this.shutdown();
        if (tryNumber >= this.options.connectTries) {
          throw new AcpFailure(
            "acp_unreachable",
            `cannot reach the ACP agent ${JSON.stringify(launch.command)} after ${tryNumber} connection tries: ${error.message}${stderrHint(this.stderr)}`,
            { hint: "run the command by hand to see why it does not speak ACP on stdio" },
          );
        }
        this.warn(
          "acp_reconnecting",
          `connection try ${tryNumber} failed: ${error.message}; starting the agent again`,
        );
      }
    }
    // Exits during the turn now end it (a process exiting between the handshake and here included).
    if (this.proc?.exitStatus) throw new Stopped({ why: "closed" });
  }

  async run(): Promise<AttemptResult> {
    let result: AttemptResult;
    try {
      await this.open();
      const { request } = this.context;
      const text = await this.turn(promptText(request.input.text, request.node.instructions_suffix));
      result = { status: "completed", value: { text, data: null } };
    } catch (error) {
      if (!(error instanceof Stopped) && !isAcpFailure(error)) {
        // A defect of the adapter, not of the agent: clean up, then let the scheduler see it.
        await this.shutdown();
        this.record("internal_error");
        throw error;
      }
      if (error instanceof Stopped && error.stop.why === "closed" && this.proc) {
        await Promise.race([this.proc.exited, delay(this.options.graceMs)]);
      }
      result = { status: "failed", error: this.failure(error) };
    }
    await this.shutdown();
    this.record(result.status === "completed" ? "completed" : result.error.class);
    return result;
  }

  /** Usage of the turns since the last `bind` (or the start), or null when the agent reported none. */
  usage() {
    return this.recorder.usage();
  }

  /** Hands the transcript of the attempt (since the last `bind`) to the context's `transcript`. */
  record(outcome: string): void {
    const { request, profile, modelId } = this.context;
    try {
      this.context.transcript({
        node_id: request.node.id,
        activation_id: request.activationId,
        attempt: request.attempt,
        runtime: "acp",
        profile: profile.name,
        model: modelId,
        continued_from: null,
        ...this.recorder.transcript(),
        stderr: this.stderr.captured(),
        outcome,
      });
    } catch (error) {
      this.context.io.activity({
        kind: "warning",
        code: "acp_transcript_failed",
        message: `the attempt's transcript could not be stored: ${describeError(error)}`,
      });
    }
  }
}

/**
 * Builds the ACP runtime of agent nodes (`AcpAttempt`). Each attempt starts the profile's `acp.command` in
 * a clean environment, speaks ACP over its stdio (`initialize`, `authenticate` when asked, `session/new`,
 * mode, options and model, one `session/prompt`), reports the agent's updates as `agent_activity`, answers
 * its permission and file requests, and always ends the process before it returns. A new session every
 * attempt: a retry starts over from the node input.
 */
export function createAcpAttempt(options: AcpRunnerOptions = {}): AcpAttempt {
  const resolved = resolveAcpOptions(options);
  return (context) => new AcpRun(context, resolved).run();
}

/** The runner options with their defaults filled in. */
export function resolveAcpOptions(options: AcpRunnerOptions = {}): ConstructorParameters<typeof AcpRun>[1] {
  return {
    graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
    connectTries: Math.max(1, options.connectTries ?? DEFAULT_CONNECT_TRIES),
    stderrLimitBytes: options.stderrLimitBytes ?? STDERR_LIMIT_BYTES,
    now: options.now ?? Date.now,
    platform: options.platform ?? process.platform,
    mcpServers: options.mcpServers,
  };
}

/** The ACP runtime with default options. */
export const runAcpAttempt: AcpAttempt = createAcpAttempt();
