import { describe, expect, it } from "vitest";
import { DISCOVERY_CODE_STAGES, DISCOVERY_CODES } from "./codes";
import { problem } from "./problem";

describe("problem()", () => {
  it("takes the stage from the code and makes only `shadowed` a warning", () => {
    for (const code of DISCOVERY_CODES) {
      const made = problem(code, `message of ${code}`, "/w/echo.py", "a hint");
      expect(made).toMatchObject({
        code,
        stage: DISCOVERY_CODE_STAGES[code],
        severity: code === "shadowed" ? "warning" : "error",
        message: `message of ${code}`,
        file: "/w/echo.py",
        hint: "a hint",
        line: null,
        notes: [],
      });
    }
  });
});
