import { z } from "zod";

/**
 * The `error.code`s of a pipeline node attempt that failed before or around its agent (`NodeOutcome` with
 * `status: "failed"`), besides the agent error classes of the runtime (`model_*`, `acp_*`, `agent_*`). Each
 * has a heading under "Pipeline node codes" in docs/errors.md.
 */
export const PIPELINE_NODE_ERROR_CODES = [
  /** `profile_id` matches no agent profile or several, or it is null and there is no default agent. */
  "pipeline_node_profile_unresolved",
  /** `model` does not resolve by the model selection rules, or a native profile has no model at all. */
  "pipeline_node_model_unresolved",
  /** The node's `cwd` does not exist or is not a directory. */
  "pipeline_node_cwd_invalid",
  /** `isolate` cannot be served: no git repository, `git worktree add` or the commit failed, or it contradicts the continued session. */
  "pipeline_node_isolate_failed",
  /** `reuse_session_of` names a session this executor does not hold (unknown, ended, its agent gone, or busy). */
  "pipeline_node_session_unavailable",
  /** The engine's handoff MCP server (shipped in dist) could not be found. */
  "pipeline_node_handoff_server_missing",
  /** A defect of the executor itself: an exception it did not expect. */
  "pipeline_node_internal_error",
] as const;
export const PipelineNodeErrorCodeSchema = z.enum(PIPELINE_NODE_ERROR_CODES);
export type PipelineNodeErrorCode = z.infer<typeof PipelineNodeErrorCodeSchema>;

/**
 * Codes of the `warning` activities a pipeline node attempt reports (besides the runtime's own):
 * - `pipeline_node_effort_unsupported`: `effort` has no mapping on this native provider;
 * - `pipeline_node_skills_not_applied`: `skills` were given to an ACP runtime, which loads skills its own way;
 * - `pipeline_node_session_kept_settings`: a continued session keeps the runtime, profile, model and
 *   directory it was started with, and the node asked for others;
 * - `pipeline_node_artifacts_not_listed`: an isolated node's handoff has an `artifacts` that is not a list
 *   (a custom schema), so its branch and changed files are not appended;
 * - `pipeline_node_transcript_failed`: the attempt's transcript could not be written; the outcome stands
 *   (its `transcript` is null).
 */
export const PIPELINE_NODE_WARNING_CODES = [
  "pipeline_node_effort_unsupported",
  "pipeline_node_skills_not_applied",
  "pipeline_node_session_kept_settings",
  "pipeline_node_artifacts_not_listed",
  "pipeline_node_transcript_failed",
] as const;
export type PipelineNodeWarningCode = (typeof PIPELINE_NODE_WARNING_CODES)[number];

/** A failure the executor reports as a `failed` outcome. */
export class NodeFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "NodeFailure";
  }
}
