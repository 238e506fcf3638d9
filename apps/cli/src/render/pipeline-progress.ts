import type { StoredPipelineEvent } from "@icode/workflow-engine";
import { oneLine } from "./flatten";
import { shellQuote } from "./shell-quote";

/**
 * The progress line of one stored pipeline event on stderr, or `null` for events a person need not see
 * (attempts' activity, the driver's own bookkeeping). Text from the run is flattened to one line.
 */
export function pipelineProgressLine(runId: string, stored: StoredPipelineEvent): string | null {
  const e = stored.event;
  switch (e.type) {
    case "node_state": {
      const node = oneLine(e.node_id);
      switch (e.to) {
        case "running":
          return `▶ ${node} running`;
        case "succeeded":
          return `✓ ${node} succeeded`;
        case "canceled":
          return `✗ ${node} canceled`;
        case "waiting_approval":
          return `⏸ ${node} waits for approval: icode pipeline approve ${runId} ${shellQuote(e.node_id)}`;
        default:
          return null;
      }
    }
    case "attempt_ended":
      if (e.status !== "failed" && e.status !== "blocked") return null;
      return `✗ ${oneLine(e.node_id)} attempt ${e.attempt} ${e.status}${e.error === null ? "" : `: ${oneLine(e.error.message)} [${e.error.code}]`}`;
    case "run_state":
      return e.to === "running" && e.from === "pending"
        ? null
        : `run ${e.to}${e.reason === "" ? "" : ` (${oneLine(e.reason)})`}`;
    case "command_applied":
      return `· ${e.command.action}${"node_id" in e.command ? ` ${oneLine(e.command.node_id)}` : ""} applied`;
    case "command_refused":
      return `· ${e.command.action} refused: ${oneLine(e.message)} [${e.code}]`;
    case "supervisor_decision":
      return `· supervisor: ${e.decision.action} ${oneLine(e.node_id)} (${e.budget_left} decision${e.budget_left === 1 ? "" : "s"} left)`;
    default:
      return null;
  }
}
