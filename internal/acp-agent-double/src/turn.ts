import { isAbsolute, join } from "node:path";
import {
  type AgentContext,
  RequestError,
  type RequestPermissionRequest,
  type SessionUpdate,
  type StopReason,
  type Usage,
} from "@agentclientprotocol/sdk/unstable";
import type { AgentLog } from "./log";
import type { AcpDoubleScript, Step } from "./script";
import { stepKind } from "./script";
import type { Session } from "./session";

/** What the turn runner needs from the process: the log, stderr, and a way to die mid-turn. */
export type AgentHost = {
  log: AgentLog;
  stderr(text: string): void;
  /** Ends the process now (exit code or signal), after what was sent so far left stdout. */
  crash(how: number | NodeJS.Signals): Promise<never>;
};

export type TurnContext = {
  script: AcpDoubleScript;
  session: Session;
  client: AgentContext;
  host: AgentHost;
  promptText: string;
  /** Aborted by `session/cancel` for this session. */
  signal: AbortSignal;
  clientFs: { readTextFile: boolean; writeTextFile: boolean };
  nextId(prefix: string): string;
  /** Sends one `session/update` (and logs it). */
  notify(update: SessionUpdate): Promise<void>;
};

export type TurnResult = { stopReason: StopReason; usage: Usage | null };

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs the steps of one prompt turn and returns its stop reason (and summed usage, when a step reported any). */
export async function runTurn(ctx: TurnContext, steps: readonly Step[]): Promise<TurnResult> {
  const { session, client, host, signal } = ctx;
  const usage = {
    inputTokens: 0,
    outputTokens: 0,
    cachedReadTokens: 0,
    cachedWriteTokens: 0,
    thoughtTokens: 0,
  };
  let usageSeen = false;
  let lastToolCallId: string | undefined;

  const text = (kind: "agent_message_chunk" | "agent_thought_chunk", value: string | readonly string[]) => {
    const messageId = ctx.nextId("msg");
    const chunks = typeof value === "string" ? [value] : value;
    return chunks.reduce<Promise<void>>(
      (previous, chunk) =>
        previous.then(() =>
          ctx.notify({ sessionUpdate: kind, content: { type: "text", text: chunk }, messageId }),
        ),
      Promise.resolve(),
    );
  };
  const message = (value: string | readonly string[]) => text("agent_message_chunk", value);

  const branch = async (steps: readonly Step[] | undefined): Promise<StopReason | null> =>
    steps === undefined ? null : runSteps(steps);

  const callTool = async (
    step: Step,
    tool: string,
    args: Record<string, unknown>,
    server: string | undefined,
  ): Promise<StopReason | null> => {
    const toolCallId = ctx.nextId("mcp");
    await ctx.notify({
      sessionUpdate: "tool_call",
      toolCallId,
      title: server === undefined ? tool : `${tool} (${server})`,
      kind: "other",
      status: "in_progress",
      rawInput: args,
    });
    let ok: boolean;
    let echo: string;
    try {
      const result = await session.mcp.call(tool, args, server, signal);
      ok = !result.isError;
      echo = result.isError ? `tool error: ${result.text}` : result.text;
      host.log({
        event: "mcp_call",
        sessionId: session.id,
        server: result.server,
        tool,
        isError: result.isError,
      });
      await ctx.notify({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: result.isError ? "failed" : "completed",
        content: [{ type: "content", content: { type: "text", text: result.text } }],
        rawOutput: result.raw,
      });
    } catch (error) {
      if (signal.aborted) return "cancelled";
      ok = false;
      echo = `MCP call failed: ${errorText(error)}`;
      host.log({
        event: "mcp_call",
        sessionId: session.id,
        server: server ?? null,
        tool,
        isError: true,
        error: errorText(error),
      });
      await ctx.notify({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: echo } }],
      });
    }
    await message(echo);
    return branch(ok ? step.onOk : step.onError);
  };

  const absolute = (path: string) => (isAbsolute(path) ? path : join(session.cwd, path));

  async function runStep(step: Step): Promise<StopReason | null> {
    const kind = stepKind(step);
    switch (kind) {
      case "message":
        await message(step.message!);
        return null;
      case "thought":
        await text("agent_thought_chunk", step.thought!);
        return null;
      case "plan":
        await ctx.notify({ sessionUpdate: "plan", entries: step.plan! });
        return null;
      case "toolCall": {
        const call = step.toolCall!;
        const toolCallId = call.id ?? ctx.nextId("call");
        lastToolCallId = toolCallId;
        await ctx.notify({
          sessionUpdate: "tool_call",
          toolCallId,
          title: call.title,
          kind: call.kind,
          status: call.status,
          ...(call.rawInput === undefined ? {} : { rawInput: call.rawInput }),
          ...(call.content === undefined
            ? {}
            : { content: [{ type: "content", content: { type: "text", text: call.content } }] }),
          ...(call.locations === undefined ? {} : { locations: call.locations }),
        });
        for (const update of call.updates) {
          await ctx.notify({
            sessionUpdate: "tool_call_update",
            toolCallId,
            ...(update.status === undefined ? {} : { status: update.status }),
            ...(update.title === undefined ? {} : { title: update.title }),
            ...(update.content === undefined
              ? {}
              : { content: [{ type: "content", content: { type: "text", text: update.content } }] }),
            ...(update.rawOutput === undefined ? {} : { rawOutput: update.rawOutput }),
          });
        }
        return null;
      }
      case "permission": {
        const ask = step.permission!;
        const toolCallId = ask.toolCallId ?? lastToolCallId ?? ctx.nextId("perm");
        const request: RequestPermissionRequest = {
          sessionId: session.id,
          toolCall: { toolCallId, title: ask.title, kind: ask.kind, status: "pending" },
          options: ask.options,
        };
        const { outcome: answer } = await client.request("session/request_permission", request);
        const optionId = answer.outcome === "selected" ? answer.optionId : undefined;
        const chosen = ask.options.find((o) => o.optionId === optionId);
        const outcome =
          answer.outcome === "cancelled"
            ? "cancelled"
            : chosen?.kind.startsWith("allow")
              ? "allowed"
              : "rejected";
        const unknownOption = optionId !== undefined && !chosen ? `unknown option ${optionId}` : undefined;
        host.log({
          event: "client_request",
          method: "session/request_permission",
          sessionId: session.id,
          outcome,
          ...(unknownOption === undefined ? {} : { error: unknownOption }),
        });
        if (outcome === "allowed") return branch(step.onAllowed);
        if (outcome === "rejected") return branch(step.onRejected);
        return step.onCancelled === undefined ? "cancelled" : branch(step.onCancelled);
      }
      case "writeFile": {
        const { path, content } = step.writeFile!;
        const target = absolute(path);
        let ok = false;
        let echo: string;
        if (!ctx.clientFs.writeTextFile) {
          echo = "write failed: the client does not offer fs/write_text_file";
        } else {
          try {
            await client.request("fs/write_text_file", { sessionId: session.id, path: target, content });
            ok = true;
            echo = `wrote ${content.length} characters to ${target}`;
          } catch (error) {
            echo = `write failed: ${errorText(error)}`;
          }
        }
        host.log({
          event: "client_request",
          method: "fs/write_text_file",
          sessionId: session.id,
          path: target,
          outcome: ok ? "ok" : "error",
          ...(ok ? {} : { error: echo }),
        });
        await message(echo);
        return branch(ok ? step.onOk : step.onError);
      }
      case "readFile": {
        const { path, line, limit } = step.readFile!;
        const target = absolute(path);
        let ok = false;
        let echo: string;
        if (!ctx.clientFs.readTextFile) {
          echo = "read failed: the client does not offer fs/read_text_file";
        } else {
          try {
            const read = await client.request("fs/read_text_file", {
              sessionId: session.id,
              path: target,
              ...(line === undefined ? {} : { line }),
              ...(limit === undefined ? {} : { limit }),
            });
            ok = true;
            echo = read.content;
          } catch (error) {
            echo = `read failed: ${errorText(error)}`;
          }
        }
        host.log({
          event: "client_request",
          method: "fs/read_text_file",
          sessionId: session.id,
          path: target,
          outcome: ok ? "ok" : "error",
          ...(ok ? {} : { error: echo }),
        });
        await message(echo);
        return branch(ok ? step.onOk : step.onError);
      }
      case "mcpCall": {
        const call = step.mcpCall!;
        return callTool(step, call.tool, call.arguments, call.server);
      }
      case "submitHandoff":
        return callTool(step, "submit_handoff", step.submitHandoff!, undefined);
      case "reportBlocked":
        return callTool(step, "report_blocked", step.reportBlocked!, undefined);
      case "finalJson":
        await message(JSON.stringify(step.finalJson));
        return "end_turn";
      case "usage": {
        const u = step.usage!;
        usageSeen = true;
        usage.inputTokens += u.inputTokens;
        usage.outputTokens += u.outputTokens;
        usage.cachedReadTokens += u.cachedReadTokens ?? 0;
        usage.cachedWriteTokens += u.cachedWriteTokens ?? 0;
        usage.thoughtTokens += u.thoughtTokens ?? 0;
        await ctx.notify({
          sessionUpdate: "usage_update",
          used: u.used ?? u.inputTokens + u.outputTokens + (u.cachedReadTokens ?? 0),
          size: u.size,
          ...(u.cost === undefined ? {} : { cost: u.cost }),
        });
        return null;
      }
      case "stderr":
        host.stderr(step.stderr!);
        return null;
      case "delay":
        await sleep(step.delay!, signal);
        return null;
      case "stop":
        return step.stop!;
      case "crash":
        return host.crash(step.crash!);
      case "hang": {
        const hang = step.hang!;
        if (hang !== true && hang.ignoreCancel) await new Promise<never>(() => {});
        await untilAborted(signal);
        return "cancelled";
      }
      case "echoPrompt":
        await message(ctx.promptText);
        return null;
      case "echoSession":
        await message(
          JSON.stringify({
            sessionId: session.id,
            cwd: session.cwd,
            mcpServers: session.mcpServers.map((s) => s.name),
            modeId: session.modeId,
            modelId: session.modelId,
            config: Object.fromEntries(session.config),
          }),
        );
        return null;
      case "echoTurn":
        // `prompts` counts this turn's prompt already.
        await message(JSON.stringify({ sessionId: session.id, turn: session.prompts - 1 }));
        return null;
      case "empty":
        return "end_turn";
      case "error": {
        const { code, message: text } = step.error!;
        throw new RequestError(code, text);
      }
    }
  }

  async function runSteps(steps: readonly Step[]): Promise<StopReason | null> {
    for (const step of steps) {
      if (signal.aborted) return "cancelled";
      const stop = await runStep(step);
      if (stop !== null) return stop;
    }
    return signal.aborted ? "cancelled" : null;
  }

  const stopReason = (await runSteps(steps)) ?? "end_turn";
  const total =
    usage.inputTokens +
    usage.outputTokens +
    usage.cachedReadTokens +
    usage.cachedWriteTokens +
    usage.thoughtTokens;
  return {
    stopReason,
    usage: usageSeen
      ? {
          totalTokens: total,
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          cachedReadTokens: usage.cachedReadTokens,
          cachedWriteTokens: usage.cachedWriteTokens,
          thoughtTokens: usage.thoughtTokens,
        }
      : null,
  };
}
