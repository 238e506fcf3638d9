import type { ModelMessage } from "ai";
import type { z } from "zod";
import type { ToolCallRecordSchema, TranscriptMessageSchema } from "../transcript";

export type TranscriptMessage = z.infer<typeof TranscriptMessageSchema>;
export type ToolCallRecord = z.infer<typeof ToolCallRecordSchema>;

/** A tool call the model asked for whose result the conversation does not hold yet. */
export interface PendingCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  /** Why the SDK could not read the call (unknown tool, input that is not JSON), or null. */
  readonly invalid: string | null;
}

/**
 * One agent's conversation: what the model is sent (after compactions), everything that happened for the
 * transcript, and the tool calls still to run. A node retry continues from a copy of it.
 */
export interface Conversation {
  /** The instructions it was last sent with. */
  system: string;
  messages: ModelMessage[];
  transcript: TranscriptMessage[];
  toolCalls: ToolCallRecord[];
  pending: PendingCall[];
  /** The text of the task (the node's input), for the continuation note after a compaction. */
  readonly task: string;
}

export function newConversation(task: string): Conversation {
  return {
    system: "",
    messages: [{ role: "user", content: task }],
    transcript: [],
    toolCalls: [],
    pending: [],
    task,
  };
}

function copy(c: Conversation): Conversation {
  return {
    system: c.system,
    messages: [...c.messages],
    transcript: [...c.transcript],
    toolCalls: [...c.toolCalls],
    pending: [...c.pending],
    task: c.task,
  };
}

/**
 * The conversations of native attempts, per `runId` + `activationId` and attempt, so that a node retry can
 * continue where an attempt stopped. Bounded: an activation's conversations are dropped when one of its
 * attempts completes (a later retry then starts from the input, as the workflow reference says), all of a
 * run's by `forgetRun`, and the least recently used activation once more than `limit` are held.
 */
export class ConversationStore {
  readonly #byActivation = new Map<string, Map<number, Conversation>>();
  readonly #limit: number;

  constructor(limit = 256) {
    this.#limit = limit;
  }

  /** A copy of the conversation as attempt `attempt` left it, or null. */
  take(runId: string, activationId: string, attempt: number): Conversation | null {
    const k = key(runId, activationId);
    const attempts = this.#byActivation.get(k);
    const found = attempts?.get(attempt);
    if (attempts === undefined || found === undefined) return null;
    this.#byActivation.delete(k);
    this.#byActivation.set(k, attempts);
    return copy(found);
  }

  keep(runId: string, activationId: string, attempt: number, conversation: Conversation): void {
    const k = key(runId, activationId);
    const attempts = this.#byActivation.get(k) ?? new Map<number, Conversation>();
    this.#byActivation.delete(k);
    attempts.set(attempt, copy(conversation));
    this.#byActivation.set(k, attempts);
    while (this.#byActivation.size > this.#limit) {
      const oldest = this.#byActivation.keys().next().value as string;
      this.#byActivation.delete(oldest);
    }
  }

  /** The activation completed: no later attempt continues any of its conversations. */
  drop(runId: string, activationId: string): void {
    this.#byActivation.delete(key(runId, activationId));
  }

  forgetRun(runId: string): void {
    const prefix = `${runId}\u0000`;
    for (const k of [...this.#byActivation.keys()]) if (k.startsWith(prefix)) this.#byActivation.delete(k);
  }

  get size(): number {
    return this.#byActivation.size;
  }
}

function key(runId: string, activationId: string): string {
  return `${runId}\u0000${activationId}`;
}
