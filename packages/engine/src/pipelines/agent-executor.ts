import type { NodeExecutor } from "@icode/pipelines";
import type { EngineContext } from "../context";
import type { ExecutorSource } from "./runs";

/**
 * The node executor of the runs: the one given (`pipelineExecutor`, its owner closes it), else the agent
 * executor of `@icode/workflow-agents/pipeline` over this computer's agent configuration, made on first use
 * (loading the agent runtimes only then) and closed by `close()`.
 */
export function pipelineExecutorOf(ctx: EngineContext, given: NodeExecutor | undefined): ExecutorSource {
  let made: Promise<NodeExecutor> | null = null;
  return {
    get(): Promise<NodeExecutor> {
      if (given !== undefined) return Promise.resolve(given);
      made ??= (async () => {
        const [profiles, agents] = await Promise.all([
          import("@icode/agent-profiles"),
          import("@icode/workflow-agents/pipeline"),
        ]);
        const config = await profiles.loadAgentConfig({
          chrysHome: ctx.chrysHome,
          cwd: ctx.cwd,
          env: ctx.env,
          homeDir: ctx.homeDir,
        });
        return agents.createPipelineNodeExecutor({ config, chrysHome: ctx.chrysHome, homeDir: ctx.homeDir });
      })();
      made.catch(() => {
        made = null;
      });
      return made;
    },
    async close(): Promise<void> {
      const pending = made;
      made = null;
      if (pending === null) return;
      const executor = await pending.catch(() => null);
      await executor?.close();
    },
  };
}
