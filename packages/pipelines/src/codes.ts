import { type Diagnostic, WorkflowError } from "@icode/workflow-errors";
import { z } from "zod";

/**
 * Codes of the diagnostics `validatePipeline` returns (data, never thrown); each has a heading under
 * "Pipeline codes" in docs/errors.md. A profile or model that does not resolve keeps the selection code of
 * `@icode/agent-profiles` (`agent_profile_missing`, …), as for Python workflows.
 */
export const PIPELINE_CODES = [
  // resolve and read (validatePipelineFile; the size limit also for validatePipeline)
  "pipeline_file_not_found",
  "pipeline_not_a_file",
  "pipeline_unreadable",
  "pipeline_not_utf8",
  "pipeline_too_large",
  // load: the text as JSON, then the definition schema
  "pipeline_json_syntax",
  "pipeline_duplicate_key",
  "pipeline_unknown_field",
  "pipeline_field_missing",
  "pipeline_field_invalid",
  "pipeline_no_nodes",
  "pipeline_too_many_nodes",
  "pipeline_many_nodes",
  "pipeline_limit_override_invalid",
  "pipeline_unknown_runtime",
  "pipeline_permissions_conflict",
  "pipeline_output_schema_unsupported",
  "pipeline_output_schema_no_summary",
  // graph: node IDs, dependencies, sessions, templates
  "pipeline_duplicate_node_id",
  "pipeline_unknown_dependency",
  "pipeline_self_dependency",
  "pipeline_duplicate_dependency",
  "pipeline_dependency_cycle",
  "pipeline_reuse_session_not_ancestor",
  "pipeline_reuse_session_mismatch",
  "pipeline_session_shared",
  "pipeline_template_unknown_variable",
  "pipeline_template_unknown_node",
  "pipeline_template_not_direct",
  "pipeline_template_field_undeclared",
] as const;
export const PipelineCodeSchema = z.enum(PIPELINE_CODES);
export type PipelineCode = z.infer<typeof PipelineCodeSchema>;

/** Codes of a failed `PipelineStore` operation, thrown as `PipelineError`s; each has a heading in docs/errors.md. */
export const PIPELINE_STORE_CODES = [
  /** The database could not be opened, read or written (I/O, permissions, a corrupt file, busy too long). */
  "pipeline_store_failed",
  /** The database was written by a newer iCode: its schema version is above the ones this code knows. */
  "pipeline_store_too_new",
  /** An ID does not have the expected form. */
  "pipeline_invalid_id",
  /** A run update, command or option that does not have the documented shape (a bug in the caller). */
  "pipeline_input_invalid",
  "pipeline_definition_not_found",
  "pipeline_definition_exists",
  /** The definition does not pass the schema (drafts) or validation (published); `diagnostics` says why. */
  "pipeline_definition_invalid",
  /** `expected_revision` is not the stored revision: someone else changed the definition first. */
  "pipeline_revision_conflict",
  /** A built-in or extension definition cannot be edited, published or deleted: copy it. */
  "pipeline_definition_locked",
  /** A draft cannot be run: publish it first. */
  "pipeline_definition_draft",
  "pipeline_task_input_too_long",
  "pipeline_run_not_found",
  "pipeline_run_exists",
  "pipeline_node_not_found",
  /** A run's state was written, or its commands taken, by a process that does not hold its lease. */
  "pipeline_lease_not_held",
  "pipeline_command_not_found",
  /** `completeCommand` on a command that this owner has not taken, or that is already complete. */
  "pipeline_command_not_taken",
] as const;
export const PipelineStoreCodeSchema = z.enum(PIPELINE_STORE_CODES);
export type PipelineStoreCode = z.infer<typeof PipelineStoreCodeSchema>;

/**
 * Codes of the run side (`src/run/`): control actions refused by the transition table, the control API, and
 * the `error.code` a node is left with when its attempt did not end in a way the executor reported.
 * Refusals are `CommandResult`s (`{ ok: false, code, message }`); the control API's own failures are thrown
 * as `PipelineError`s. Each has a heading in docs/errors.md.
 */
export const PIPELINE_RUN_CODES = [
  /** The action is not allowed in the run's or the node's current state (the message names both). */
  "pipeline_action_not_allowed",
  /** A live driver holds the run's lease and did not answer a control action within the timeout. */
  "pipeline_control_timeout",
  /** `drivePipelineRun` found the run's lease held by another live driver. */
  "pipeline_lease_held",
  /** The executor broke its contract (rejected, or ended an attempt `canceled` without being asked). */
  "pipeline_executor_failed",
  /** The attempt's driver died or stopped while it ran; the next driver starts a new attempt. */
  "pipeline_driver_lost",
  /** The node's worker blocked itself, or its handoff was still wrong after the last correction round. */
  "pipeline_node_blocked",
  /** The run's records on disk (`events.jsonl`, an attempt's files) could not be written; the store has the run. */
  "pipeline_records_failed",
] as const;
export const PipelineRunCodeSchema = z.enum(PIPELINE_RUN_CODES);
export type PipelineRunCode = z.infer<typeof PipelineRunCodeSchema>;

/** A failed pipeline store or run operation. `diagnostics` is set for `pipeline_definition_invalid`, else empty. */
export class PipelineError extends WorkflowError<PipelineStoreCode | PipelineRunCode> {
  readonly diagnostics: readonly Diagnostic[];

  constructor(
    code: PipelineStoreCode | PipelineRunCode,
    message: string,
    options: { hint?: string; cause?: unknown; diagnostics?: readonly Diagnostic[] } = {},
  ) {
    super(code, message, options);
    this.name = "PipelineError";
    this.diagnostics = options.diagnostics ?? [];
  }
}
