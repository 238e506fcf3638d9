/**
 * @module @icode/canonical-json
 * Canonical JSON (clarification 23): what the workflow digests cover and what every JSON file of a run
 * directory and every line of `events.jsonl` holds.
 *
 * @example
 * import { canonicalJson } from "@icode/canonical-json";
 * canonicalJson({ b: [1, "é"], a: null }); // → '{"a":null,"b":[1,"é"]}'
 */
export { canonicalJson, compareCodePoints } from "./canonical-json";
