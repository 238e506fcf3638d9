import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { TOOLSET_WARNING_CODES, ToolsetWarningSchema } from "./codes";

describe("toolset warning codes", () => {
  it("each has a heading in docs/errors.md under Agent tool warnings (skill codes under Agent profiles)", async () => {
    const doc = await readFile(new URL("../../../../docs/errors.md", import.meta.url), "utf8");
    const start = doc.indexOf("\n# Agent tool warnings\n");
    expect(start).toBeGreaterThan(0);
    const end = doc.indexOf("\n# ", start + 1);
    const section = doc.slice(start, end === -1 ? undefined : end);
    const headings = [...section.matchAll(/^## `([a-z_]+)`$/gmu)].map((m) => m[1]);
    const own = TOOLSET_WARNING_CODES.filter((c) => !c.startsWith("skill_"));
    expect(headings.sort()).toEqual([...own].sort());
    const profiles = doc.slice(doc.indexOf("\n# Agent profiles and models\n"));
    for (const code of ["skill_invalid", "skill_root_unreadable"])
      expect(profiles).toContain(`## \`${code}\``);
  });

  it("is a closed list", () => {
    expect(ToolsetWarningSchema.safeParse({ code: "tool_name_conflict", message: "m" }).success).toBe(true);
    expect(ToolsetWarningSchema.safeParse({ code: "nope", message: "m" }).success).toBe(false);
  });
});
