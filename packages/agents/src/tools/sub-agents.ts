import type { SubAgentTool } from "@icode/agent-profiles/policy";
import { z } from "zod";
import type { AgentTool, SubAgentRunner, ToolOutcome } from "../tool";
import { brief, defineTool, toolError } from "./define-tool";
import { Semaphore } from "./semaphore";

const SubAgentInput = z.strictObject({
  task: z.string().min(1).describe("The task for the sub-agent, with everything it needs to know"),
});

/**
 * One tool per sub-agent entry (agent-profiles.md 2.7), calling `runSubAgent` with the task. At most
 * `max_concurrency` calls of one tool and `max_total_concurrency` calls across all of them run at once; the
 * others wait for a slot (a cancel while waiting ends the call). A concurrency of 0 or less makes every call
 * of the tools it limits fail. A failed sub-agent is an error outcome for the parent's model.
 */
export function subAgentToolset(
  entries: readonly SubAgentTool[],
  maxTotalConcurrency: number,
  runSubAgent: SubAgentRunner,
): AgentTool[] {
  const total = new Semaphore(Math.max(0, maxTotalConcurrency));
  return entries.map((entry) => {
    const own = new Semaphore(Math.max(0, entry.maxConcurrency));
    const name = entry.toolName;
    return defineTool({
      name,
      kind: "sub_agent",
      activityKind: "sub_agent",
      description:
        entry.toolDescription.trim() === ""
          ? `Hand a self-contained task to the sub-agent ${entry.profile.name}; it answers with its result.`
          : entry.toolDescription,
      input: SubAgentInput,
      title: (input) => `${name}: ${brief(input.task)}`,
      async execute(input, context): Promise<ToolOutcome> {
        if (entry.maxConcurrency <= 0 || maxTotalConcurrency <= 0) {
          const which =
            entry.maxConcurrency <= 0
              ? `max_concurrency of sub-agent ${entry.profile.name} is ${entry.maxConcurrency}`
              : `sub_agents.max_total_concurrency is ${maxTotalConcurrency}`;
          return toolError(`${name} cannot run: ${which}; it must be at least 1 in the agent's profile`);
        }
        let releaseOwn: (() => void) | undefined;
        let releaseTotal: (() => void) | undefined;
        try {
          releaseOwn = await own.acquire(context.signal);
          releaseTotal = await total.acquire(context.signal);
        } catch {
          releaseOwn?.();
          return toolError(`${name} was cancelled while waiting for a free sub-agent slot`);
        }
        try {
          return await runSubAgent(entry.profile, input.task, context.signal);
        } finally {
          releaseTotal();
          releaseOwn();
        }
      },
    });
  });
}
