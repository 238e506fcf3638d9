// The agent rows of `pnpm bench` (issue 18): which rows there are, their record ids and their limits. Shared
// by the suite that measures them (lib/agent-suite.mjs) and the targets computed from them
// (lib/agent-targets.mjs). Every row is a subject next to its floor, measured in rounds in one process.

/** The chains of native agent nodes, one per provider wire and call (each against the same bare call). */
export const NATIVE_VARIANTS = [
  { key: "openai-generate", wire: "openai", stream: false, name: "OpenAI-compatible", call: "generateText" },
  { key: "openai-stream", wire: "openai", stream: true, name: "OpenAI-compatible", call: "streamText" },
  { key: "anthropic-generate", wire: "anthropic", stream: false, name: "Anthropic", call: "generateText" },
  { key: "anthropic-stream", wire: "anthropic", stream: true, name: "Anthropic", call: "streamText" },
];

export const nativeId = (variant) => `agents/native/${variant.key}`;
export const PARALLEL_ID = "agents/parallel";
export const ACP_ID = "agents/acp/spawn";
export const ACP_NODE_START_ID = "agents/acp/node-start";
export const ACP_WARM_ID = "agents/acp/warm-turn";
/** The record of a subject's floor: the subject's id plus this. */
export const floorId = (id) => `${id}/floor`;

export const LIMITS = {
  /** A chain of native agent nodes / the bare loop making the same requests. */
  native: 1.1,
  /** The bare loop's throughput at the same concurrency / the engine's, as the inverse time ratio: ≥ 0.9×. */
  parallelThroughput: 0.9,
  /** An ACP node / a bare client session with the same command… */
  acp: 1.05,
  /** …and at most this many milliseconds more per node. */
  acpExtraMs: 5,
  /** A second turn on a reused session / the bare client's warm turn (no session reuse yet: n/a). */
  warmTurn: 1.5,
};
