import type { z } from "zod";
import type { AcpDoubleScriptInput } from "./script";

type JsonObject = Record<string, z.core.util.JSONType>;

/**
 * The pipeline handoff behaviours of a worker, as ready scripts (the engine gives the session its
 * `submit_handoff` / `report_blocked` MCP tools and checks the handoff when the turn ends):
 * - `valid`: submits a valid handoff through `submit_handoff`;
 * - `corrected`: submits one that does not match (`summary` a number), then the valid one when asked again;
 * - `never_corrected`: submits a handoff without `summary` every time it is asked;
 * - `blocked`: calls `report_blocked` with the reason;
 * - `crash`: says something, then exits with code 1 mid-node;
 * - `final_json`: calls no tool and ends with the handoff as JSON in its final message (an agent without MCP).
 */
export const HANDOFF_BEHAVIOURS = [
  "valid",
  "corrected",
  "never_corrected",
  "blocked",
  "crash",
  "final_json",
] as const;
export type HandoffBehaviour = (typeof HANDOFF_BEHAVIOURS)[number];

export interface HandoffScriptOptions {
  /** The valid handoff (default `{ summary: "done" }`). */
  readonly handoff?: JsonObject;
  /** The reason of `blocked` (default "blocked by the script"). */
  readonly reason?: string;
  /** Waits this long before answering each prompt (e.g. 50 ms for a benchmark's agent). */
  readonly delayMs?: number;
  /** Adds `echoTurn` first to each turn, so that a test sees the session and its per-session counter. */
  readonly echoTurn?: boolean;
}

/** The script of a worker with one handoff behaviour. */
export function handoffScript(
  behaviour: HandoffBehaviour,
  options: HandoffScriptOptions = {},
): AcpDoubleScriptInput {
  const handoff: JsonObject = options.handoff ?? { summary: "done" };
  const lead = [
    ...(options.echoTurn ? [{ echoTurn: true as const }] : []),
    ...(options.delayMs === undefined ? [] : [{ delay: options.delayMs }]),
  ];
  const turn = (...steps: NonNullable<AcpDoubleScriptInput["turns"]>[number]["steps"]) => ({
    steps: [...lead, ...steps],
  });
  switch (behaviour) {
    case "valid":
      return { turns: [turn({ submitHandoff: handoff }, { message: "Handed off." })] };
    case "corrected":
      return {
        turns: [
          turn({ submitHandoff: { ...handoff, summary: 42 } }, { message: "Handed off." }),
          turn({ submitHandoff: handoff }, { message: "Corrected." }),
        ],
      };
    case "never_corrected":
      return { turns: [turn({ submitHandoff: { notes: "no summary here" } }, { message: "Handed off." })] };
    case "blocked":
      return { turns: [turn({ reportBlocked: { reason: options.reason ?? "blocked by the script" } })] };
    case "crash":
      return { turns: [turn({ message: "working on it" }, { crash: 1 })] };
    case "final_json":
      return { turns: [turn({ finalJson: handoff })] };
  }
}
