/**
 * `icode agents [list] [--json]` and `icode models [list] [--json]` through the built CLI
 * (agent-profiles.md 5): a user directory with good and broken profile files, project profiles, ACP
 * profiles (a user one and a preset found on PATH), the default and active markers, warnings on stderr with
 * file:line:field, `--json` validated against the published JSON Schemas, empty lists, usage errors and a
 * deleted working directory.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI_BIN, REPO_ROOT } from "@icode/test-utils";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { icode, type Project, parseErrorJson, project } from "./run-helpers";

const SCHEMAS = join(REPO_ROOT, "apps", "cli", "schemas");
/** A validator made from the published JSON Schema file itself, not from the zod schema it came from. */
const published = (name: string) =>
  z.fromJSONSchema(JSON.parse(readFileSync(join(SCHEMAS, `${name}.schema.json`), "utf8")));

/** Parses `--json` stdout: exactly one line, one object, valid against the published schema. */
function parseListing(stdout: string, schema: string): Record<string, unknown> {
  expect(stdout.endsWith("\n")).toBe(true);
  expect(stdout.slice(0, -1)).not.toContain("\n");
  const value: unknown = JSON.parse(stdout);
  const checked = published(schema).safeParse(value);
  if (!checked.success) throw new Error(`${schema}: ${checked.error.message}\n${stdout}`);
  return value as Record<string, unknown>;
}

const SECRET = "sk-literal-secret-0001";

const TREE = {
  // User agent profiles: good ones (one to be renamed and given an id), an ACP one, a broken one and a file
  // that is not YAML.
  ".home/agents/helper.yml": [
    "name: Helper",
    "display_name: Helpful helper",
    "description: Helps with anything",
    "model:",
    "  profile_id: 3f9c2a71b0de",
    "",
  ].join("\n"),
  ".home/agents/Lost.yaml": [
    "name: Lost",
    "id: 0000000000aa",
    "model:",
    "  profile_id: nosuchmodel1",
    "",
  ].join("\n"),
  ".home/agents/ExternalReviewer.yaml": [
    "name: ExternalReviewer",
    "id: 0000000000bb",
    "display_name: External reviewer",
    "acp:",
    "  command: some-acp-agent",
    "  model_id: fast",
    "",
  ].join("\n"),
  ".home/agents/Broken.yaml": ["name: Broken", "acp:", "  command: foo", "  args: 3", ""].join("\n"),
  ".home/agents/garbage.yaml": "name: [unclosed\n",
  // A user profile hiding a built-in, and a project one hiding a user one.
  ".home/agents/QA.yaml": ["name: QA", "description: My own QA", ""].join("\n"),
  ".home/agents/Reviewer.yaml": ["name: Reviewer", "id: 0000000000cc", "description: user copy", ""].join(
    "\n",
  ),
  ".chrys/agents/reviewer.yaml": [
    "name: Reviewer",
    "display_name: Code review",
    "description: Review changes",
    "sub_agent_only: true",
    "",
  ].join("\n"),
  // Model profiles: usable ones, an unusable one (no model_id), two whose names differ only in case, and one
  // with a wrongly typed number (skipped).
  ".home/models/3f9c2a71b0de.yaml": [
    "id: 3f9c2a71b0de",
    "name: Local Qwen",
    "provider: openai",
    "model_id: qwen3-coder",
    "base_url: http://127.0.0.1:8000/v1",
    `api_key: "${SECRET}"`,
    "max_context_tokens: 131072",
    "max_output_tokens: 16384",
    "",
  ].join("\n"),
  ".home/models/big.yaml": [
    "name: Big",
    "provider: anthropic",
    "model_id: claude-big",
    "max_context_tokens: 1000000",
    "vision: true",
    "stream: false",
    "",
  ].join("\n"),
  ".home/models/resp.yaml": [
    "name: Responder",
    "provider: openai",
    "api_style: responses",
    "model_id: gpt-r",
    "api_key_env: RESP_KEY",
    "",
  ].join("\n"),
  ".home/models/half.yaml": ["name: Half done", "provider: openai", ""].join("\n"),
  ".home/models/bbbbbbbbbbbb.yaml": ["name: Twin", "model_id: t1", ""].join("\n"),
  ".home/models/aaaaaaaaaaaa.yaml": ["name: twin", "model_id: t2", ""].join("\n"),
  ".home/models/typo.yaml": ["name: Typo", "max_context_tokens: lots", ""].join("\n"),
  ".home/settings.yaml": [
    "agent:",
    "  default_profile: Helper",
    "model:",
    "  profile:",
    "    active: local qwen",
    "",
  ].join("\n"),
};

/** A folder for PATH holding only a `codex-acp` program, so the Codex preset is found and no other one. */
function pathWithCodex(p: Project): string {
  const bin = join(p.dir, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "codex-acp"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(bin, "codex-acp"), 0o755);
  return bin;
}

describe("icode agents", () => {
  let p: Project;
  let env: Record<string, string>;
  let text: Awaited<ReturnType<typeof icode>>;
  let json: Awaited<ReturnType<typeof icode>>;

  beforeAll(async () => {
    p = project(TREE);
    env = { PATH: pathWithCodex(p) };
    text = await icode(p, ["agents"], env);
    json = await icode(p, ["agents", "list", "--json"], env);
  });

  it("prints the table: columns in order, sorted by name ignoring case, '-' for empty cells, the default marked", () => {
    expect(text.exitCode, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]!.split(/ {2,}/)).toEqual([
      "Default",
      "Name",
      "Display Name",
      "ID",
      "Model",
      "Source",
      "Description",
    ]);
    const rows = lines.slice(1).map((l) => l.split(/ {2,}/));
    expect(rows.map((r) => r[1])).toEqual([
      "Code",
      "Codex",
      "Explore",
      "ExternalReviewer",
      "General",
      "Helper",
      "Lost",
      "QA",
      "Reviewer",
    ]);
    const row = (name: string) => rows.find((r) => r[1] === name)!;
    expect(row("Helper")).toEqual([
      "*",
      "Helper",
      "Helpful helper",
      expect.stringMatching(/^[0-9a-f]{12}$/),
      "Local Qwen",
      "user",
      "Helps with anything",
    ]);
    expect(row("Code")).toEqual(
      expect.arrayContaining(["-", "Code", "Code Agent", "b011c0de0001", "active"]),
    );
    expect(row("Lost")).toEqual(["-", "Lost", "-", "0000000000aa", "missing:nosuchmodel1", "user", "-"]);
    expect(row("ExternalReviewer")).toEqual([
      "-",
      "ExternalReviewer",
      "External reviewer",
      "0000000000bb",
      "acp:fast",
      "user",
      "-",
    ]);
    expect(row("Codex").slice(0, 6)).toEqual(["-", "Codex", "Codex (ACP)", "b011ac900002", "acp", "builtin"]);
    expect(row("QA")).toEqual(["-", "QA", "-", "b0119a000005", "active", "user", "My own QA"]);
    // The project profile hides the user one of the same name.
    expect(row("Reviewer")).toEqual([
      "-",
      "Reviewer",
      "Code review",
      expect.stringMatching(/^[0-9a-f]{12}$/),
      "active",
      "project",
      "Review changes",
    ]);
    expect(rows.filter((r) => r[0] === "*")).toHaveLength(1);
  });

  it("puts each load problem on stderr as Warning: <file>:<line>: <field>: <message>, and still exits 0", () => {
    const warnings = text.stderr.trimEnd().split("\n");
    const broken = join(p.home, "agents", "Broken.yaml");
    expect(warnings).toContainEqual(expect.stringMatching(new RegExp(`^Warning: ${broken}:4: acp\\.args: `)));
    expect(warnings).toContainEqual(
      expect.stringMatching(
        new RegExp(`^Warning: ${join(p.home, "agents", "garbage.yaml")}:\\d+: not valid YAML`),
      ),
    );
    expect(warnings).toContainEqual(
      expect.stringMatching(
        new RegExp(`^Warning: ${join(p.home, "agents", "Lost.yaml")}:4: model\\.profile_id: `),
      ),
    );
    for (const w of warnings) expect(w).toMatch(/^Warning: /);
    // Problems of model files belong to `icode models`.
    expect(text.stderr).not.toContain(join(p.home, "models"));
    // --json puts problems only in `problems`.
    expect(json.stderr).toBe("");
  });

  it("--json: one object and a newline, valid against schemas/agents-list.schema.json, problems only in problems", () => {
    expect(json.exitCode, json.stderr).toBe(0);
    const listing = parseListing(json.stdout, "agents-list") as {
      agents: Record<string, unknown>[];
      default: string;
      problems: { file: string | null; line: number | null; field: string | null; message: string }[];
    };
    expect(listing.default).toBe("Helper");
    expect(listing.agents.map((a) => a["name"])).toEqual([
      "Code",
      "Codex",
      "Explore",
      "ExternalReviewer",
      "General",
      "Helper",
      "Lost",
      "QA",
      "Reviewer",
    ]);
    const byName = (name: string) => listing.agents.find((a) => a["name"] === name)!;
    // The .yml file was put into canonical form: renamed to <name>.yaml, with its assigned id written back.
    const helperFile = join(p.home, "agents", "Helper.yaml");
    expect(byName("Helper")).toMatchObject({
      default: true,
      model: "Local Qwen",
      source: "user",
      file: helperFile,
      kind: "native",
      subAgentOnly: false,
      launchableAsMain: true,
    });
    expect(existsSync(join(p.home, "agents", "helper.yml"))).toBe(false);
    expect(readFileSync(helperFile, "utf8")).toContain(`id: ${byName("Helper")["id"]}`);
    expect(byName("Code")).toEqual({
      id: "b011c0de0001",
      name: "Code",
      displayName: "Code Agent",
      description: expect.any(String),
      default: false,
      model: "active",
      source: "builtin",
      file: null,
      kind: "native",
      subAgentOnly: false,
      launchableAsMain: true,
    });
    expect(byName("ExternalReviewer")).toMatchObject({
      kind: "acp",
      model: "acp:fast",
      subAgentOnly: true,
      launchableAsMain: false,
    });
    expect(byName("Codex")).toMatchObject({ kind: "acp", model: "acp", source: "builtin", file: null });
    expect(byName("Reviewer")).toMatchObject({
      source: "project",
      file: join(p.dir, ".chrys", "agents", "reviewer.yaml"),
      subAgentOnly: true,
      launchableAsMain: false,
    });
    expect(listing.problems).toContainEqual({
      file: join(p.home, "agents", "Broken.yaml"),
      line: 4,
      field: "acp.args",
      message: expect.any(String),
    });
    expect(listing.problems.every((x) => !x.file?.startsWith(join(p.home, "models")))).toBe(true);
  });

  it("without a preset on PATH, no preset is listed; a default agent that resolves to nothing falls back to Code", async () => {
    const q = project({ ".home/settings.yaml": "agent:\n  default_profile: Nobody\n" });
    const r = await icode(q, ["agents", "--json"], { PATH: join(q.dir, "nothing") });
    expect(r.exitCode, r.stderr).toBe(0);
    const listing = parseListing(r.stdout, "agents-list") as { agents: { name: string }[]; default: string };
    expect(listing.agents.map((a) => a.name)).toEqual(["Code", "Explore", "General", "QA"]);
    expect(listing.default).toBe("Code");
    expect(r.stderr).toBe("");
    const t = await icode(q, ["agents"], { PATH: join(q.dir, "nothing") });
    expect(t.stderr).toMatch(/^Warning: .*settings\.yaml:2: agent\.default_profile: /m);
  });
});

describe("settings: environment variables, and project settings only when the user enables them", () => {
  const tree = {
    ".home/agents/Helper.yaml": "name: Helper\nid: 00000000000a\n",
    ".home/models/m1.yaml": "name: One\nmodel_id: a\n",
    ".home/models/m2.yaml": "name: Two\nmodel_id: b\n",
    ".chrys/settings.yaml": "agent:\n  default_profile: Helper\nmodel:\n  profile:\n    active: m2\n",
  };
  const noPresets = (p: Project) => ({ PATH: join(p.dir, "nothing") });

  it("CHRYS_DEFAULT_AGENT and CHRYS_MODEL_PROFILE choose the markers", async () => {
    const p = project(tree);
    const env = { ...noPresets(p), CHRYS_DEFAULT_AGENT: "helper", CHRYS_MODEL_PROFILE: "Two" };
    const agents = parseListing((await icode(p, ["agents", "--json"], env)).stdout, "agents-list");
    expect(agents["default"]).toBe("Helper");
    const models = parseListing((await icode(p, ["models", "--json"], env)).stdout, "models-list");
    expect(models["active"]).toBe("m2");
  });

  it("without project.config_enabled the project's .chrys/settings.yaml is not read at all", async () => {
    const p = project(tree);
    const r = await icode(p, ["agents"], noPresets(p));
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^\* +Code /m);
  });

  it("with it, the project may not choose the default agent or model: reported and ignored", async () => {
    const p = project({ ...tree, ".home/settings.yaml": "project:\n  config_enabled: true\n" });
    const agents = await icode(p, ["agents"], noPresets(p));
    expect(agents.stdout).toMatch(/^\* +Code /m);
    const settings = join(p.dir, ".chrys", "settings.yaml");
    expect(agents.stderr).toMatch(
      new RegExp(
        `^Warning: ${settings}:1: agent: project settings may set only llm\\.retry\\.max_transient`,
        "m",
      ),
    );
    const models = parseListing((await icode(p, ["models", "--json"], noPresets(p))).stdout, "models-list");
    expect(models["active"]).toBe("");
    expect(models["problems"]).toContainEqual(
      expect.objectContaining({ file: settings, line: 3, field: "model" }),
    );
  });
});

describe("icode models", () => {
  let p: Project;
  let text: Awaited<ReturnType<typeof icode>>;
  let json: Awaited<ReturnType<typeof icode>>;

  beforeAll(async () => {
    p = project(TREE);
    text = await icode(p, ["models"]);
    json = await icode(p, ["models", "--json"]);
  });

  it("prints the table: columns in order, sorted by name ignoring case then id, Context and Flags, the active one marked", () => {
    expect(text.exitCode, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]!.split(/ {2,}/)).toEqual([
      "Active",
      "ID",
      "Name",
      "Provider",
      "API",
      "Model",
      "Context",
      "Flags",
    ]);
    const rows = lines.slice(1).map((l) => l.split(/ {2,}/));
    expect(rows).toEqual([
      ["-", "big", "Big", "anthropic", "chat", "claude-big", "1m", "vision"],
      ["-", "half", "Half done", "openai", "chat", "-", "200k", "stream"],
      ["*", "3f9c2a71b0de", "Local Qwen", "openai", "chat", "qwen3-coder", "131072", "stream"],
      ["-", "resp", "Responder", "openai", "responses", "gpt-r", "200k", "stream"],
      ["-", "aaaaaaaaaaaa", "twin", "openai", "chat", "t2", "200k", "stream"],
      ["-", "bbbbbbbbbbbb", "Twin", "openai", "chat", "t1", "200k", "stream"],
    ]);
  });

  it("never shows an API key, in text or JSON", () => {
    expect(text.stdout + text.stderr + json.stdout + json.stderr).not.toContain(SECRET);
  });

  it("warns about the skipped file and the twin names, file:line:field, and exits 0", () => {
    const typo = join(p.home, "models", "typo.yaml");
    expect(text.stderr).toMatch(new RegExp(`^Warning: ${typo}:2: max_context_tokens: `, "m"));
    expect(text.stderr).toMatch(/^Warning: .*(aaaaaaaaaaaa|bbbbbbbbbbbb)\.yaml(:\d+)?: (name: )?.*twin/im);
    expect(text.stderr).not.toContain(join(p.home, "agents"));
    for (const w of text.stderr.trimEnd().split("\n")) expect(w).toMatch(/^Warning: /);
  });

  it("--json: one object, valid against schemas/models-list.schema.json", () => {
    expect(json.exitCode, json.stderr).toBe(0);
    const listing = parseListing(json.stdout, "models-list") as {
      models: Record<string, unknown>[];
      active: string;
      problems: { file: string | null; line: number | null; field: string | null }[];
    };
    expect(listing.active).toBe("3f9c2a71b0de");
    expect(listing.models.find((m) => m["id"] === "3f9c2a71b0de")).toEqual({
      id: "3f9c2a71b0de",
      name: "Local Qwen",
      provider: "openai",
      apiStyle: "chat_completions",
      modelId: "qwen3-coder",
      baseUrl: "http://127.0.0.1:8000/v1",
      maxContextTokens: 131072,
      maxOutputTokens: 16384,
      stream: true,
      vision: false,
      usable: true,
      active: true,
      file: join(p.home, "models", "3f9c2a71b0de.yaml"),
    });
    expect(listing.models.find((m) => m["id"] === "half")).toMatchObject({ usable: false, active: false });
    expect(listing.models.find((m) => m["id"] === "big")).toMatchObject({
      baseUrl: "https://api.anthropic.com",
      stream: false,
      vision: true,
    });
    expect(listing.problems).toContainEqual({
      file: join(p.home, "models", "typo.yaml"),
      line: 2,
      field: "max_context_tokens",
      message: expect.any(String),
    });
  });

  it("active is empty when model.profile.active names an unusable profile", async () => {
    const q = project({
      ".home/models/half.yaml": "name: Half done\n",
      ".home/settings.yaml": "model:\n  profile:\n    active: half\n",
    });
    const r = await icode(q, ["models", "--json"]);
    const listing = parseListing(r.stdout, "models-list") as {
      active: string;
      models: { active: boolean }[];
    };
    expect(listing.active).toBe("");
    expect(listing.models.map((m) => m.active)).toEqual([false]);
  });
});

describe("empty lists, usage errors, a deleted working directory", () => {
  it("no model profile: 'No model profiles found.'; --json an empty list", async () => {
    const p = project();
    const r = await icode(p, ["models"]);
    expect(r).toMatchObject({ exitCode: 0, stdout: "No model profiles found.\n", stderr: "" });
    const j = await icode(p, ["models", "list", "--json"]);
    expect(parseListing(j.stdout, "models-list")).toEqual({ models: [], active: "", problems: [] });
  });

  it.each([
    [["agents", "--bogus"], "unknown option '--bogus'"],
    [["agents", "list", "extra"], "unexpected argument 'extra' (it takes no arguments)"],
    [["models", "-x"], "unknown option '-x'"],
    [["models", "list", "--model", "x"], "unknown option '--model'"],
  ])("icode %j: exit 2, the message and the usage on stderr", async (args, message) => {
    const p = project();
    const r = await icode(p, args);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`icode: ${message}\n\nUsage: icode ${args[0]} list [--json]`);
  });

  it("an unknown command of the group: exit 2, the group's commands on stderr", async () => {
    const r = await icode(project(), ["agents", "lst"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("icode: unknown command 'agents lst' (did you mean `list`?)");
    expect(r.stderr).toContain("Usage: icode agents <command> [options]");
  });

  it("a usage error with --json also writes the error object on stdout", async () => {
    const r = await icode(project(), ["agents", "--json", "--bogus"]);
    expect(r.exitCode).toBe(2);
    expect(parseErrorJson(r, "usage_error").message).toBe("unknown option '--bogus'");
  });

  it("--help shows the command's help (exit 0), from the group name too", async () => {
    for (const args of [
      ["agents", "--help"],
      ["agents", "list", "-h"],
      ["models", "--help"],
    ]) {
      const r = await icode(project(), args);
      expect(r.exitCode).toBe(0);
      expect(r.stdout.startsWith(`Usage: icode ${args[0]} list [--json]`)).toBe(true);
    }
  });

  it.each([["agents"], ["models"]])(
    "icode %s in a deleted working directory: exit 1 with an error, and the error object with --json",
    (command) => {
      const p = project();
      const gone = join(p.dir, "gone");
      mkdirSync(gone);
      const run = (json: boolean) =>
        spawnSync(
          "sh",
          [
            "-c",
            `cd "$1" && rmdir "$1" && exec "$2" "$3" ${command}${json ? " --json" : ""}`,
            "sh",
            gone,
            process.execPath,
            CLI_BIN,
          ],
          { env: { ...process.env, CHRYS_HOME: p.home }, encoding: "utf8" },
        );
      const r = run(false);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        `error: the working directory ${gone} no longer exists [cwd_missing]\n  help: cd into an existing directory and run the command again\n`,
      );
      mkdirSync(gone);
      const j = run(true);
      expect(j.status).toBe(1);
      expect(JSON.parse(j.stdout)).toMatchObject({ error: { code: "cwd_missing" } });
    },
  );
});
