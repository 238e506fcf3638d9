import type { EngineEvent } from "@icode/workflow-engine";
import { oneLine } from "./flatten";

function label(e: { node_id: string; iteration: number; loop_id: string | null }): string {
  return e.loop_id === null ? e.node_id : `${e.node_id} (iteration ${e.iteration})`;
}

/**
 * One progress line per step on stderr (text mode): node states, `ctx.emit()` messages, agent activity,
 * loop iterations. Returns `null` for events that have no line of their own.
 */
export function progressLine(event: EngineEvent): string | null {
  switch (event.type) {
    case "node_started":
      return event.kind === "join" ? null : `▸ ${oneLine(label(event))}`;
    case "node_completed":
      return `✓ ${oneLine(label(event))}`;
    case "node_skipped":
      return `↷ ${oneLine(label(event))} skipped`;
    case "attempt_failed":
      return event.will_retry
        ? `! ${oneLine(label(event))} attempt ${event.attempt} failed (${event.error.class}): ${oneLine(event.error.message)}; retrying`
        : null;
    case "node_failed":
      return `✗ ${oneLine(label(event))} failed (${event.error.class}): ${oneLine(event.error.message)}`;
    case "node_cancelled":
      return `✗ ${oneLine(label(event))} cancelled (${event.reason})`;
    case "node_awaiting_retry":
      return `… ${oneLine(label(event))} awaits retry`;
    case "loop_iteration":
      return `↻ ${oneLine(event.node_id)} iteration ${event.loop_iteration}/${event.max_iterations}`;
    case "emit":
      return `  ${oneLine(event.node_id)}: ${oneLine(event.text)}`;
    case "agent_activity":
      return `  ${oneLine(event.node_id)} ${event.kind === "tool_call" ? "→" : "·"} ${oneLine(event.text)}`;
    case "question":
      return `? ${oneLine(event.node_id)} asks: ${oneLine(event.summary)}`;
    default:
      return null;
  }
}
