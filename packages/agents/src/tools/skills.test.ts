import { join } from "node:path";
import { decideApproval } from "@icode/agent-profiles/policy";
import { writeTree } from "@icode/test-utils";
import { beforeEach, describe, expect, it } from "vitest";
import {
  callContext,
  loadProfile,
  toolsetOptions,
  type Workspace,
  workspace,
} from "../../test/tools/support";
import type { AgentTool, Toolset } from "../tool";
import { buildToolset } from "./build-toolset";
import { scriptCommand } from "./skills";

const SKILLFUL = `name: Skillful
skills:
  paths: [missing-skills]
  script_timeout: 1
  inline:
    - name: inline-notes
      description: Notes written in the profile
      instructions: [Be brief., Cite files.]
      resources:
        - name: checklist
          description: What to check
          content: "1. tests\\n2. docs"
`;

let ws: Workspace;
let toolset: Toolset;
const tool = (name: string): AgentTool => {
  const found = toolset.tools.find((t) => t.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
};
const call = (name: string, input: unknown) => tool(name).execute(input, callContext(ws));

beforeEach(async () => {
  ws = workspace();
  writeTree(ws.chrysHome, {
    "skills/release-notes/SKILL.md":
      "---\nname: release-notes\ndescription: Write release notes from the Git log\n---\n\n# Release notes\n\nRun scripts/collect.sh first.\n",
    "skills/release-notes/reference.md": "Keep a changelog.\n",
    "skills/release-notes/logo.bin": Buffer.from([0x00, 0x01, 0x02]),
    "skills/release-notes/scripts/collect.sh": 'echo "args: $*"; pwd',
    "skills/release-notes/scripts/fail.sh": "echo broken >&2; exit 4",
    "skills/release-notes/scripts/hang.sh": "sleep 300",
    "skills/release-notes/scripts/argv.py": "import sys; print(sys.argv[1:])",
    "skills/broken/SKILL.md": "no front matter here\n",
  });
  toolset = await buildToolset(toolsetOptions(ws, await loadProfile(ws, SKILLFUL)));
});

describe("skills", () => {
  it("offers load_skill, read_skill_resource and run_skill_script, and lists the skills in the instructions", () => {
    expect(toolset.tools.map((t) => [t.name, t.kind])).toEqual([
      ["load_skill", "skill"],
      ["read_skill_resource", "skill"],
      ["run_skill_script", "skill"],
    ]);
    expect(toolset.instructions).toEqual([
      "Skills you can use: load one with load_skill before following it.\n" +
        "- release-notes: Write release notes from the Git log\n" +
        "- inline-notes: Notes written in the profile",
    ]);
    expect(toolset.warnings.map((w) => w.code).sort()).toEqual(["skill_invalid", "skill_root_unreadable"]);
    expect(toolset.warnings.find((w) => w.code === "skill_invalid")?.message).toContain("broken");
  });

  it("loads a skill's instructions without its front matter, with its resources and scripts", async () => {
    const out = await call("load_skill", { name: "release-notes" });
    expect(out.ok).toBe(true);
    const text = out.ok ? out.output : "";
    expect(text).toContain("# Skill release-notes\nWrite release notes from the Git log\n\n# Release notes");
    expect(text).not.toContain("description:");
    expect(text).toContain("- reference.md\n");
    expect(text).toContain("- scripts/collect.sh (script: run it with run_skill_script)");
    expect(text).toContain(`The skill's folder: ${join(ws.chrysHome, "skills", "release-notes")}`);
    expect(await call("load_skill", { name: "inline-notes" })).toEqual({
      ok: true,
      output:
        "# Skill inline-notes\nNotes written in the profile\n\nBe brief.\nCite files.\n\n" +
        "Resources (read them with read_skill_resource):\n- checklist: What to check",
    });
    expect(await call("load_skill", { name: "nope" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("the skills are release-notes, inline-notes"),
    });
  });

  it("reads text resources, refuses binary ones and unknown names", async () => {
    expect(await call("read_skill_resource", { skill: "release-notes", resource: "reference.md" })).toEqual({
      ok: true,
      output: "Keep a changelog.\n",
    });
    expect(await call("read_skill_resource", { skill: "inline-notes", resource: "checklist" })).toEqual({
      ok: true,
      output: "1. tests\n2. docs",
    });
    expect(await call("read_skill_resource", { skill: "release-notes", resource: "logo.bin" })).toMatchObject(
      {
        ok: false,
        error: expect.stringContaining("binary"),
      },
    );
    expect(await call("read_skill_resource", { skill: "release-notes", resource: "x.md" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("has no resource x.md"),
    });
  });

  it("runs a script with its interpreter and arguments in the working directory", async () => {
    expect(
      await call("run_skill_script", {
        skill: "release-notes",
        script: "scripts/collect.sh",
        args: ["v1", "v2"],
      }),
    ).toEqual({
      ok: true,
      output: `exit code 0\nargs: v1 v2\n${ws.cwd}\n`,
    });
    expect(
      await call("run_skill_script", { skill: "release-notes", script: "scripts/argv.py", args: ["a b"] }),
    ).toEqual({
      ok: true,
      output: "exit code 0\n['a b']\n",
    });
  });

  it("reports a failing script, one past script_timeout, and a resource that is no script", async () => {
    expect(await call("run_skill_script", { skill: "release-notes", script: "scripts/fail.sh" })).toEqual({
      ok: false,
      error: "exit code 4\nbroken\n",
    });
    expect(
      await call("run_skill_script", { skill: "release-notes", script: "scripts/hang.sh" }),
    ).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^timed out after 1 s and was killed/),
    });
    expect(await call("run_skill_script", { skill: "release-notes", script: "reference.md" })).toMatchObject({
      ok: false,
      error: expect.stringContaining(
        "has no script reference.md; its scripts: scripts/argv.py, scripts/collect.sh",
      ),
    });
  });

  it("needs approval for run_skill_script by the built-in exception, and reads skill files as read targets", () => {
    const run = tool("run_skill_script");
    const decision = decideApproval({
      approval: { default: "auto", overrides: {} },
      tool: { kind: run.kind, name: run.name },
      target: run.target?.({ skill: "release-notes", script: "scripts/collect.sh" }, callContext(ws)),
      mode: "manual",
    });
    expect(decision).toMatchObject({ action: "ask", rule: "builtin_exception" });
    expect(tool("load_skill").target?.({ name: "release-notes" }, callContext(ws))).toEqual({
      type: "read",
      path: join(ws.chrysHome, "skills", "release-notes", "SKILL.md"),
    });
  });
});

describe("scriptCommand", () => {
  it("picks the interpreter by extension from PATH, and says when it is missing", () => {
    const env = { PATH: process.env["PATH"] };
    expect(scriptCommand("/s/x.sh", ["a"], env)).toMatchObject({ args: ["/s/x.sh", "a"] });
    expect(scriptCommand("/s/x.py", [], { PATH: "" })).toEqual({
      error: "no python3 or python on PATH to run x.py; interpreters are not installed for you",
    });
    expect(scriptCommand("/s/tool", ["-v"], env)).toEqual({ file: "/s/tool", args: ["-v"] });
  });
});
