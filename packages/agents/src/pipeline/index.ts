/**
 * @module @icode/workflow-agents/pipeline
 * The pipeline driver's `NodeExecutor` on the agent runtimes: a node attempt on the native loop or an ACP
 * agent, in its own git worktree when `isolate` says so, in a new or continued agent session, ending with
 * a structured handoff (`submit_handoff`, or the final message's JSON) checked against the node's schema,
 * with correction rounds in the same session.
 *
 * @example
 * import { createPipelineNodeExecutor } from "@icode/workflow-agents/pipeline";
 * const executor = createPipelineNodeExecutor({ config, chrysHome, homeDir });
 * const outcome = await executor.runNode(request, signal);
 * // → { status: "succeeded", handoff: { summary: "…", artifacts: ["icode/run-1/fix", "src/a.ts"] },
 * //     session_ref: "acp:run-1/fix#1.1:<ACP session id>", corrections: 1, transcript: "nodes/fix/attempt-1/transcript.json", usage }
 * await executor.stopSessions("run-1");
 */
export {
  NodeFailure,
  PIPELINE_NODE_ERROR_CODES,
  PIPELINE_NODE_WARNING_CODES,
  type PipelineNodeErrorCode,
  PipelineNodeErrorCodeSchema,
  type PipelineNodeWarningCode,
} from "./codes";
export { createPipelineNodeExecutor, type PipelineNodeExecutorOptions } from "./executor";
export { DEFAULT_CORRECTION_ROUNDS } from "./handoff-prompt";
export type { NativeSessionOptions } from "./native-session";
export { nativeEffortOptions, nodeApprovalMode, RUNTIME_PRESETS } from "./resolve";
