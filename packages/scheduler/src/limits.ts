import { MAX_COMBINE_INPUT_BYTES } from "@icode/workflow-graph";

/** Fixed limits of the spec ("Timeouts and retries", "Data and output limits", "Input scheduling"). */

/** The whole batch of a node's outgoing-edge conditions, switch checks included. */
export const CONDITION_TIMEOUT_MS = 30_000;
/** Each evaluation of a loop's `until`. */
export const UNTIL_TIMEOUT_MS = 30_000;
/** Each call of a join's `combine`. */
export const COMBINE_TIMEOUT_MS = 30_000;
/** All sources passed to one `combine`, as UTF-8 JSON of the `SourceValue` list (text, data, identifiers). */
export const COMBINE_INPUT_LIMIT_BYTES = MAX_COMBINE_INPUT_BYTES;
/** Concurrent agent attempts per run. */
export const DEFAULT_MAX_CONCURRENT_AGENTS = 4;
