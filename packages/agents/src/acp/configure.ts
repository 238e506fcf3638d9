import type { AcpSettings } from "@icode/agent-profiles";
import type { AcpWarningCode } from "./codes";
import { AcpFailure, describeError, RPC, type RpcError, rpcErrorOf } from "./failure";
import {
  type ConfigOption,
  type NewSessionAnswer,
  parseAnswer,
  SetConfigAnswerSchema,
  selectValues,
} from "./wire";

/** Sends one request to the agent and resolves with its raw answer (rejects with its JSON-RPC error). */
export type AgentRequest = (method: string, params: Record<string, unknown>) => Promise<unknown>;

export interface ConfigureOptions {
  readonly request: AgentRequest;
  readonly sessionId: string;
  readonly session: NewSessionAnswer;
  readonly acp: Pick<AcpSettings, "session_mode" | "config_options" | "best_effort_options">;
  /** The model to ask for, or null to keep the agent's default. */
  readonly modelId: string | null;
  /** A reasoning effort to set through the session's `category: "thought_level"` option (pipeline nodes' `effort`), or null. */
  readonly effort?: string | null;
  readonly warn: (code: AcpWarningCode, message: string) => void;
}

/**
 * What a failed model switch means (agent-profiles.md 2.8): method-not-found and invalid-params continue
 * on the agent's default with a warning; any other error fails the start, unless `best_effort_options` is
 * on (ours: a model switch is then skipped like any refused option).
 */
export function modelSwitchOutcome(
  code: number,
  bestEffort: boolean,
): { continue: true; warning: AcpWarningCode } | { continue: false } {
  if (code === RPC.methodNotFound) return { continue: true, warning: "acp_model_switch_unsupported" };
  if (code === RPC.invalidParams || bestEffort)
    return { continue: true, warning: "acp_model_switch_rejected" };
  return { continue: false };
}

/** Runs `send`; a JSON-RPC error comes back as a value, anything else (the connection failed) is thrown. */
async function attempt(send: () => Promise<unknown>): Promise<{ ok: true; value: unknown } | RpcError> {
  try {
    return { ok: true, value: await send() };
  } catch (error) {
    const rpc = rpcErrorOf(error);
    if (rpc === null) throw error;
    return rpc;
  }
}

function listed(values: readonly string[]): string {
  return values.length === 0 ? "none" : values.join(", ");
}

/**
 * Applies a new session's settings, in this order: `session_mode` (through `session/set_mode`, else a
 * `category: "mode"` option), each of `config_options` (`session/set_config_option`), then the model
 * (a `category: "model"` option, else the legacy `session/set_model`). A mode or option the agent does not
 * offer or refuses is a warning with `best_effort_options`, else `acp_config_rejected`; the model is best
 * effort as `modelSwitchOutcome` says. A lost connection propagates as thrown.
 */
export async function configureSession(options: ConfigureOptions): Promise<void> {
  const { request, sessionId, acp, warn } = options;
  let current: ConfigOption[] = options.session.configOptions ?? [];

  const skipOrReject = (code: AcpWarningCode, message: string, fix: string): void => {
    if (acp.best_effort_options) {
      warn(code, `${message}; going on without it (best_effort_options)`);
      return;
    }
    throw new AcpFailure("acp_config_rejected", message, {
      hint: `${fix}, or set best_effort_options: true to go on without it`,
    });
  };

  const setOption = async (id: string, value: string | boolean) => {
    const params: Record<string, unknown> =
      typeof value === "boolean"
        ? { sessionId, configId: id, type: "boolean", value }
        : { sessionId, configId: id, value };
    const answer = await attempt(() => request("session/set_config_option", params));
    if ("ok" in answer) {
      const parsed = parseAnswer(SetConfigAnswerSchema, "session/set_config_option", answer.value);
      if (parsed.ok && parsed.value.configOptions) current = parsed.value.configOptions;
    }
    return answer;
  };

  const mode = acp.session_mode;
  if (mode !== "") {
    const modes = options.session.modes;
    const modeOption = current.find((o) => o.category === "mode" && o.type === "select");
    if (modes?.availableModes.some((m) => m.id === mode)) {
      if (modes.currentModeId !== mode) {
        const answer = await attempt(() => request("session/set_mode", { sessionId, modeId: mode }));
        if (!("ok" in answer))
          skipOrReject(
            "acp_mode_skipped",
            `the agent refused session mode "${mode}": ${describeError(answer)}`,
            "change acp.session_mode",
          );
      }
    } else if (modeOption && selectValues(modeOption).includes(mode)) {
      if (modeOption.currentValue !== mode) {
        const answer = await setOption(modeOption.id, mode);
        if (!("ok" in answer))
          skipOrReject(
            "acp_mode_skipped",
            `the agent refused session mode "${mode}": ${describeError(answer)}`,
            "change acp.session_mode",
          );
      }
    } else {
      const offered = modes?.availableModes.map((m) => m.id) ?? (modeOption ? selectValues(modeOption) : []);
      skipOrReject(
        "acp_mode_skipped",
        `the agent does not offer session mode "${mode}" (modes: ${listed(offered)})`,
        "set acp.session_mode to one of its modes",
      );
    }
  }

  for (const [id, value] of Object.entries(acp.config_options)) {
    const option = current.find((o) => o.id === id);
    const shown = JSON.stringify(value);
    if (!option) {
      skipOrReject(
        "acp_option_skipped",
        `the agent does not offer config option "${id}" (options: ${listed(current.map((o) => o.id))})`,
        `remove config_options.${id}`,
      );
      continue;
    }
    const fits =
      typeof value === "boolean"
        ? option.type === "boolean"
        : option.type === "select" && selectValues(option).includes(value);
    if (!fits) {
      const offered = option.type === "select" ? listed(selectValues(option)) : "true or false";
      skipOrReject(
        "acp_option_skipped",
        `config option "${id}" does not take ${shown} (it takes ${offered})`,
        `change config_options.${id}`,
      );
      continue;
    }
    if (option.currentValue === value) continue;
    const answer = await setOption(id, value);
    if (!("ok" in answer))
      skipOrReject(
        "acp_option_skipped",
        `the agent refused config option "${id}" = ${shown}: ${describeError(answer)}`,
        `change config_options.${id}`,
      );
  }

  const effort = options.effort ?? null;
  if (effort !== null) {
    const option = current.find((o) => o.category === "thought_level" && o.type === "select");
    const value = option
      ? selectValues(option).find((v) => v.toLowerCase() === effort.toLowerCase())
      : undefined;
    if (option === undefined) {
      warn(
        "acp_effort_unsupported",
        `the agent offers no reasoning-effort option (no config option of category thought_level); effort "${effort}" is not applied`,
      );
    } else if (value === undefined) {
      warn(
        "acp_effort_unsupported",
        `the agent's reasoning-effort option "${option.id}" does not take "${effort}" (it takes ${listed(selectValues(option))}); it keeps ${JSON.stringify(option.currentValue)}`,
      );
    } else if (option.currentValue !== value) {
      const answer = await setOption(option.id, value);
      if (!("ok" in answer))
        warn(
          "acp_effort_unsupported",
          `the agent refused reasoning effort "${value}" (option "${option.id}"): ${describeError(answer)}`,
        );
    }
  }

  const modelId = options.modelId;
  if (modelId === null) return;
  const failed = (error: RpcError): void => {
    const outcome = modelSwitchOutcome(error.code, acp.best_effort_options);
    if (outcome.continue) {
      warn(
        outcome.warning,
        `the agent did not switch to model "${modelId}": ${describeError(error)}; going on with its default model`,
      );
      return;
    }
    throw new AcpFailure(
      "acp_start_failed",
      `switching the agent to model "${modelId}" failed: ${describeError(error)}`,
      {
        hint: "check the model id (acp.model_id or agent(model=…)), or set best_effort_options: true",
      },
    );
  };
  const notListed = (offered: readonly string[]) =>
    warn(
      "acp_model_not_listed",
      `the agent does not list model "${modelId}" (models: ${listed(offered)}); going on with its default model`,
    );

  const modelOption = current.find((o) => o.category === "model" && o.type === "select");
  if (modelOption) {
    const offered = selectValues(modelOption);
    if (!offered.includes(modelId)) return notListed(offered);
    if (modelOption.currentValue === modelId) return;
    const answer = await setOption(modelOption.id, modelId);
    if (!("ok" in answer)) failed(answer);
    return;
  }
  const legacy = options.session.models;
  if (legacy) {
    const offered = legacy.availableModels.map((m) => m.modelId);
    if (!offered.includes(modelId)) return notListed(offered);
    if (legacy.currentModelId === modelId) return;
  }
  const answer = await attempt(() => request("session/set_model", { sessionId, modelId }));
  if ("ok" in answer) return;
  if (!legacy && answer.code === RPC.methodNotFound) {
    warn(
      "acp_model_switch_unsupported",
      `the agent offers no way to switch models (no "model" config option, and session/set_model: ${describeError(answer)}); going on with its default model`,
    );
    return;
  }
  failed(answer);
}
