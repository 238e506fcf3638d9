import { randomUUID } from "node:crypto";
import {
  type AgentApp,
  type AgentContext,
  agent,
  type McpServer,
  PROTOCOL_VERSION,
  RequestError,
  type SessionUpdate,
} from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import { promptText } from "./prompt-text";
import { type AcpDoubleScript, selectTurn } from "./script";
import { configOptionsOf, createSession, modelIds, type Session, sessionState } from "./session";
import { type AgentHost, runTurn } from "./turn";

/** The legacy `session/set_model` request, which the SDK's v1 schema no longer has. */
const SetModelRequestSchema = z.looseObject({ sessionId: z.string(), modelId: z.string() });

function summarizeServers(servers: readonly McpServer[]) {
  return servers.map((s) =>
    "type" in s
      ? { name: s.name, type: s.type, ...("url" in s ? { url: s.url } : {}) }
      : { name: s.name, type: "stdio", command: s.command, args: s.args },
  );
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

/** What the agent holds for one connection: its sessions, and a way to close their MCP connections. */
export type DoubleAgent = { app: AgentApp; close(): Promise<void> };

/**
 * Builds the ACP agent app the script describes. Every request and every update sent is logged; a
 * request that fails is logged with its error code before the SDK answers it.
 */
export function createDoubleAgent(script: AcpDoubleScript, host: AgentHost): DoubleAgent {
  const sessions = new Map<string, Session>();
  let authenticated = script.auth === undefined;
  let clientFs = { readTextFile: false, writeTextFile: false };
  let ids = 0;
  const nextId = (prefix: string) => `${prefix}_${++ids}`;

  /** Runs a handler, logging a failure as an `error` entry. */
  async function logged<T>(method: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const code = error instanceof RequestError ? error.code : -32603;
      host.log({
        event: "error",
        method,
        code,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  }

  function sessionOf(sessionId: string): Session {
    const session = sessions.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  }

  function requireAuth(): void {
    if (!authenticated) {
      const methods = script.auth?.methods.map((m) => m.id).join(", ");
      throw RequestError.authRequired(undefined, `call authenticate with one of: ${methods}`);
    }
  }

  async function notify(client: AgentContext, session: Session, update: SessionUpdate): Promise<void> {
    const content = "content" in update ? update.content : undefined;
    const text =
      content && !Array.isArray(content) && content.type === "text"
        ? content.text
        : "title" in update && typeof update.title === "string"
          ? update.title
          : undefined;
    host.log({
      event: "notification",
      method: "session/update",
      sessionId: session.id,
      update: update.sessionUpdate,
      ...(text === undefined ? {} : { text: text.slice(0, 200) }),
    });
    if (
      update.sessionUpdate === "agent_message_chunk" ||
      update.sessionUpdate === "agent_thought_chunk" ||
      update.sessionUpdate === "user_message_chunk"
    ) {
      session.history.push(update);
    }
    await client.notify("session/update", { sessionId: session.id, update });
  }

  const app = agent({ name: "acp-agent-double" })
    .onRequest("initialize", ({ params }) =>
      logged("initialize", async () => {
        clientFs = {
          readTextFile: params.clientCapabilities?.fs?.readTextFile === true,
          writeTextFile: params.clientCapabilities?.fs?.writeTextFile === true,
        };
        host.log({
          event: "request",
          method: "initialize",
          protocolVersion: params.protocolVersion,
          clientFs,
        });
        await sleep(script.handshakeDelayMs);
        return {
          protocolVersion: script.protocolVersion ?? PROTOCOL_VERSION,
          agentCapabilities: {
            loadSession: script.loadSession !== "off",
            promptCapabilities: script.promptCapabilities,
            mcpCapabilities: script.mcpCapabilities,
          },
          ...(script.auth ? { authMethods: script.auth.methods } : {}),
          agentInfo: script.agentInfo,
        };
      }),
    )
    .onRequest("authenticate", ({ params }) =>
      logged("authenticate", async () => {
        host.log({ event: "request", method: "authenticate", methodId: params.methodId });
        await sleep(script.handshakeDelayMs);
        const offered = script.auth?.methods ?? [];
        if (!offered.some((m) => m.id === params.methodId)) {
          const names = offered.map((m) => m.id).join(", ") || "none";
          throw RequestError.invalidParams(
            undefined,
            `unknown auth method ${params.methodId}; offered: ${names}`,
          );
        }
        authenticated = true;
        return {};
      }),
    )
    .onRequest("session/new", ({ params }) =>
      logged("session/new", async () => {
        host.log({
          event: "request",
          method: "session/new",
          cwd: params.cwd,
          mcpServers: summarizeServers(params.mcpServers),
        });
        await sleep(script.handshakeDelayMs);
        requireAuth();
        const session = createSession(
          script,
          `sess_${process.pid}_${randomUUID()}`,
          params.cwd,
          params.mcpServers,
        );
        sessions.set(session.id, session);
        return { sessionId: session.id, ...sessionState(script, session) };
      }),
    )
    .onRequest("session/prompt", ({ params, client }) =>
      logged("session/prompt", async () => {
        const text = promptText(params.prompt);
        const session = sessions.get(params.sessionId);
        host.log({
          event: "request",
          method: "session/prompt",
          sessionId: params.sessionId,
          prompt: text.slice(0, 1000),
          promptChars: text.length,
          ...(session ? { turn: session.prompts } : {}),
        });
        if (!session) throw RequestError.sessionNotFound(params.sessionId);
        if (session.active) {
          throw RequestError.invalidRequest(
            undefined,
            `a prompt already runs on session ${session.id}; wait for it`,
          );
        }
        const index = session.prompts++;
        const picked = selectTurn(script, index, session.ordered, text);
        if (!picked)
          throw RequestError.internalError(
            undefined,
            `no scripted turn fits prompt ${index}: ${text.slice(0, 80)}`,
          );
        if (picked.ordered) session.ordered += 1;
        const controller = new AbortController();
        session.active = controller;
        try {
          // Kept for a later session/load to replay; not sent now (the client sent the prompt).
          session.history.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text } });
          const result = await runTurn(
            {
              script,
              session,
              client,
              host,
              promptText: text,
              signal: controller.signal,
              clientFs,
              nextId,
              notify: (update) => notify(client, session, update),
            },
            picked.turn.steps,
          );
          host.log({
            event: "stop",
            sessionId: session.id,
            turn: index,
            stopReason: result.stopReason,
            modelId: session.modelId,
            modeId: session.modeId,
          });
          return { stopReason: result.stopReason, ...(result.usage ? { usage: result.usage } : {}) };
        } finally {
          session.active = null;
        }
      }),
    )
    .onNotification("session/cancel", ({ params }) => {
      host.log({ event: "notification_received", method: "session/cancel", sessionId: params.sessionId });
      sessions.get(params.sessionId)?.active?.abort();
    })
    .onRequest("*", ({ method }) =>
      logged(method, async () => {
        host.log({ event: "request", method });
        throw RequestError.methodNotFound(method);
      }),
    )
    .onNotification("*", ({ method }) => {
      host.log({ event: "notification_received", method });
    });

  if (script.loadSession !== "off") {
    app.onRequest("session/load", ({ params, client }) =>
      logged("session/load", async () => {
        host.log({
          event: "request",
          method: "session/load",
          sessionId: params.sessionId,
          cwd: params.cwd,
          mcpServers: summarizeServers(params.mcpServers),
        });
        await sleep(script.handshakeDelayMs);
        requireAuth();
        let session = sessions.get(params.sessionId);
        if (!session && script.loadSession === "known") throw RequestError.sessionNotFound(params.sessionId);
        if (session) {
          // The conversation and settings stay; cwd and MCP servers are the ones given now.
          await session.mcp.close();
          const { modeId, modelId, config, prompts, ordered, history } = session;
          Object.assign(session, createSession(script, session.id, params.cwd, params.mcpServers), {
            modeId,
            modelId,
            config,
            prompts,
            ordered,
          });
          for (const update of history) await notify(client, session, update);
        } else {
          session = createSession(script, params.sessionId, params.cwd, params.mcpServers);
          sessions.set(session.id, session);
        }
        return sessionState(script, session);
      }),
    );
  }

  if (script.modes) {
    const modes = script.modes;
    app.onRequest("session/set_mode", ({ params }) =>
      logged("session/set_mode", async () => {
        host.log({
          event: "request",
          method: "session/set_mode",
          sessionId: params.sessionId,
          modeId: params.modeId,
        });
        const session = sessionOf(params.sessionId);
        if (!modes.available.some((m) => m.id === params.modeId)) {
          const known = modes.available.map((m) => m.id).join(", ");
          throw RequestError.invalidParams(undefined, `unknown mode ${params.modeId}; modes: ${known}`);
        }
        if (modes.reject.includes(params.modeId)) {
          throw RequestError.invalidParams(undefined, `the script refuses mode ${params.modeId}`);
        }
        session.modeId = params.modeId;
        return {};
      }),
    );
  }

  if (script.configOptions.length > 0 || script.models?.via === "config_option") {
    app.onRequest("session/set_config_option", ({ params }) =>
      logged("session/set_config_option", async () => {
        host.log({
          event: "request",
          method: "session/set_config_option",
          sessionId: params.sessionId,
          configId: params.configId,
          value: params.value,
        });
        const session = sessionOf(params.sessionId);
        const option = configOptionsOf(script, session).find((o) => o.id === params.configId);
        if (option?.type !== "select") {
          const known = configOptionsOf(script, session)
            .map((o) => o.id)
            .join(", ");
          throw RequestError.invalidParams(
            undefined,
            `unknown config option ${params.configId}; options: ${known}`,
          );
        }
        const value = params.value;
        if (typeof value !== "string") {
          throw RequestError.invalidParams(
            undefined,
            `config option ${option.id} takes a value id, not ${String(value)}`,
          );
        }
        if (script.configOptions.find((o) => o.id === option.id)?.reject) {
          throw RequestError.invalidParams(
            undefined,
            `the script refuses any change of config option ${option.id}`,
          );
        }
        const values = option.options.flatMap((o) => ("options" in o ? o.options : [o])).map((o) => o.value);
        if (!values.includes(value)) {
          throw RequestError.invalidParams(
            undefined,
            `${value} is not a value of config option ${option.id}; values: ${values.join(", ")}`,
          );
        }
        if (option.id === "model" && script.models?.via === "config_option") session.modelId = value;
        else session.config.set(option.id, value);
        return { configOptions: configOptionsOf(script, session) };
      }),
    );
  }

  if (script.models?.via === "set_model") {
    const models = script.models;
    app.onRequest("session/set_model", SetModelRequestSchema, ({ params }) =>
      logged("session/set_model", async () => {
        host.log({
          event: "request",
          method: "session/set_model",
          sessionId: params.sessionId,
          modelId: params.modelId,
        });
        const session = sessionOf(params.sessionId);
        if (models.rejectSetModel) {
          throw RequestError.invalidParams(
            undefined,
            `the script refuses session/set_model (asked for ${params.modelId})`,
          );
        }
        if (!modelIds(script).includes(params.modelId)) {
          throw RequestError.invalidParams(
            undefined,
            `unknown model ${params.modelId}; models: ${modelIds(script).join(", ")}`,
          );
        }
        session.modelId = params.modelId;
        return {};
      }),
    );
  }

  return {
    app,
    async close() {
      for (const session of sessions.values()) session.active?.abort();
      await Promise.all([...sessions.values()].map((s) => s.mcp.close()));
    },
  };
}
