import { diagnostic } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { DISCOVERY_CODE_STAGES, DISCOVERY_CODES } from "./codes";
import { problem } from "./problem";

describe("problem()", () => {
  it("builds what diagnostic() builds, key order included, for every code", () => {
    for (const code of DISCOVERY_CODES) {
      const made = problem(code, `message of ${code}`, "/w/echo.py", "a hint");
      const expected = diagnostic({
        code,
        stage: DISCOVERY_CODE_STAGES[code],
        severity: code === "shadowed" ? "warning" : "error",
        message: `message of ${code}`,
        file: "/w/echo.py",
        hint: "a hint",
      });
      expect(JSON.stringify(made)).toBe(JSON.stringify(expected));
    }
  });
});
