import type { NodeError } from "@icode/workflow-scheduler";
import { z } from "zod";

/**
 * How an ACP attempt fails, as the node error class. Retryability follows the workflow reference's ACP row:
 * an agent that loses its connection, stops responding or reports an error is retried while attempts
 * remain (the engine cannot tell which of its errors are permanent); one that cannot start, stays
 * unreachable after the attempt's own connection tries, rejects the configuration, needs a person to log in,
 * or refuses, cuts short or leaves empty its answer is not. Reaching the node's `timeout` is the
 * scheduler's `timeout` class.
 */
export const ACP_ERROR_CLASSES = [
  /** The agent could not be started: empty command, missing `{{NAME}}`, bad `cwd`, no such program,
   * an `initialize` or `session/new` error, an unsupported protocol version, a failed model switch. */
  "acp_start_failed",
  /** The process started but the connection never opened (it exited or stayed silent through the
   * handshake), on every one of the attempt's connection tries. */
  "acp_unreachable",
  /** The agent needs a person to log in (only terminal or environment methods, or `authenticate` failed). */
  "acp_auth_required",
  /** `session_mode`, a `config_options` entry or an MCP server the engine passes was not offered or was
   * refused, and `best_effort_options` is off. */
  "acp_config_rejected",
  /** The turn ended with stop reason `refusal`. */
  "acp_refused",
  /** The turn ended with `max_tokens` or `max_turn_requests`. */
  "acp_cut_short",
  /** The turn ended normally with no message text for the result. */
  "acp_empty_answer",
  /** The process exited or closed its output while the turn ran. */
  "acp_connection_lost",
  /** No message from the agent for `idle_timeout_seconds` while the turn ran. */
  "acp_idle_timeout",
  /** The agent answered the prompt with an error, or ended the turn `cancelled` without being asked. */
  "acp_agent_error",
  /** The attempt was cancelled (run cancelled, node skipped) while the agent ran. */
  "acp_cancelled",
] as const;
export const AcpErrorClassSchema = z.enum(ACP_ERROR_CLASSES);
export type AcpErrorClass = z.infer<typeof AcpErrorClassSchema>;

/** The classes retried while `Retry.max_attempts` allows. */
export const ACP_RETRYABLE_CLASSES: ReadonlySet<AcpErrorClass> = new Set([
  "acp_connection_lost",
  "acp_idle_timeout",
  "acp_agent_error",
]);

/**
 * Warnings an ACP attempt reports as `warning` activities: what it skipped and went on without.
 */
export const ACP_WARNING_CODES = [
  /** The agent does not list the requested model; the session keeps the agent's default. */
  "acp_model_not_listed",
  /** Neither a `category: "model"` option nor `session/set_model` works with this agent. */
  "acp_model_switch_unsupported",
  /** The agent refused the model switch (invalid parameters, or any error with `best_effort_options`). */
  "acp_model_switch_rejected",
  /** `session_mode` was not offered or was refused, and `best_effort_options` is on. */
  "acp_mode_skipped",
  /** A `config_options` entry was not offered or was refused, and `best_effort_options` is on. */
  "acp_option_skipped",
  /** A connection try failed during the handshake; the attempt starts the agent again. */
  "acp_reconnecting",
  /** The transcript callback failed; the attempt's result stands. */
  "acp_transcript_failed",
  /** A pipeline node's `effort` could not be set: no `thought_level` option, a value it does not take, or refused. */
  "acp_effort_unsupported",
] as const;
export const AcpWarningCodeSchema = z.enum(ACP_WARNING_CODES);
export type AcpWarningCode = z.infer<typeof AcpWarningCodeSchema>;

/** A node error of an ACP class, retryable as the class says. */
export function acpNodeError(cls: AcpErrorClass, message: string): NodeError {
  return { class: cls, message, retryable: ACP_RETRYABLE_CLASSES.has(cls), traceback: null };
}
