import { describe, expect, it } from "vitest";
import { AGENT_ERROR_CLASSES } from "../codes";
import { ACP_ERROR_CLASSES, acpNodeError } from "./codes";

describe("ACP error classes", () => {
  // The workflow reference's ACP row: lost connection, no response, an error the agent reports → retried;
  // cannot start, unreachable after reconnecting, rejected configuration, refused, cut short, empty → not.
  it.each([
    ["acp_connection_lost", true],
    ["acp_idle_timeout", true],
    ["acp_agent_error", true],
    ["acp_start_failed", false],
    ["acp_unreachable", false],
    ["acp_config_rejected", false],
    ["acp_auth_required", false],
    ["acp_refused", false],
    ["acp_cut_short", false],
    ["acp_empty_answer", false],
    ["acp_cancelled", false],
  ] as const)("%s is retryable: %s", (cls, retryable) => {
    expect(acpNodeError(cls, "m")).toEqual({ class: cls, message: "m", retryable, traceback: null });
  });

  it("lists every class once, and the package's classes include them", () => {
    expect(new Set(ACP_ERROR_CLASSES).size).toBe(ACP_ERROR_CLASSES.length);
    expect(ACP_ERROR_CLASSES).toHaveLength(11);
    for (const cls of ACP_ERROR_CLASSES) expect(AGENT_ERROR_CLASSES).toContain(cls);
  });
});
