import { describe, expect, it } from "vitest";
import { BUILTIN_AGENTS } from "./builtins";

describe("built-in agents (1.5)", () => {
  const byName = (name: string) => BUILTIN_AGENTS.find((p) => p.name === name)!;

  it.each([
    [
      "Code",
      "b011c0de0001",
      "Code Agent",
      false,
      [
        "filesystem.read",
        "filesystem.write",
        "search",
        "shell",
        "ask_user",
        "sleep",
        "doc_converter",
        "todo",
      ],
      [
        ["Explore", "explore_agent"],
        ["General", "general_agent"],
      ],
    ],
    [
      "QA",
      "b0119a000005",
      "Q&A Agent",
      false,
      ["filesystem.read", "search", "shell", "sleep", "doc_converter", "todo"],
      [["Explore", "explore_agent"]],
    ],
    ["Explore", "b011e80e0002", "Explore", true, ["filesystem.read", "search", "shell", "sleep"], []],
    [
      "General",
      "b0119e4e0004",
      "General",
      true,
      ["filesystem.read", "filesystem.write", "search", "shell", "sleep", "todo"],
      [],
    ],
  ])("%s", (name, id, display, subOnly, builtins, subs) => {
    const p = byName(name);
    expect([p.id, p.display_name, p.sub_agent_only, p.tools.builtins]).toEqual([
      id,
      display,
      subOnly,
      builtins,
    ]);
    expect(p.sub_agents.agents.map((a) => [a.profile, a.tool_name])).toEqual(subs);
    expect(p.instructions.length).toBeGreaterThan(50);
    expect(p.acp).toBeUndefined();
  });

  it("Code and QA load AGENTS.md, allow 3 concurrent sub-agent calls and share the approval rules", () => {
    for (const name of ["Code", "QA"]) {
      const p = byName(name);
      expect(p.memory.files).toEqual(["AGENTS.md"]);
      expect(p.sub_agents.max_total_concurrency).toBe(3);
      expect(p.approval.default).toBe("auto");
      expect(p.approval.overrides).toMatchObject({
        shell: "require",
        "skill.run_skill_script": "require",
        todo: "skip",
      });
    }
    expect(byName("Code").approval.overrides["filesystem.write"]).toBe("require");
    expect(byName("QA").approval.overrides["filesystem.write"]).toBeUndefined();
  });

  it("Explore filters shell commands with the read_only preset", () => {
    expect(byName("Explore").tools.shell_filter?.preset).toBe("read_only");
  });
});
