import { rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadMemory, MEMORY_TOKEN_LIMIT } from "../src/memory";
import { discoverSkills } from "../src/skills";
import { profileTrust } from "../src/trust";
import { agent, tempTree } from "./fixtures";

const cleanup: string[] = [];
afterAll(async () => {
  for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
});
async function tree(files: Record<string, string>) {
  const dir = await tempTree(files);
  cleanup.push(dir);
  return dir;
}

describe("memory (2.5)", () => {
  it("loads files first, then folders level by level, only .md and .txt, each once", async () => {
    const cwd = await tree({
      "AGENTS.md": "agents",
      "docs/b.md": "b",
      "docs/a.txt": "a",
      "docs/skip.json": "{}",
      "docs/.hidden.md": "h",
      "docs/sub/c.md": "c",
      "docs/sub/deeper/d.md": "d",
      "docs/sub/deeper/deepest/e.md": "too deep",
      "docs/z/f.md": "f",
    });
    const p = agent({ name: "M", memory: { files: ["AGENTS.md", "docs/b.md"], folders: ["docs"] } });
    const m = await loadMemory(p, { cwd });
    expect(m.files.map((f) => f.path.slice(cwd.length + 1))).toEqual([
      "AGENTS.md",
      "docs/b.md",
      "docs/a.txt",
      "docs/sub/c.md",
      "docs/z/f.md",
      "docs/sub/deeper/d.md",
    ]);
    expect(m.problems).toEqual([]);
    expect(m.tokens).toBe(m.files.reduce((n, f) => n + f.tokens, 0));
  });

  it("rejects relative paths that leave the working directory, and non-text files", async () => {
    const outside = await tree({ "x.md": "outside" });
    const cwd = await tree({ "notes.json": "{}" });
    const p = agent({
      name: "M",
      memory: { files: ["../x.md", "notes.json", join(outside, "x.md")], folders: ["../"] },
    });
    const m = await loadMemory(p, { cwd });
    expect(m.files.map((f) => f.content)).toEqual(["outside"]);
    expect(m.problems.map((x) => [x.code, x.field])).toEqual([
      ["memory_path_outside_cwd", "memory.files[0]"],
      ["memory_not_text_file", "memory.files[1]"],
      ["memory_path_outside_cwd", "memory.folders[0]"],
    ]);
  });

  it("takes at most 100 files from a folder", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 105; i += 1) files[`many/${String(i).padStart(3, "0")}.md`] = "x";
    const cwd = await tree(files);
    const m = await loadMemory(agent({ name: "M", memory: { folders: ["many"] } }), { cwd });
    expect(m.files).toHaveLength(100);
    expect(m.files.at(-1)?.path).toBe(join(cwd, "many/099.md"));
    expect(m.problems.map((x) => x.code)).toEqual(["memory_folder_limit"]);
  });

  it("stops at 35,000 estimated tokens: the file that would cross the cap and all later ones are skipped", async () => {
    const chars = (MEMORY_TOKEN_LIMIT - 10) * 4;
    const cwd = await tree({ "big.md": "x".repeat(chars), "small.md": "y".repeat(100), "tiny.md": "z" });
    const m = await loadMemory(agent({ name: "M", memory: { files: ["big.md", "small.md", "tiny.md"] } }), {
      cwd,
    });
    expect(m.files.map((f) => f.path.slice(cwd.length + 1))).toEqual(["big.md"]);
    expect(m.tokens).toBe(MEMORY_TOKEN_LIMIT - 10);
    expect(m.problems.map((x) => x.code)).toEqual(["memory_token_limit"]);
    expect(m.problems[0]?.message).toContain("2 file(s)");
  });

  it("dedupes a file reached twice, also through a link", async () => {
    const cwd = await tree({ "a.md": "a", "dir/keep.md": "k" });
    await symlink(join(cwd, "a.md"), join(cwd, "dir/link.md"));
    const m = await loadMemory(
      agent({ name: "M", memory: { files: ["a.md", "./a.md"], folders: ["dir"] } }),
      { cwd },
    );
    expect(m.files.map((f) => f.content)).toEqual(["a", "k"]);
  });

  it("warns about a missing memory file of a user profile, but not about the built-ins' AGENTS.md", async () => {
    const cwd = await tree({});
    const user = await loadMemory(agent({ name: "M", memory: { files: ["NOTES.md"] } }), { cwd });
    expect(user.problems.map((x) => x.code)).toEqual(["memory_unreadable"]);
    const builtin = await loadMemory(
      agent({ name: "Code", memory: { files: ["AGENTS.md"] } }, { source: "builtin" }),
      { cwd },
    );
    expect(builtin.problems).toEqual([]);
  });
});

describe("skills (2.4)", () => {
  const skill = (name: string, description = `does ${name}`) =>
    `---\nname: ${name}\ndescription: ${description}\n---\nBody of ${name}.\n`;

  it("searches each root and two levels below, without descending into a found skill", async () => {
    const home = await tree({
      "chrys/skills/one/SKILL.md": skill("one"),
      "chrys/skills/one/nested/SKILL.md": skill("nested"),
      "chrys/skills/group/two/SKILL.md": skill("two"),
      "chrys/skills/group/deep/er/three/SKILL.md": skill("three"),
      "extra/SKILL.md": skill("root-skill"),
    });
    const p = agent({ name: "S", skills: { paths: [join(home, "extra")] } });
    const r = await discoverSkills(p, {
      cwd: home,
      chrysHome: join(home, "chrys"),
      homeDir: home,
      settings: { projectSkillsEnabled: false },
    });
    expect(r.skills.map((s) => [s.name, s.source])).toEqual([
      ["root-skill", "path"],
      ["two", "config"],
      ["one", "config"],
    ]);
    expect(r.problems).toEqual([]);
  });

  it("follows the source order for equal names: paths, config, ~/.agents, the project's .agents, inline", async () => {
    const home = await tree({
      "p/dup/SKILL.md": skill("dup", "from paths"),
      "chrys/skills/dup/SKILL.md": skill("dup", "from config"),
      "chrys/skills/cfg/SKILL.md": skill("cfg", "from config"),
      ".agents/skills/cfg/SKILL.md": skill("cfg", "from user agents"),
      ".agents/skills/usr/SKILL.md": skill("usr", "from user agents"),
      "work/.agents/skills/usr/SKILL.md": skill("usr", "from project"),
      "work/.agents/skills/prj/SKILL.md": skill("prj", "from project"),
    });
    const p = agent({
      name: "S",
      skills: {
        paths: ["~/p"],
        inline: [
          { name: "prj", description: "inline" },
          { name: "inl", description: "inline" },
        ],
      },
    });
    const opts = { cwd: join(home, "work"), chrysHome: join(home, "chrys"), homeDir: home };
    const r = await discoverSkills(p, { ...opts, settings: { projectSkillsEnabled: true } });
    expect(r.skills.map((s) => [s.name, s.description])).toEqual([
      ["dup", "from paths"],
      ["cfg", "from config"],
      ["usr", "from user agents"],
      ["prj", "from project"],
      ["inl", "inline"],
    ]);
    const off = await discoverSkills(p, { ...opts, settings: { projectSkillsEnabled: false } });
    expect(off.skills.find((s) => s.name === "prj")?.source).toBe("inline");
    const noUser = await discoverSkills(
      agent({ name: "S", skills: { auto_load_user_agents_skills: false } }),
      { ...opts, settings: { projectSkillsEnabled: true } },
    );
    expect(noUser.skills.map((s) => s.name)).toEqual(["cfg", "dup", "prj", "usr"]);
    expect(noUser.skills.find((s) => s.name === "usr")?.source).toBe("project_agents");
  });

  it("lists resources and the scripts allowed by script_extensions, and reports bad SKILL.md files", async () => {
    const home = await tree({
      "chrys/skills/tool/SKILL.md": skill("tool"),
      "chrys/skills/tool/scripts/run.py": "print(1)",
      "chrys/skills/tool/scripts/run.rb": "puts 1",
      "chrys/skills/tool/ref/guide.md": "g",
      "chrys/skills/bad/SKILL.md": "---\nname: Bad Name\ndescription: x\n---\n",
      "chrys/skills/nodesc/SKILL.md": "---\nname: nodesc\n---\n",
      "chrys/skills/nofront/SKILL.md": "just text",
    });
    const p = agent({ name: "S", skills: { script_extensions: [".py"] } });
    const r = await discoverSkills(p, {
      cwd: home,
      chrysHome: join(home, "chrys"),
      homeDir: home,
      settings: { projectSkillsEnabled: false },
    });
    const tool = r.skills.find((s) => s.name === "tool")!;
    expect(tool.resources.map((x) => x.name)).toEqual(["ref/guide.md", "scripts/run.py", "scripts/run.rb"]);
    expect(tool.scripts).toEqual([join(home, "chrys/skills/tool/scripts/run.py")]);
    expect(r.skills.map((s) => s.name)).toEqual(["tool"]);
    expect(r.problems.map((x) => x.code)).toEqual(["skill_invalid", "skill_invalid", "skill_invalid"]);
  });

  it("warns about a configured skill path that does not exist, not about the standard ones", async () => {
    const home = await tree({});
    const r = await discoverSkills(agent({ name: "S", skills: { paths: ["missing"] } }), {
      cwd: home,
      chrysHome: join(home, "chrys"),
      homeDir: home,
      settings: { projectSkillsEnabled: true },
    });
    expect(r.problems.map((x) => [x.code, x.field])).toEqual([["skill_root_unreadable", "skills.paths[0]"]]);
  });
});

describe("trust information (1.6)", () => {
  it("lists the ACP command of an ACP profile; a project one needs trust", async () => {
    const home = await tree({});
    const p = agent(
      { name: "Ext", acp: { command: "some-acp-agent", args: ["--acp"] } },
      { source: "project", file: "/p/.chrys/agents/Ext.yaml" },
    );
    const t = await profileTrust(p, {
      cwd: home,
      chrysHome: home,
      homeDir: home,
      settings: { projectSkillsEnabled: true },
    });
    expect(t).toEqual({
      name: "Ext",
      source: "project",
      file: "/p/.chrys/agents/Ext.yaml",
      digest: "0".repeat(64),
      programs: [{ via: "acp", command: "some-acp-agent", args: ["--acp"], label: null }],
      requiresTrust: true,
    });
  });

  it("lists enabled stdio MCP servers and project-provided skill scripts, not disabled or http servers", async () => {
    const cwd = await tree({
      ".agents/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n",
      ".agents/skills/s/go.sh": "echo",
    });
    const p = agent(
      {
        name: "Native",
        tools: {
          mcp: [
            { name: "gh", transport: "stdio", command: "gh-mcp", args: ["serve"] },
            { name: "off", transport: "stdio", command: "x", enabled: false },
            { name: "web", transport: "http", url: "https://example.invalid/mcp" },
          ],
        },
      },
      { source: "project" },
    );
    const t = await profileTrust(p, {
      cwd,
      chrysHome: join(cwd, "no-home"),
      homeDir: join(cwd, "no-home"),
      settings: { projectSkillsEnabled: true },
    });
    expect(t.programs).toEqual([
      { via: "mcp", command: "gh-mcp", args: ["serve"], label: "gh" },
      { via: "skill_script", command: join(cwd, ".agents/skills/s/go.sh"), args: [], label: "s" },
    ]);
    expect(t.requiresTrust).toBe(true);
  });

  it("needs no trust for a project profile that starts nothing, nor for user profiles", async () => {
    const home = await tree({});
    const opts = { cwd: home, chrysHome: home, homeDir: home, settings: { projectSkillsEnabled: false } };
    expect((await profileTrust(agent({ name: "Plain" }, { source: "project" }), opts)).requiresTrust).toBe(
      false,
    );
    const user = await profileTrust(agent({ name: "U", acp: { command: "x" } }, { source: "user" }), opts);
    expect([user.programs.length, user.requiresTrust]).toEqual([1, false]);
  });
});
