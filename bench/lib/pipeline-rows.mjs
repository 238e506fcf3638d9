// The pipeline row of `pnpm bench` (issue 19): its record ids and its limit. Shared by the suite that
// measures it (lib/pipeline-suite.mjs) and the targets computed from it (lib/pipeline-targets.mjs).

/** The subject: a pipeline of ACP agent nodes in layers, driven with the real executor and SQLite store. */
export const PIPELINE_ID = "pipelines/acp-layers";
/** Its floor: the same layers of bare ACP SDK clients, a layer's clients all at once. */
export const PIPELINE_FLOOR_ID = `${PIPELINE_ID}/floor`;
/** The arithmetic ideal, for context: layers × (the agent's delay + a bare session's start alone). */
export const PIPELINE_IDEAL_ID = `${PIPELINE_ID}/arithmetic-ideal`;

/** The run / the bare layers, as the median of per-round ratios. */
export const PIPELINE_LIMIT = 1.1;
/** How many node attempts the driver launches at once (its default, `maxParallel`), and so a layer's width. */
export const PIPELINE_WIDTH = 10;
/** What the scripted ACP agent waits before it answers each prompt. */
export const PIPELINE_DELAY_MS = 50;
