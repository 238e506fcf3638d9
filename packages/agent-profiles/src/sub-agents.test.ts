import { describe, expect, it } from "vitest";
import { agent } from "../test/fixtures";
import { subAgentTools } from "./sub-agents";

describe("sub-agent tools (2.7)", () => {
  it("uses tool_name and tool_description, else the sub-agent's name and description; skips unknown profiles", () => {
    const explore = agent({ name: "Explore", description: "looks around" });
    const helper = agent({ name: "2-helper", description: "helps" });
    const parent = agent({
      name: "P",
      sub_agents: {
        agents: [
          { profile: "Explore", tool_name: "explore_agent", tool_description: "custom" },
          { profile: "2-helper", max_concurrency: 1 },
          { profile: "Gone" },
        ],
      },
    });
    const r = subAgentTools({ profiles: [explore, helper, parent] }, parent);
    expect(r.tools.map((t) => [t.profile.name, t.toolName, t.toolDescription, t.maxConcurrency])).toEqual([
      ["Explore", "explore_agent", "custom", 3],
      ["2-helper", "2-helper", "helps", 1],
    ]);
    expect(r.warnings).toEqual(['sub-agent "Gone" of profile "P" is not a loaded profile; it is skipped']);
  });
});
