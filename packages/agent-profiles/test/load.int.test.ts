import { lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { LoadAgentConfigOptions } from "../src/config";
import { sha256 } from "../src/files";
import { loadAgentConfig } from "../src/load";
import { matchProfile } from "../src/match";
import { tempTree, writeTree } from "./fixtures";

const cleanup: string[] = [];
afterAll(async () => {
  for (const dir of cleanup) {
    await execa("chattr", ["-R", "-i", dir], { reject: false });
    await rm(dir, { recursive: true, force: true });
  }
});

async function setup(files: { home?: Record<string, string>; cwd?: Record<string, string> } = {}) {
  const home = await tempTree(files.home ?? {}, "ap-home-");
  const cwd = await tempTree(files.cwd ?? {}, "ap-cwd-");
  cleanup.push(home, cwd);
  const load = (extra: Partial<LoadAgentConfigOptions> = {}) =>
    loadAgentConfig({ chrysHome: home, cwd, env: {}, homeDir: home, ...extra });
  return { home, cwd, load, agents: join(home, "agents") };
}

const brief = (
  problems: { code: string; file: string | null; line: number | null; field: string | null }[],
) => problems.map((p) => ({ code: p.code, file: p.file, line: p.line, field: p.field }));

describe("sources and hiding (section 1)", () => {
  it("has the four built-ins with no files", async () => {
    const { load } = await setup();
    const c = await load();
    expect(c.problems).toEqual([]);
    expect(c.profiles.map((p) => [p.name, p.id, p.source, p.file, p.kind])).toEqual([
      ["Code", "b011c0de0001", "builtin", null, "native"],
      ["Explore", "b011e80e0002", "builtin", null, "native"],
      ["General", "b0119e4e0004", "builtin", null, "native"],
      ["QA", "b0119a000005", "builtin", null, "native"],
    ]);
    expect(c.defaultProfile?.name).toBe("Code");
  });

  it("project hides user hides built-in, replacing the whole profile; deleting brings the lower one back", async () => {
    const { load, cwd, home } = await setup({
      home: { "agents/Code.yaml": "name: Code\nid: user00000001\ndescription: mine\n" },
      cwd: { ".chrys/agents/Code.yaml": "name: Code\ndescription: project\n" },
    });
    let c = await load();
    const code = c.profiles.find((p) => p.name === "Code")!;
    expect([code.source, code.description, code.tools.builtins, code.id]).toEqual([
      "project",
      "project",
      [],
      "b011c0de0001",
    ]);
    expect(c.hidden.map((p) => [p.name, p.source])).toEqual([
      ["Code", "user"],
      ["Code", "builtin"],
    ]);
    await rm(join(cwd, ".chrys/agents/Code.yaml"));
    c = await load();
    expect(c.profiles.find((p) => p.name === "Code")).toMatchObject({
      source: "user",
      description: "mine",
      id: "user00000001",
      file: join(home, "agents/Code.yaml"),
    });
    await rm(join(home, "agents/Code.yaml"));
    c = await load();
    expect(c.profiles.find((p) => p.name === "Code")?.source).toBe("builtin");
  });

  it("compares names exactly for hiding: code does not hide Code, and both load with a warning", async () => {
    const { load, cwd } = await setup({ cwd: { ".chrys/agents/x.yaml": "name: code\n" } });
    const c = await load();
    expect(c.profiles.filter((p) => p.name.toLowerCase() === "code").map((p) => [p.name, p.source])).toEqual([
      ["Code", "builtin"],
      ["code", "project"],
    ]);
    expect(brief(c.problems)).toEqual([
      {
        code: "profile_name_case_conflict",
        file: join(cwd, ".chrys/agents/x.yaml"),
        line: 1,
        field: "name",
      },
    ]);
    expect(matchProfile(c, "CODE")).toMatchObject({ ok: false, code: "agent_profile_ambiguous" });
  });

  it("reads only .yaml/.yml files directly inside, .yaml first, skipping dot files and folders", async () => {
    const { load, cwd } = await setup({
      cwd: {
        ".chrys/agents/b.yaml": "name: Same\ndescription: from b.yaml\n",
        ".chrys/agents/a.yml": "name: Same\ndescription: from a.yml\n",
        ".chrys/agents/.hidden.yaml": "name: Hidden\n",
        ".chrys/agents/notes.txt": "name: Txt\n",
        ".chrys/agents/sub/deep.yaml": "name: Deep\n",
        ".chrys/agents/c.YAML": "name: Upper\n",
      },
    });
    const c = await load();
    expect(c.profiles.map((p) => p.name)).toEqual(["Code", "Explore", "General", "QA", "Same"]);
    expect(c.profiles.find((p) => p.name === "Same")?.description).toBe("from b.yaml");
    expect(brief(c.problems)).toEqual([
      { code: "profile_duplicate_name", file: join(cwd, ".chrys/agents/a.yml"), line: null, field: null },
    ]);
  });

  it("skips unreadable, non-UTF-8, non-YAML and non-mapping files with file and line; the others still load (a folder named *.yaml is not a file)", async () => {
    const { load, cwd } = await setup({
      cwd: {
        ".chrys/agents/good.yaml": "name: Good\n",
        ".chrys/agents/bad-yaml.yaml": "name: Bad\ntools: [\n",
        ".chrys/agents/list.yaml": "- name: x\n",
        ".chrys/agents/folder.yaml/inner": "x",
      },
    });
    const dir = join(cwd, ".chrys/agents");
    await writeFile(join(dir, "latin1.yaml"), Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x20, 0xe9, 0x0a]));
    await symlink(join(dir, "nowhere"), join(dir, "dangling.yaml"));
    const c = await load();
    expect(c.profiles.map((p) => p.name)).toContain("Good");
    expect(brief(c.problems).sort((a, b) => (a.file! < b.file! ? -1 : 1))).toEqual([
      { code: "config_not_yaml", file: join(dir, "bad-yaml.yaml"), line: 3, field: null },
      { code: "config_unreadable", file: join(dir, "dangling.yaml"), line: null, field: null },
      { code: "config_unreadable", file: join(dir, "latin1.yaml"), line: null, field: null },
      { code: "config_not_mapping", file: join(dir, "list.yaml"), line: null, field: null },
    ]);
    expect(c.problems.every((p) => p.severity === "error")).toBe(true);
  });

  it("says which lower profile stays in effect when a file with a readable name is skipped", async () => {
    const { load, agents } = await setup({
      home: { "agents/Code.yaml": "name: Code\nid: aaaaaaaaaaaa\nsub_agent_only: maybe\n" },
    });
    const c = await load();
    expect(c.profiles.find((p) => p.name === "Code")?.source).toBe("builtin");
    expect(c.problems).toHaveLength(1);
    expect(c.problems[0]).toMatchObject({
      code: "config_field_invalid",
      severity: "error",
      file: join(agents, "Code.yaml"),
      line: 3,
      field: "sub_agent_only",
    });
    expect(c.problems[0]?.message).toMatch(
      /the profile is not loaded\. The built-in profile "Code" stays in effect\.$/u,
    );
  });

  it("reports a profile folder that cannot be listed", async () => {
    const { load, home } = await setup({ home: { agents: "not a folder" } });
    const c = await load();
    expect(brief(c.problems)).toEqual([
      { code: "config_unreadable", file: join(home, "agents"), line: null, field: null },
    ]);
  });
});

describe("ids (1.3)", () => {
  it("gives project profiles the built-in id for a built-in name, else a SHA-256 of project:<name>", async () => {
    const { load } = await setup({
      cwd: {
        ".chrys/agents/a.yaml": "name: Reviewer\n",
        ".chrys/agents/b.yaml": "name: QA\n",
        ".chrys/agents/c.yaml": "name: Own\nid: ' own-id '\n",
      },
    });
    const c = await load();
    const id = (n: string) => c.profiles.find((p) => p.name === n)?.id;
    expect(id("Reviewer")).toBe(sha256("project:Reviewer").slice(0, 12));
    expect(id("QA")).toBe("b0119a000005");
    expect(id("Own")).toBe("own-id");
  });

  it("warns about duplicate ids, and matching by that id is ambiguous", async () => {
    const { load, cwd } = await setup({ cwd: { ".chrys/agents/a.yaml": "name: Copy\nid: b011c0de0001\n" } });
    const c = await load();
    expect(brief(c.problems)).toEqual([
      { code: "profile_duplicate_id", file: join(cwd, ".chrys/agents/a.yaml"), line: 2, field: "id" },
    ]);
    expect(matchProfile(c, "b011c0de0001")).toMatchObject({ ok: false, code: "agent_profile_ambiguous" });
  });

  it("never writes project files", async () => {
    const text = "# keep me\nname: Reviewer\n";
    const { load, cwd } = await setup({ cwd: { ".chrys/agents/rev.yml": text } });
    await load();
    expect(await readdir(join(cwd, ".chrys/agents"))).toEqual(["rev.yml"]);
    expect(await readFile(join(cwd, ".chrys/agents/rev.yml"), "utf8")).toBe(text);
  });
});

describe("normalization of user files (1.4)", () => {
  it("renames to <name>.yaml and writes an assigned id back with a full canonical rewrite", async () => {
    const text = [
      "# Reviewer profile",
      "display_name: Code review",
      "name: Reviewer",
      'description: ""',
      "instructions:",
      "  - Read.",
      "  - Report.",
      "colour: red",
      "sub_agent_only: false",
      "model:",
      "  profile_id: 3f9c2a71b0de",
      "tools:",
      "  builtins: [filesystem.read, search, shell, telepathy]",
      "  shell_filter: read_only",
      "  custom: {x: 1}",
      "memory:",
      "  files: [AGENTS.md]",
      "approval:",
      "  default: auto",
      "  overrides:",
      "    shell: require",
      "compaction: {last_words_max_output_tokens: 20000}",
      "metadata:",
      "  owner: me",
      "",
    ].join("\n");
    const { load, agents } = await setup({ home: { "agents/rev.yml": text } });
    const c = await load();
    expect(await readdir(agents)).toEqual(["Reviewer.yaml"]);
    const profile = c.profiles.find((p) => p.name === "Reviewer")!;
    expect(profile.id).toMatch(/^[0-9a-f]{12}$/u);
    expect(profile.file).toBe(join(agents, "Reviewer.yaml"));
    const written = await readFile(join(agents, "Reviewer.yaml"), "utf8");
    expect(profile.digest).toBe(sha256(written));
    const idLine = /^[0-9]+$|^[0-9]*e[0-9]+$/u.test(profile.id!)
      ? `id: "${profile.id}"`
      : `id: ${profile.id}`;
    expect(written).toBe(
      [
        "name: Reviewer",
        idLine,
        "display_name: Code review",
        "instructions:",
        "  - Read.",
        "  - Report.",
        "model:",
        "  profile_id: 3f9c2a71b0de",
        "tools:",
        "  builtins:",
        "    - filesystem.read",
        "    - search",
        "    - shell",
        "    - telepathy",
        "  shell_filter: read_only",
        "  custom:",
        "    x: 1",
        "approval:",
        "  default: auto",
        "  overrides:",
        "    shell: require",
        "memory:",
        "  files:",
        "    - AGENTS.md",
        "metadata:",
        "  owner: me",
        "",
      ].join("\n"),
    );
    expect(c.changes).toEqual([
      { kind: "renamed", from: join(agents, "rev.yml"), to: join(agents, "Reviewer.yaml") },
      { kind: "id_written", file: join(agents, "Reviewer.yaml"), id: profile.id },
    ]);
    // The second load finds it canonical: nothing changes, same id, warnings only for what is still in the file.
    const again = await load();
    expect(again.changes).toEqual([]);
    expect(again.profiles.find((p) => p.name === "Reviewer")?.id).toBe(profile.id);
    expect(await readFile(join(agents, "Reviewer.yaml"), "utf8")).toBe(written);
  });

  it("writes approval out in full even when the file had none", async () => {
    const { load, agents } = await setup({ home: { "agents/Plain.yaml": "name: Plain\n" } });
    await load();
    const doc = parse(await readFile(join(agents, "Plain.yaml"), "utf8"));
    expect(Object.keys(doc)).toEqual(["name", "id", "approval"]);
    expect(doc.approval).toEqual({
      default: "auto",
      overrides: { shell: "require", "filesystem.write": "require", todo: "skip" },
    });
  });

  it("gives a user profile named like a built-in the built-in's id", async () => {
    const { load, agents } = await setup({ home: { "agents/Code.yaml": "name: Code\nacp: {command: x}\n" } });
    const c = await load();
    expect(c.profiles.find((p) => p.name === "Code")).toMatchObject({ id: "b011c0de0001", kind: "acp" });
    expect(parse(await readFile(join(agents, "Code.yaml"), "utf8"))).toEqual({
      name: "Code",
      id: "b011c0de0001",
      acp: { command: "x" },
    });
  });

  it("renames a file that has an id without rewriting it", async () => {
    const text = "# comment stays\nid: abcabcabcabc\nname: Keep\n";
    const { load, agents } = await setup({ home: { "agents/old.yml": text } });
    const c = await load();
    expect(await readFile(join(agents, "Keep.yaml"), "utf8")).toBe(text);
    expect(c.changes).toEqual([
      { kind: "renamed", from: join(agents, "old.yml"), to: join(agents, "Keep.yaml") },
    ]);
  });

  it("leaves a canonical file with an id untouched", async () => {
    const { load, agents } = await setup({
      home: { "agents/Keep.yaml": "# c\nname: Keep\nid: abcabcabcabc\n" },
    });
    const before = await stat(join(agents, "Keep.yaml"));
    const c = await load();
    expect(c.changes).toEqual([]);
    expect((await stat(join(agents, "Keep.yaml"))).mtimeMs).toBe(before.mtimeMs);
  });

  it("moves two files that want each other's names", async () => {
    const { load, agents } = await setup({
      home: {
        "agents/A.yaml": "name: B\nid: bbbbbbbbbbbb\n",
        "agents/B.yaml": "name: A\nid: aaaaaaaaaaaa\n",
      },
    });
    const c = await load();
    expect((await readdir(agents)).sort()).toEqual(["A.yaml", "B.yaml"]);
    expect(parse(await readFile(join(agents, "A.yaml"), "utf8"))).toEqual({ name: "A", id: "aaaaaaaaaaaa" });
    expect(parse(await readFile(join(agents, "B.yaml"), "utf8"))).toEqual({ name: "B", id: "bbbbbbbbbbbb" });
    expect(c.problems).toEqual([]);
    expect(c.profiles.find((p) => p.name === "A")?.file).toBe(join(agents, "A.yaml"));
  });

  it("renames a file whose name is held to <file>.conflict, then .conflict-2, and does not load it", async () => {
    const { load, agents } = await setup({
      home: {
        "agents/Reviewer.yaml": "name: Reviewer\nid: aaaaaaaaaaaa\ndescription: original\n",
        "agents/copy.yaml": "name: Reviewer\nid: bbbbbbbbbbbb\ndescription: copy\n",
        "agents/copy2.yml": "name: Reviewer\ndescription: copy two\n",
        "agents/copy2.yml.conflict": "taken",
      },
    });
    const c = await load();
    expect((await readdir(agents)).sort()).toEqual([
      "Reviewer.yaml",
      "copy.yaml.conflict",
      "copy2.yml.conflict",
      "copy2.yml.conflict-2",
    ]);
    expect(c.profiles.find((p) => p.name === "Reviewer")?.description).toBe("original");
    expect(brief(c.problems)).toEqual([
      { code: "profile_name_conflict", file: join(agents, "copy.yaml.conflict"), line: null, field: null },
      { code: "profile_name_conflict", file: join(agents, "copy2.yml.conflict-2"), line: null, field: null },
    ]);
    expect(c.problems[0]?.message).toContain(
      "To keep both, give one a new name, delete its id and restore the .yaml extension.",
    );
    expect(await readFile(join(agents, "copy.yaml.conflict"), "utf8")).toBe(
      "name: Reviewer\nid: bbbbbbbbbbbb\ndescription: copy\n",
    );
  });

  it("lets the first of two files wanting the same free name take it", async () => {
    const { load, agents } = await setup({
      home: { "agents/a.yml": "name: X\nid: aaaaaaaaaaaa\n", "agents/b.yml": "name: X\nid: bbbbbbbbbbbb\n" },
    });
    const c = await load();
    expect((await readdir(agents)).sort()).toEqual(["X.yaml", "b.yml.conflict"]);
    expect(c.profiles.find((p) => p.name === "X")?.id).toBe("aaaaaaaaaaaa");
  });

  it("counts a broken file as holding its name", async () => {
    const { load, agents } = await setup({
      home: { "agents/X.yaml": "name: X\nid: 5\n", "agents/other.yaml": "name: X\nid: aaaaaaaaaaaa\n" },
    });
    const c = await load();
    expect((await readdir(agents)).sort()).toEqual(["X.yaml", "other.yaml.conflict"]);
    expect(c.profiles.some((p) => p.name === "X")).toBe(false);
  });

  it("loads both Code and code on a case-sensitive file system, with a warning", async () => {
    const { load, agents } = await setup({ home: { "agents/a.yaml": "name: code\nid: aaaaaaaaaaaa\n" } });
    const c = await load();
    expect(await readdir(agents)).toEqual(["code.yaml"]);
    expect(c.problems.map((p) => p.code)).toEqual(["profile_name_case_conflict"]);
  });

  it("quotes an assigned id that YAML would read as a number", async () => {
    const { canonicalProfileYaml } = await import("../src/canonical");
    expect(canonicalProfileYaml({ name: "N" }, [], "123456789012")).toContain('id: "123456789012"');
    expect(canonicalProfileYaml({ name: "N" }, [], "1234e5678901")).toContain('id: "1234e5678901"');
    expect(canonicalProfileYaml({ name: "N" }, [], "0x1f")).toContain('id: "0x1f"');
    expect(canonicalProfileYaml({ name: "N" }, [], "yes")).toContain('id: "yes"');
    expect(canonicalProfileYaml({ name: "N" }, [], "abc123def456")).toContain("id: abc123def456\n");
  });

  it("changes nothing on disk with normalize: false; id-less user profiles then carry no id", async () => {
    const files = {
      "agents/rev.yml": "name: Reviewer\n",
      "agents/Keep.yaml": "name: Keep\n",
      "agents/dup.yaml": "name: Keep\nid: aaaaaaaaaaaa\n",
    };
    const { load, agents } = await setup({ home: files });
    const c = await load({ normalize: false });
    expect((await readdir(agents)).sort()).toEqual(["Keep.yaml", "dup.yaml", "rev.yml"]);
    expect(await readFile(join(agents, "rev.yml"), "utf8")).toBe("name: Reviewer\n");
    expect(c.changes).toEqual([]);
    expect(c.profiles.find((p) => p.name === "Reviewer")).toMatchObject({
      id: null,
      file: join(agents, "rev.yml"),
    });
    expect(c.profiles.find((p) => p.name === "Keep")?.id).toBeNull();
    expect(brief(c.problems)).toEqual([
      { code: "profile_name_conflict", file: join(agents, "dup.yaml"), line: null, field: null },
    ]);
  });

  it("warns and loads the profile without an id when the id cannot be written", async () => {
    const { load, agents } = await setup({ home: { "agents/Locked.yaml": "name: Locked\n" } });
    const locked = await execa("chattr", ["+i", agents], { reject: false });
    if (locked.exitCode !== 0) {
      // Without chattr the case cannot be produced as root; say so rather than pass silently.
      expect.fail(`chattr +i is needed for this test: ${locked.stderr}`);
    }
    try {
      const c = await load();
      expect(c.profiles.find((p) => p.name === "Locked")).toMatchObject({ id: null, source: "user" });
      expect(brief(c.problems)).toEqual([
        { code: "profile_id_write_failed", file: join(agents, "Locked.yaml"), line: null, field: null },
      ]);
      expect(matchProfile(c, "Locked")).toMatchObject({ ok: true });
    } finally {
      await execa("chattr", ["-i", agents]);
    }
    expect(await readFile(join(agents, "Locked.yaml"), "utf8")).toBe("name: Locked\n");
  });

  it("warns and loads from where it is when a file cannot be renamed", async () => {
    const { load, agents } = await setup({ home: { "agents/old.yml": "name: Stuck\nid: aaaaaaaaaaaa\n" } });
    await execa("chattr", ["+i", agents]);
    try {
      const c = await load();
      expect(c.profiles.find((p) => p.name === "Stuck")?.file).toBe(join(agents, "old.yml"));
      expect(brief(c.problems)).toEqual([
        { code: "profile_rename_failed", file: join(agents, "old.yml"), line: null, field: null },
      ]);
    } finally {
      await execa("chattr", ["-i", agents]);
    }
  });

  it("leaves no temporary files behind", async () => {
    const { load, agents } = await setup({
      home: { "agents/a.yml": "name: One\n", "agents/b.yml": "name: Two\n" },
    });
    await load();
    expect((await readdir(agents)).sort()).toEqual(["One.yaml", "Two.yaml"]);
    expect((await lstat(join(agents, "One.yaml"))).isFile()).toBe(true);
  });
});

describe("models, settings and cross-checks", () => {
  it("loads model files .yaml first, ignores dot files, takes the id from the file name, and sorts by name", async () => {
    const { load, home } = await setup({
      home: {
        "models/zz.yml": "name: alpha\nmodel_id: a\n",
        "models/b.yaml": "name: Beta\nmodel_id: b\n",
        "models/a.yaml": "name: Alpha\nmodel_id: a\n",
        "models/.draft.yaml": "name: Draft\n",
        "models/broken.yaml": "model_id: x\n",
      },
    });
    const c = await load();
    expect(c.models.map((m) => [m.id, m.name, m.usable])).toEqual([
      ["a", "Alpha", true],
      ["zz", "alpha", true],
      ["b", "Beta", true],
    ]);
    expect(brief(c.problems)).toEqual([
      { code: "config_field_invalid", file: join(home, "models/broken.yaml"), line: null, field: "name" },
      { code: "model_duplicate_name", file: join(home, "models/zz.yml"), line: 1, field: "name" },
    ]);
  });

  it("resolves model.profile.active and reports one that does not resolve", async () => {
    const { load, home } = await setup({
      home: {
        "models/m1.yaml": "name: Local\nmodel_id: q\n",
        "settings.yaml": "model:\n  profile:\n    active: local\n",
      },
    });
    expect((await load()).activeModel?.id).toBe("m1");
    const c = await load({ env: { CHRYS_MODEL_PROFILE: "gone" } });
    expect(c.activeModel).toBeNull();
    expect(brief(c.problems)).toEqual([
      { code: "settings_active_model_unresolved", file: null, line: null, field: "model.profile.active" },
    ]);
    expect(c.problems[0]?.message).toContain("CHRYS_MODEL_PROFILE");
    await writeTree(home, { "settings.yaml": "model: {profile: {active: Nope}}\n" });
    expect((await load()).problems[0]).toMatchObject({
      code: "settings_active_model_unresolved",
      file: join(home, "settings.yaml"),
      line: 1,
    });
  });

  it("reads project settings only when the user settings enable them, and only llm.retry.max_transient", async () => {
    const { load } = await setup({
      home: { "settings.yaml": "llm: {retry: {max_transient: 5}}\n" },
      cwd: { ".chrys/settings.yaml": "llm: {retry: {max_transient: 2}}\nagent: {default_profile: QA}\n" },
    });
    let c = await load();
    expect([c.settings.maxTransient.value, c.locations.projectSettings, c.problems]).toEqual([5, null, []]);
    const { load: load2, cwd: cwd2 } = await setup({
      home: { "settings.yaml": "project: {config_enabled: true}\nllm: {retry: {max_transient: 5}}\n" },
      cwd: { ".chrys/settings.yaml": "llm: {retry: {max_transient: 2}}\nagent: {default_profile: QA}\n" },
    });
    c = await load2();
    expect(c.settings.maxTransient).toEqual({
      value: 2,
      source: "project",
      origin: join(cwd2, ".chrys/settings.yaml"),
    });
    expect(c.defaultProfile?.name).toBe("Code");
    expect(brief(c.problems)).toEqual([
      { code: "settings_not_allowed", file: join(cwd2, ".chrys/settings.yaml"), line: 2, field: "agent" },
    ]);
  });

  it("resolves the default agent among main agents, falling back to Code, then the first", async () => {
    const { load, home } = await setup({
      home: { "settings.yaml": "agent: {default_profile: q&a agent}\n" },
    });
    expect((await load()).defaultProfile?.name).toBe("QA");
    const c = await load({ env: { CHRYS_DEFAULT_AGENT: "Explore" } });
    expect(c.defaultProfile?.name).toBe("Code");
    expect(c.problems.map((p) => p.code)).toEqual(["settings_default_agent_unresolved"]);
    expect(c.problems[0]?.message).toContain('"Explore" is sub-agent-only');
    await writeTree(home, {
      "agents/Code.yaml": "name: Code\nid: b011c0de0001\nsub_agent_only: true\n",
      "settings.yaml": "",
    });
    expect((await load()).defaultProfile?.name).toBe("QA");
  });

  it("warns about a binding to a missing model and about web tools that do not fit their mode", async () => {
    const { load, cwd } = await setup({
      cwd: {
        ".chrys/agents/a.yaml": "name: A\nmodel: {profile_id: nope}\n",
        ".chrys/agents/b.yaml":
          "name: B\ntools: {builtins: [web_search, web_fetch], web_search: {mode: provider}}\n",
        ".chrys/agents/c.yaml": "name: C\ntools: {web_fetch: {mode: on}}\n",
      },
    });
    const c = await load();
    const dir = join(cwd, ".chrys/agents");
    expect(brief(c.problems)).toEqual([
      { code: "profile_model_missing", file: join(dir, "a.yaml"), line: 2, field: "model.profile_id" },
      { code: "profile_web_tool_omitted", file: join(dir, "b.yaml"), line: 2, field: "tools.web_search" },
      { code: "config_key_ignored", file: join(dir, "c.yaml"), line: 2, field: "tools.web_fetch" },
    ]);
    expect(c.profiles.find((p) => p.name === "B")?.tools.builtins).toEqual(["web_fetch"]);
  });

  it("reads nothing from a working directory that does not exist", async () => {
    const { home } = await setup();
    const c = await loadAgentConfig({ chrysHome: home, cwd: join(home, "gone"), env: {}, homeDir: home });
    expect(c.profiles).toHaveLength(4);
    expect(c.problems).toEqual([]);
  });

  it("loads a profile folder holding a file per built-in without touching the others", async () => {
    const { load, agents } = await setup();
    await mkdir(agents);
    await writeFile(join(agents, "QA.yaml"), "name: QA\nid: b0119a000005\n");
    const c = await load();
    expect(c.profiles.find((p) => p.name === "QA")).toMatchObject({
      source: "user",
      tools: { builtins: [] },
    });
  });
});

describe("options", () => {
  it.each(["chrysHome", "cwd", "homeDir"] as const)("refuses a relative %s", async (key) => {
    const options = { chrysHome: "/c", cwd: "/w", env: {}, homeDir: "/h", [key]: "relative/dir" };
    await expect(loadAgentConfig(options)).rejects.toMatchObject({ code: "config_options_invalid" });
  });
});

describe("lines of problems found while loading", () => {
  it("uses the renamed file's lines", async () => {
    const { load, agents } = await setup({
      home: { "agents/lower.yml": "# c\nname: code\nid: aaaaaaaaaaaa\n" },
    });
    const c = await load();
    expect(brief(c.problems)).toEqual([
      { code: "profile_name_case_conflict", file: join(agents, "code.yaml"), line: 2, field: "name" },
    ]);
  });
});
