import { CONFIG_PROBLEM_CODES, SELECTION_CODES } from "@icode/agent-profiles";
import { PIPELINE_CODES, PIPELINE_RUN_CODES, PIPELINE_STORE_CODES } from "@icode/pipelines/codes";
import { BRIDGE_ERROR_CODES, BRIDGE_WARNING_CODES, CALL_ERROR_CODES, LOAD_CODES } from "@icode/python-bridge";
import { SCRIPT_METADATA_CODES } from "@icode/script-metadata";
import { AGENT_CODE_LISTS } from "@icode/workflow-agents/codes";
import { DISCOVERY_CODES } from "@icode/workflow-discovery";
import { GRAPH_CODES, GRAPH_RULES, GRAPH_WARNINGS } from "@icode/workflow-graph";
import { HOOK_WARNING_CODES, RECORDS_CODES } from "@icode/workflow-records";
import {
  CANCEL_REASONS,
  CONTROL_ERROR_CODES,
  NODE_CANCEL_REASONS,
  RUN_OUTCOMES,
  SCHEDULER_ERROR_CLASSES,
  SCHEDULER_ERROR_CODES,
  SKIP_REASONS,
} from "@icode/workflow-scheduler";
import { RUN_REJECTION_CODES } from "./run/report";

/**
 * Every code the engine and its parts emit, each package's closed list under the name of where it appears.
 * `docs/errors.md` has a heading for each (a test holds it to this list, and to the codes used in the
 * sources).
 */
export const ERROR_CODES = {
  validate_diagnostics: [
    ...DISCOVERY_CODES,
    ...SCRIPT_METADATA_CODES,
    ...LOAD_CODES,
    ...GRAPH_CODES,
    ...GRAPH_WARNINGS,
    ...SELECTION_CODES,
    "internal_error",
  ],
  graph_rules: GRAPH_RULES,
  call_errors: CALL_ERROR_CODES,
  node_error_classes: [...SCHEDULER_ERROR_CLASSES, ...AGENT_CODE_LISTS.error_classes],
  run_outcomes: RUN_OUTCOMES,
  cancel_reasons: [...CANCEL_REASONS, ...NODE_CANCEL_REASONS, ...SKIP_REASONS],
  run_rejections: RUN_REJECTION_CODES,
  control_errors: CONTROL_ERROR_CODES,
  records_errors: RECORDS_CODES,
  hook_warnings: HOOK_WARNING_CODES,
  library_errors: [...BRIDGE_ERROR_CODES, ...SCHEDULER_ERROR_CODES],
  engine_warnings: BRIDGE_WARNING_CODES,
  agent_profile_problems: CONFIG_PROBLEM_CODES,
  pipeline_diagnostics: PIPELINE_CODES,
  pipeline_store_errors: PIPELINE_STORE_CODES,
  pipeline_run_errors: PIPELINE_RUN_CODES,
  agent_warnings: [
    ...AGENT_CODE_LISTS.native_warnings,
    ...AGENT_CODE_LISTS.acp_warnings,
    ...AGENT_CODE_LISTS.toolset_warnings,
    ...AGENT_CODE_LISTS.pipeline_node_warnings,
  ],
  pipeline_node_errors: AGENT_CODE_LISTS.pipeline_node_errors,
} as const satisfies Record<string, readonly string[]>;
