/**
 * The one place this package names the scheduler's event union and value shapes, so the records package
 * speaks exactly the events the scheduler emits.
 */
export {
  cutText,
  type EngineEvent,
  type EngineEventOf,
  EngineEventSchema,
  type RecordSink,
  RunOutcomeSchema,
  type RunOutput,
  RunOutputSchema,
  SUMMARY_LIMIT,
  type WorkflowValue,
  WorkflowValueSchema,
} from "@icode/workflow-scheduler";
