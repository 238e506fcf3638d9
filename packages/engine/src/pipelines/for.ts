import { type EngineOptions, engineContext } from "../context";
import { pipelineExecutorOf } from "./agent-executor";
import { type EnginePipelines, enginePipelines } from "./definitions";

/**
 * `createEngine(options).pipelines` without an engine: for a process that only works with pipelines, such
 * as `icode pipeline run`, since it loads none of the Python workflow machinery. Its node executor is
 * `options.pipelineExecutor`, else the agent executor of `@icode/workflow-agents/pipeline` (loaded when a
 * run is first driven).
 */
export function pipelinesFor(options: EngineOptions): EnginePipelines {
  const ctx = engineContext(options);
  return enginePipelines(ctx, pipelineExecutorOf(ctx, options.pipelineExecutor));
}
