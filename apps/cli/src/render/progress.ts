import type { EngineEvent } from "@icode/workflow-engine";
import { oneLine } from "./flatten";

function label(e: { node_id: string; iteration: number; loop_id: string | null }): string {
  return e.loop_id === null ? e.node_id : `${e.node_id} (iteration ${e.iteration})`;
}

/**
 * The progress lines of text mode on stderr, one per step: node states, `ctx.emit()` messages, an agent's
 * tool calls and the notes it writes between them, loop iterations. An agent's reply streams in pieces; the
 * pieces are gathered and shown as one note when a tool call starts or the attempt ends.
 */
export class ProgressLines {
  /** Text an agent attempt wrote since its last tool call, by activation. */
  private readonly notes = new Map<string, string>();
  /** Tool calls already shown (a call's later updates are not shown again). */
  private readonly calls = new Set<string>();

  of(event: EngineEvent): string[] {
    switch (event.type) {
      case "node_started":
        return event.kind === "join" ? [] : [`▸ ${oneLine(label(event))}`];
      case "node_completed":
        return [...this.note(event), `✓ ${oneLine(label(event))}`];
      case "node_skipped":
        return [`↷ ${oneLine(label(event))} skipped`];
      case "attempt_queued":
        return event.reason === "agent_limit"
          ? [`… ${oneLine(label(event))} waits for an agent slot (${event.limit} at a time)`]
          : [];
      case "attempt_failed":
        return [
          ...this.note(event),
          ...(event.will_retry
            ? [
                `! ${oneLine(label(event))} attempt ${event.attempt} failed (${event.error.class}): ${oneLine(event.error.message)}; retrying`,
              ]
            : []),
        ];
      case "node_failed":
        return [`✗ ${oneLine(label(event))} failed (${event.error.class}): ${oneLine(event.error.message)}`];
      case "node_cancelled":
        return [`✗ ${oneLine(label(event))} cancelled (${event.reason})`];
      case "node_awaiting_retry":
        return [`… ${oneLine(label(event))} awaits retry`];
      case "loop_iteration":
        return [`↻ ${oneLine(event.node_id)} iteration ${event.loop_iteration}/${event.max_iterations}`];
      case "emit":
        return [`  ${oneLine(event.node_id)}: ${oneLine(event.text)}`];
      case "question":
        return [`? ${oneLine(event.node_id)} asks: ${oneLine(event.summary)}`];
      case "agent_activity": {
        const activity = event.activity;
        if (activity.kind === "text") {
          this.notes.set(event.activation_id, (this.notes.get(event.activation_id) ?? "") + activity.text);
          return [];
        }
        if (activity.kind === "tool_call") {
          const key = `${event.activation_id}\u0000${event.attempt}\u0000${activity.tool_call_id}`;
          if (this.calls.has(key)) return [];
          this.calls.add(key);
          return [...this.note(event), `  ${oneLine(event.node_id)} → ${oneLine(activity.title)}`];
        }
        if (activity.kind === "request_retry") {
          return [
            `  ${oneLine(event.node_id)} ! ${oneLine(activity.message)}; request retry ${activity.retry} in ${Math.round(activity.delay_ms / 100) / 10} s`,
          ];
        }
        if (activity.kind === "warning")
          return [`  ${oneLine(event.node_id)} ! ${oneLine(activity.message)}`];
        return [];
      }
      default:
        return [];
    }
  }

  /** The note an agent wrote since its last tool call, as one line (and forgotten). */
  private note(event: { node_id: string; activation_id: string }): string[] {
    const text = this.notes.get(event.activation_id)?.trim();
    this.notes.delete(event.activation_id);
    return text ? [`  ${oneLine(event.node_id)} · ${oneLine(text)}`] : [];
  }
}
