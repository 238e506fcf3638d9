import { setTimeout as delay } from "node:timers/promises";
import { z } from "zod";
import type { AgentTool } from "../tool";
import { defineTool, toolError } from "./define-tool";

/** Longest single wait. */
export const SLEEP_MAX_SECONDS = 300;

const SleepInput = z.strictObject({
  seconds: z
    .number()
    .positive()
    .max(SLEEP_MAX_SECONDS)
    .describe(`Seconds to wait, at most ${SLEEP_MAX_SECONDS}`),
});

/** `sleep`: waits, for example for a process started in the background; a cancel ends the wait. */
export function sleepTool(): AgentTool {
  return defineTool({
    name: "sleep",
    kind: "sleep",
    activityKind: "other",
    description: `Wait for a number of seconds (at most ${SLEEP_MAX_SECONDS}), e.g. for something to finish.`,
    input: SleepInput,
    title: (input) => `sleep ${input.seconds} s`,
    async execute(input, context) {
      try {
        await delay(input.seconds * 1000, undefined, { signal: context.signal });
      } catch {
        return toolError(`the wait was cancelled`);
      }
      return { ok: true, output: `waited ${input.seconds} s` };
    },
  });
}
