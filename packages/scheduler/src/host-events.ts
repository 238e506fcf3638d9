import { CapturedTextSchema } from "@icode/workflow-graph";
import { z } from "zod";

/**
 * Events the host writes into a run's stream, beside the scheduler's: what it learnt while admitting the run
 * and what it noticed around it. They carry the same `run_id`, `seq` and `ts` as every event, and the host
 * numbers them in the same sequence (`RunOptions.firstSeq`), so `events.jsonl`, a live subscriber and a
 * replay all see one ordered stream.
 */

const base = {
  run_id: z.string(),
  seq: z.number().int().min(0),
  ts: z.number(),
};

/** The run was admitted and recorded: which workflow, where its records are. The first event of a run. */
const RunAcceptedEventSchema = z.object({
  ...base,
  type: z.literal("run_accepted"),
  session_id: z.string(),
  workflow_id: z.string(),
  title: z.string(),
  /** What kind of workflow it is: a Python-authored workflow or a JSON pipeline. */
  workflow_kind: z.enum(["python", "pipeline"]),
  /** Where the workflow was found (`project`, `global`, `builtin`, or a store's own name). */
  source: z.string(),
  /** The workflow's entry (a `.py` file, a folder, a pipeline definition ID). */
  path: z.string(),
  /** Where the store keeps the run (a folder for the file store), or `null`. */
  location: z.string().nullable(),
});

/** What loading the workflow printed (top-level `print()` and the like). */
const LoadOutputEventSchema = z.object({
  ...base,
  type: z.literal("load_output"),
  output: CapturedTextSchema,
});

/**
 * Something the user should know that does not change the run's outcome: a hook that failed or timed out, a
 * cache that was dropped and rebuilt, a profile problem. `code` is a code of the package that found it
 * (`hook_failed`, …), `source` says which part that was, and `detail` carries its structured fields.
 */
const WarningEventSchema = z.object({
  ...base,
  type: z.literal("warning"),
  source: z.string(),
  code: z.string(),
  message: z.string(),
  detail: z.record(z.string(), z.json()),
});

/** Earlier runs of the session whose process had died were marked `orphaned` before this one started. */
const RunsRecoveredEventSchema = z.object({
  ...base,
  type: z.literal("runs_recovered"),
  runs: z.array(z.object({ run_id: z.string(), pid: z.number().int() })),
});

export const HOST_EVENT_SCHEMAS = [
  RunAcceptedEventSchema,
  LoadOutputEventSchema,
  WarningEventSchema,
  RunsRecoveredEventSchema,
] as const;
