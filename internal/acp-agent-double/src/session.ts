import type {
  McpServer,
  NewSessionResponse,
  SessionConfigOption,
  SessionModeState,
  SessionUpdate,
} from "@agentclientprotocol/sdk/unstable";
import { McpPool } from "./mcp-pool";
import type { AcpDoubleScript } from "./script";

/** The legacy model state of `session/new` (`session/set_model` style), which the v1 schema no longer lists. */
export type LegacyModelState = {
  currentModelId: string;
  availableModels: { modelId: string; name: string; description?: string }[];
};

/** What the double keeps of one ACP session. */
export type Session = {
  id: string;
  cwd: string;
  mcpServers: McpServer[];
  modeId: string | null;
  modelId: string | null;
  /** Values of the scripted config options, by id (the model option is `modelId`). */
  config: Map<string, string>;
  /** Prompts received so far, and how many of them took an ordered turn. */
  prompts: number;
  ordered: number;
  /** The running turn's cancel switch, if a turn runs. */
  active: AbortController | null;
  /** The conversation as updates, replayed by `session/load`. */
  history: SessionUpdate[];
  mcp: McpPool;
};

export function modelIds(script: AcpDoubleScript): string[] {
  return script.models?.available.map((m) => (typeof m === "string" ? m : m.id)) ?? [];
}

export function createSession(
  script: AcpDoubleScript,
  id: string,
  cwd: string,
  mcpServers: McpServer[],
): Session {
  const models = modelIds(script);
  return {
    id,
    cwd,
    mcpServers,
    modeId: script.modes ? (script.modes.current ?? script.modes.available[0]!.id) : null,
    modelId: script.models ? (script.models.current ?? models[0]!) : null,
    config: new Map(script.configOptions.map((o) => [o.id, o.currentValue])),
    prompts: 0,
    ordered: 0,
    active: null,
    history: [],
    mcp: new McpPool(mcpServers, cwd),
  };
}

/** The config options as the client sees them now: the scripted ones, then `model` when models go by option. */
export function configOptionsOf(script: AcpDoubleScript, session: Session): SessionConfigOption[] {
  const options: SessionConfigOption[] = script.configOptions.map((o) => ({
    id: o.id,
    name: o.name,
    ...(o.description === undefined ? {} : { description: o.description }),
    ...(o.category === undefined ? {} : { category: o.category }),
    type: "select",
    currentValue: session.config.get(o.id) ?? o.currentValue,
    options: o.options.map((v) => ({
      value: v.value,
      name: v.name,
      ...(v.description ? { description: v.description } : {}),
    })),
  }));
  if (script.models?.via === "config_option") {
    options.push({
      id: "model",
      name: "Model",
      category: "model",
      type: "select",
      currentValue: session.modelId!,
      options: script.models.available.map((m) =>
        typeof m === "string"
          ? { value: m, name: m }
          : { value: m.id, name: m.name ?? m.id, ...(m.description ? { description: m.description } : {}) },
      ),
    });
  }
  return options;
}

function modesOf(script: AcpDoubleScript, session: Session): SessionModeState | undefined {
  if (!script.modes) return undefined;
  return {
    currentModeId: session.modeId!,
    availableModes: script.modes.available.map((m) => ({
      id: m.id,
      name: m.name,
      ...(m.description ? { description: m.description } : {}),
    })),
  };
}

/** The session part of the `session/new` and `session/load` answers: modes, config options, legacy models. */
export function sessionState(
  script: AcpDoubleScript,
  session: Session,
): Omit<NewSessionResponse, "sessionId"> & { models?: LegacyModelState } {
  const modes = modesOf(script, session);
  const configOptions = configOptionsOf(script, session);
  const models: LegacyModelState | undefined =
    script.models?.via === "set_model"
      ? {
          currentModelId: session.modelId!,
          availableModels: script.models.available.map((m) =>
            typeof m === "string"
              ? { modelId: m, name: m }
              : {
                  modelId: m.id,
                  name: m.name ?? m.id,
                  ...(m.description ? { description: m.description } : {}),
                },
          ),
        }
      : undefined;
  return {
    ...(modes ? { modes } : {}),
    ...(configOptions.length > 0 ? { configOptions } : {}),
    ...(models ? { models } : {}),
  };
}
