/**
 * `icode workflow run --model ID` (issue 18, item 3): the default model of a NEW session, saved with it and
 * kept by `-s`; an unknown or ambiguous one is refused at start with the selection code; `--model` with `-s`
 * is a usage error. Through the built CLI against the loopback model provider.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble, text } from "@icode/model-provider-double";
import { ECHO_WORKFLOW } from "@icode/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { icode, type Project, parseErrorJson, project, runJson } from "./run-helpers";

const WORKFLOW = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Review")


def report(value: WorkflowValue) -> str:
    return "REPORT: " + value.text


r = wf.agent("review", profile="Reviewer")
f = wf.python("report", report)
wf.chain(r, f)
wf.start(r)
wf.output(f)
workflow = wf.build()
`;

let provider: ProviderDouble;
beforeAll(async () => {
  provider = await startProviderDouble();
});
afterAll(async () => {
  await provider.close();
});

const modelFile = (id: string, name: string, modelId: string) =>
  [
    `id: ${id}`,
    `name: ${name}`,
    "provider: openai",
    `model_id: ${modelId}`,
    `base_url: ${provider.openaiBaseUrl}`,
    'api_key: "{{DOUBLE_KEY}}"',
    "stream: false",
    "",
  ].join("\n");

/** A project with an agent workflow whose profile binds no model, two model profiles, no default model. */
function agentProject(extra: Record<string, string> = {}): Project {
  return project({
    ".chrys/workflows/review.py": WORKFLOW,
    ".chrys/workflows/echo.py": ECHO_WORKFLOW,
    ".chrys/agents/reviewer.yaml": "name: Reviewer\ninstructions: You review.\n",
    ".home/models/aaaaaaaaaaaa.yaml": modelFile("aaaaaaaaaaaa", "Alpha", "alpha-model"),
    ".home/models/bbbbbbbbbbbb.yaml": modelFile("bbbbbbbbbbbb", "Beta", "beta-model"),
    ...extra,
  });
}
const ENV = { DOUBLE_KEY: "sk-test" };

function savedModel(p: Project, sessionId: string): unknown {
  const session = JSON.parse(readFileSync(join(p.home, "sessions", sessionId, "session.json"), "utf8"));
  return session.settings.model;
}

describe("icode workflow run --model", () => {
  it("sets the new session's default model (by name, ignoring case), saved with it; -s keeps it", async () => {
    const p = agentProject();
    provider.script("beta-model", [text("first"), text("second")]);
    const first = await runJson(p, "review", ["--model", "beta", "--trust"], ENV);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json.outputs.map((o) => o.text)).toEqual(["REPORT: first"]);
    expect(provider.requestsFor("beta-model")).toHaveLength(1);
    expect(provider.requestsFor("alpha-model")).toHaveLength(0);
    const sessionId = first.json.session_id!;
    expect(savedModel(p, sessionId)).toBe("beta");

    // A later run in the session, without --model and with no default model configured, uses the saved one.
    const again = await runJson(p, "review", ["-s", sessionId], ENV);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json.outputs.map((o) => o.text)).toEqual(["REPORT: second"]);
    expect(provider.requestsFor("beta-model")).toHaveLength(2);
  });

  it("wins over model.profile.active, which applies without it", async () => {
    const p = agentProject({ ".home/settings.yaml": "model:\n  profile:\n    active: Alpha\n" });
    provider.script("alpha-model", [text("from alpha")]);
    provider.script("beta-model", [text("from beta")]);
    const withFlag = await runJson(p, "review", ["--model", "bbbbbbbbbbbb", "--trust"], ENV);
    expect(withFlag.json.outputs.map((o) => o.text)).toEqual(["REPORT: from beta"]);
    const without = await runJson(p, "review", [], ENV);
    expect(without.json.outputs.map((o) => o.text)).toEqual(["REPORT: from alpha"]);
    expect(savedModel(p, without.json.session_id!)).toBeNull();
  });

  it.each([
    ["review", "an agent workflow"],
    ["echo", "a workflow without agent nodes"],
  ])("an unknown model is refused at start with model_unresolvable (%s), nothing recorded", async (id) => {
    const p = agentProject();
    const r = await icode(p, ["workflow", "run", id, "--model", "Gamma", "--trust"], ENV);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('no model profile matches "Gamma" by id or name [model_unresolvable]');
    expect(r.stderr).toContain("help: list the model profiles with: icode models");
    expect(existsSync(join(p.home, "sessions")) ? readdirSync(join(p.home, "sessions")) : []).toEqual([]);
    const j = await icode(p, ["workflow", "run", id, "--model", "Gamma", "--json"], ENV);
    expect(j.exitCode).toBe(1);
    expect(parseErrorJson(j, "model_unresolvable").session_id).toBeNull();
  });

  it("an unusable model is model_unresolvable; two profiles matching by name ignoring case, model_ambiguous", async () => {
    const p = agentProject({
      ".home/models/half.yaml": "name: Half\nprovider: openai\n",
      ".home/models/cccccccccccc.yaml": modelFile("cccccccccccc", "twin", "t1"),
      ".home/models/dddddddddddd.yaml": modelFile("dddddddddddd", "Twin", "t2"),
    });
    const unusable = await icode(p, ["workflow", "run", "echo", "--model", "half", "--json"], ENV);
    expect(parseErrorJson(unusable, "model_unresolvable").message).toContain("is not usable");
    const ambiguous = await icode(p, ["workflow", "run", "echo", "--model", "TWIN", "--json"], ENV);
    expect(parseErrorJson(ambiguous, "model_ambiguous").message).toContain("matches 2 model profiles");
  });

  it("a known model passes the start check; the trust hint repeats --model in the command to paste", async () => {
    const p = agentProject();
    const r = await icode(p, ["workflow", "run", "review", "--model", "Beta"], ENV);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("[trust_required]");
    expect(r.stderr).toContain("icode workflow run review --model Beta --trust");
  });

  it("with -s it is a usage error (exit 2): the session keeps the model saved with it", async () => {
    const p = agentProject();
    const first = await runJson(p, "echo", ["--model", "Alpha", "--trust"], ENV);
    expect(first.exitCode, first.stderr).toBe(0);
    for (const model of ["Alpha", "Beta"]) {
      const r = await icode(p, ["workflow", "run", "echo", "-s", first.json.session_id!, "--model", model]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(
        "icode: --model sets the default model of a new session; a session given with -s keeps the model saved with it",
      );
    }
    const empty = await icode(p, ["workflow", "run", "echo", "--model", ""]);
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toContain("--model needs a model profile id or name");
  });
});
