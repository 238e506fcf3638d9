import { z } from "zod";
import { ACP_ERROR_CLASSES, ACP_WARNING_CODES } from "./acp/codes";
import { PIPELINE_NODE_ERROR_CODES, PIPELINE_NODE_WARNING_CODES } from "./pipeline/codes";
import { TOOLSET_WARNING_CODES } from "./tools/codes";

/**
 * The node error classes of agent attempts (`error.class` of `attempt_failed` / `node_failed`), one block per
 * runtime. Each has a heading under "Agent node error classes" in docs/errors.md. Whether the scheduler may
 * retry the node follows the workflow reference's "Timeouts and retries" table: `RETRYABLE_AGENT_CLASSES`.
 */
export const NATIVE_ERROR_CLASSES = [
  // native: the agent loop on a model provider
  /** 429 from the provider; still failing after the in-attempt retries. */
  "model_rate_limited",
  /** 5xx from the provider; still failing after the in-attempt retries. */
  "model_server_error",
  /** The provider said it is overloaded (Anthropic 529 `overloaded_error`, 503); after the in-attempt retries. */
  "model_overloaded",
  /** The connection failed or dropped (refused, reset, cut mid-reply); after the in-attempt retries. */
  "model_connection_failed",
  /** The provider's TLS certificate was refused (self-signed, expired, wrong host); `verify_ssl: false` skips the check. */
  "model_tls_failed",
  /** `http_connect_timeout` or `http_read_timeout` passed; after the in-attempt retries. */
  "model_request_timeout",
  /** A stream ended without its finish reason (`stream_requires_finish_reason`); after the in-attempt retries. */
  "model_stream_interrupted",
  /** The quota, plan or credit balance is exhausted (OpenAI `insufficient_quota`, Anthropic billing). */
  "model_quota_exhausted",
  /** The provider refused the credentials (401, 403 permission). */
  "model_auth_failed",
  /** The request is over the context window, and compaction could not help (or a smaller limit was named). */
  "model_context_overflow",
  /** The provider rejected the request for another reason (400, 404, 422 …). */
  "model_request_rejected",
  /** The provider stopped the reply with its content filter. */
  "model_content_filtered",
  /** The provider answered something the SDK could not read (no choices, bad JSON). */
  "model_response_invalid",
  /** A `{{NAME}}` of `api_key`, `http_headers` or `chat_options` names an unset or empty variable. */
  "model_template_missing",
  /** The model profile asks for something this engine cannot do (an unknown provider, `verify_ssl` …). */
  "model_config_unsupported",
  /** The approval mode cannot be served (`auto`: an approval judge model, which this engine does not have). */
  "approval_mode_unsupported",
  /** The toolset could not be built for the attempt. */
  "agent_tools_failed",
  /** The attempt was stopped by its signal (timeout, cancellation, skip); the scheduler records why. */
  "agent_aborted",
  /** A bug in the loop itself (an exception it did not expect). */
  "agent_internal_error",
] as const;

/** Every agent error class: the native loop's, then the ACP adapter's (`./acp/codes`). */
export const AGENT_ERROR_CLASSES = [...NATIVE_ERROR_CLASSES, ...ACP_ERROR_CLASSES] as const;
export const AgentErrorClassSchema = z.enum(AGENT_ERROR_CLASSES);
export type AgentErrorClass = z.infer<typeof AgentErrorClassSchema>;

/** Classes whose node may be retried by the scheduler (while `Retry.max_attempts` allows). */
export const RETRYABLE_AGENT_CLASSES: ReadonlySet<AgentErrorClass> = new Set<AgentErrorClass>([
  "model_rate_limited",
  "model_server_error",
  "model_overloaded",
  "model_connection_failed",
  "model_request_timeout",
  "model_stream_interrupted",
  "model_response_invalid",
  "agent_aborted",
]);

/** The transient classes: retried within the attempt first (agent-profiles.md 4.4). */
export const TRANSIENT_AGENT_CLASSES: ReadonlySet<AgentErrorClass> = new Set<AgentErrorClass>([
  "model_rate_limited",
  "model_server_error",
  "model_overloaded",
  "model_connection_failed",
  "model_request_timeout",
  "model_stream_interrupted",
]);

/**
 * Codes of the native loop's `warning` activities: things the user should know that do not fail the attempt.
 * - `model_warning`: the AI SDK warned about the request (a setting the provider ignores, …);
 * - `compaction_budget_spent`: `phase4_side_call_token_budget` allows no more note-writing requests;
 * - `compaction_failed`: writing the continuation note failed; the conversation goes on uncompacted;
 * - `conversation_unavailable`: a node retry could not continue the earlier conversation (it was dropped or
 *   the earlier attempt never finished stopping) and starts from the input.
 */
export const NATIVE_WARNING_CODES = [
  "model_warning",
  "compaction_budget_spent",
  "compaction_failed",
  "conversation_unavailable",
] as const;

/** Every code this package reports, by kind: what docs/errors.md must have a heading for. */
export const AGENT_CODE_LISTS = {
  error_classes: AGENT_ERROR_CLASSES,
  native_warnings: NATIVE_WARNING_CODES,
  acp_warnings: ACP_WARNING_CODES,
  toolset_warnings: TOOLSET_WARNING_CODES,
  pipeline_node_errors: PIPELINE_NODE_ERROR_CODES,
  pipeline_node_warnings: PIPELINE_NODE_WARNING_CODES,
} as const;
