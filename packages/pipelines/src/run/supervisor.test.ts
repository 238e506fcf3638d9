import { describe, expect, it } from "vitest";
import type { AttemptEnd, SupervisorDecision } from "./events";
import { defaultSupervisor, type SupervisionContext } from "./supervisor";

const end = (status: AttemptEnd["status"]): AttemptEnd => ({
  node_id: "n",
  attempt: 1,
  status,
  session_ref: null,
  corrections: 0,
  transcript: null,
  usage: null,
  handoff: null,
  reason: null,
  error: status === "failed" ? { code: "rate_limited", message: "429" } : null,
});
const context = (status: AttemptEnd["status"], transient: boolean, previous: SupervisorDecision[] = []) =>
  ({ attempt: { ...end(status), transient }, previous, budgetLeft: 3 }) as unknown as SupervisionContext;

describe("defaultSupervisor", () => {
  it.each([
    { status: "failed" as const, transient: true, previous: [], action: "retry" },
    { status: "failed" as const, transient: false, previous: [], action: "leave" },
    { status: "blocked" as const, transient: false, previous: [], action: "leave" },
    {
      status: "failed" as const,
      transient: true,
      previous: [{ action: "retry" as const, reason: "once" }],
      action: "leave",
    },
    {
      status: "failed" as const,
      transient: true,
      previous: [{ action: "leave" as const, reason: "earlier" }],
      action: "retry",
    },
  ])(
    "$status, transient $transient, after $previous.length decisions → $action",
    ({ status, transient, previous, action }) => {
      expect(defaultSupervisor.decide(context(status, transient, previous))).toMatchObject({ action });
    },
  );
});
