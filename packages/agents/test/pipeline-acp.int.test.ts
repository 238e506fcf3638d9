import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT_BIN, handoffScript, receivedPrompts } from "@icode/acp-agent-double";
import type { NodeOutcome } from "@icode/pipelines";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { createPipelineNodeExecutor } from "../src/pipeline";
import { AgentTranscriptSchema } from "../src/transcript";
import { acpProfile, agentPids, alive } from "./support/acp";
import { acpDouble, configWith, nodeRequest } from "./support/pipeline";

const executors: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(executors.splice(0).map((e) => e.close()));
});

async function setup(script: Parameters<typeof acpDouble>[0], acp: Record<string, unknown> = {}) {
  const double = acpDouble(script, acp);
  const config = await configWith([double.profile], double.home, double.launch);
  const executor = createPipelineNodeExecutor({
    config,
    chrysHome: double.home,
    homeDir: double.home,
    acp: { graceMs: 500 },
  });
  executors.push(executor);
  return { ...double, config, executor };
}

function expectStatus<S extends NodeOutcome["status"]>(
  outcome: NodeOutcome,
  status: S,
): Extract<NodeOutcome, { status: S }> {
  if (outcome.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(outcome)}`);
  return outcome as Extract<NodeOutcome, { status: S }>;
}

describe("a pipeline node on an ACP agent (the scripted double)", () => {
  it("succeeds with the handoff submitted through the engine's submit_handoff MCP tool", async () => {
    const s = await setup({
      turns: [
        {
          steps: [
            { usage: { inputTokens: 10, outputTokens: 3 } },
            { submitHandoff: { summary: "reviewed", artifacts: ["notes.md"] } },
            { message: "Submitted." },
          ],
        },
      ],
    });
    const { request, events } = nodeRequest(s, { id: "review" });
    const outcome = expectStatus(
      await s.executor.runNode(request, new AbortController().signal),
      "succeeded",
    );
    expect(outcome.handoff).toEqual({ summary: "reviewed", artifacts: ["notes.md"] });
    expect(outcome.corrections).toBe(0);
    expect(outcome.session_ref).toMatch(/^acp:run-1\/review#1\./);
    expect(outcome.transcript).toBe(join("nodes", "review", "attempt-1", "transcript.json"));
    expect(outcome.usage).toMatchObject({ input_tokens: 10, output_tokens: 3, total_tokens: 13 });
    expect(events[0]).toEqual({ type: "running", session_ref: outcome.session_ref });
    expect(events.filter((e) => e.type === "activity").length).toBeGreaterThan(0);
    expect(events.some((e) => e.type === "activity" && e.activity.kind === "tool_call")).toBe(true);

    const transcript = AgentTranscriptSchema.parse(
      JSON.parse(readFileSync(join(s.runDir, outcome.transcript!), "utf8")),
    );
    expect(transcript).toMatchObject({ runtime: "acp", node_id: "review", attempt: 1, outcome: "succeeded" });
    const newSession = s.entries().find((e) => e.event === "request" && e.method === "session/new");
    expect(newSession).toMatchObject({ mcpServers: [{ name: "icode_handoff", type: "stdio" }] });
    const [prompt] = receivedPrompts(s.entries());
    expect(prompt?.prompt).toContain("Task of review.");
    expect(prompt?.prompt).toContain("submit_handoff");
    expect(outcome.session_ref).toBe(`acp:run-1/review#1.1:${prompt?.sessionId}`);
  });

  it("asks the same session again with exactly what is wrong, and takes the corrected handoff", async () => {
    const s = await setup({
      turns: [
        {
          steps: [
            { usage: { inputTokens: 10, outputTokens: 3 } },
            { submitHandoff: { summary: 7, artifacts: ["a", 2] } },
            { message: "Done." },
          ],
        },
        {
          steps: [
            { usage: { inputTokens: 20, outputTokens: 2 } },
            { submitHandoff: { summary: "fixed" } },
            { message: "Again." },
          ],
        },
      ],
    });
    const { request, events } = nodeRequest(s, { id: "fix" });
    const outcome = expectStatus(
      await s.executor.runNode(request, new AbortController().signal),
      "succeeded",
    );
    expect(outcome.handoff).toEqual({ summary: "fixed" });
    expect(outcome.corrections).toBe(1);
    // Usage summed over both rounds.
    expect(outcome.usage).toMatchObject({ input_tokens: 30, output_tokens: 5, total_tokens: 35 });
    const corrections = events.filter((e) => e.type === "correction");
    expect(corrections).toEqual([
      {
        type: "correction",
        round: 1,
        problems: ["$.summary: expected string, got number", "$.artifacts[1]: expected string, got number"],
      },
    ]);
    const prompts = receivedPrompts(s.entries());
    expect(prompts.map((p) => [p.sessionId, p.turn])).toEqual([
      [prompts[0]!.sessionId, 0],
      [prompts[0]!.sessionId, 1],
    ]);
    expect(prompts[1]!.prompt).toContain("$.summary: expected string, got number");
    expect(prompts[1]!.prompt).toContain("$.artifacts[1]: expected string, got number");
    expect(agentPids(s.entries())).toHaveLength(1);
    const transcript = AgentTranscriptSchema.parse(
      JSON.parse(readFileSync(join(s.runDir, outcome.transcript!), "utf8")),
    );
    expect(transcript.messages.filter((m) => m.role === "user")).toHaveLength(2);
  });

  it("blocks after the documented two correction rounds, with the last problems as the reason", async () => {
    const s = await setup({ turns: [{ steps: [{ submitHandoff: { notes: "no summary" } }] }] });
    const { request, events } = nodeRequest(s, { id: "stuck" });
    const outcome = expectStatus(await s.executor.runNode(request, new AbortController().signal), "blocked");
    expect(outcome.corrections).toBe(2);
    expect(outcome.handoff).toBeNull();
    expect(outcome.reason).toContain('$: missing required field "summary"');
    expect(outcome.reason).toContain("after 2 correction round(s)");
    expect(
      events.filter((e) => e.type === "correction").map((e) => e.type === "correction" && e.round),
    ).toEqual([1, 2]);
    expect(receivedPrompts(s.entries())).toHaveLength(3);
    // A blocked node's session stays for the run (a person may retry with it).
    expect(outcome.session_ref).not.toBeNull();
  });

  it("ends blocked when the worker calls report_blocked", async () => {
    const s = await setup({ turns: [{ steps: [{ reportBlocked: { reason: "no access to the repo" } }] }] });
    const { request } = nodeRequest(s, { id: "blocked" });
    const outcome = expectStatus(await s.executor.runNode(request, new AbortController().signal), "blocked");
    expect(outcome.reason).toBe("no access to the repo");
    expect(outcome.corrections).toBe(0);
  });

  it("takes the handoff from the final message's JSON when the agent did not call the tool", async () => {
    const s = await setup({
      turns: [{ steps: [{ finalJson: { summary: "from the message", notes: "n" } }] }],
    });
    const { request } = nodeRequest(s, { id: "text" });
    const outcome = expectStatus(
      await s.executor.runNode(request, new AbortController().signal),
      "succeeded",
    );
    expect(outcome.handoff).toEqual({ summary: "from the message", notes: "n" });
  });

  it("asks again when there is no handoff at all", async () => {
    const s = await setup({
      turns: [{ steps: [{ message: "I did it." }] }, { steps: [{ finalJson: { summary: "now" } }] }],
    });
    const { request, events } = nodeRequest(s, { id: "forgot" });
    const outcome = expectStatus(
      await s.executor.runNode(request, new AbortController().signal),
      "succeeded",
    );
    expect(outcome.corrections).toBe(1);
    const [correction] = events.filter((e) => e.type === "correction");
    expect(correction).toMatchObject({ round: 1 });
    expect(correction?.type === "correction" && correction.problems[0]).toContain(
      "you did not call submit_handoff",
    );
  });

  it("fails with the ACP class when the agent crashes mid-node, and keeps no session", async () => {
    const s = await setup({ turns: [{ steps: [{ message: "working" }, { crash: 3 }] }] });
    const { request } = nodeRequest(s, { id: "crash" });
    const outcome = expectStatus(await s.executor.runNode(request, new AbortController().signal), "failed");
    expect(outcome.error.code).toBe("acp_connection_lost");
    expect(outcome.error.message).toContain("exited with code 3");
    expect(outcome.session_ref).toBeNull();
    expect(outcome.transcript).not.toBeNull();
  });

  it("cancels mid-attempt: session/cancel, then the outcome canceled", async () => {
    const s = await setup({ turns: [{ steps: [{ message: "starting" }, { hang: true }] }] });
    const controller = new AbortController();
    const { request } = nodeRequest(
      s,
      { id: "slow" },
      {
        onEvent: (e) => {
          if (e.type === "activity" && e.activity.kind === "text") controller.abort("user_cancelled");
        },
      },
    );
    const outcome = await s.executor.runNode(request, controller.signal);
    expect(outcome.status).toBe("canceled");
    expect(
      s.entries().some((e) => e.event === "notification_received" && e.method === "session/cancel"),
    ).toBe(true);
    const pids = agentPids(s.entries());
    expect(pids.every((pid) => !alive(pid))).toBe(true);
  });

  it("continues the same session for reuse_session_of, and stopSessions ends it", async () => {
    const s = await setup({
      turns: [
        { when: { promptIncludes: "Task of plan." }, steps: [{ submitHandoff: { summary: "planned" } }] },
        { when: { promptIncludes: "Task of build." }, steps: [{ submitHandoff: { summary: "built" } }] },
        { steps: [{ message: "?" }] },
      ],
    });
    const first = nodeRequest(s, { id: "plan" });
    const planned = expectStatus(
      await s.executor.runNode(first.request, new AbortController().signal),
      "succeeded",
    );
    const second = nodeRequest(
      s,
      { id: "build", depends_on: ["plan"], reuse_session_of: "plan" },
      { reuseSession: planned.session_ref },
    );
    const built = expectStatus(
      await s.executor.runNode(second.request, new AbortController().signal),
      "succeeded",
    );
    expect(built.handoff).toEqual({ summary: "built" });
    expect(built.session_ref).toBe(planned.session_ref);
    expect(second.events[0]).toEqual({ type: "running", session_ref: planned.session_ref });
    const prompts = receivedPrompts(s.entries());
    expect(prompts).toHaveLength(2);
    expect(prompts[1]!.sessionId).toBe(prompts[0]!.sessionId);
    expect(prompts.map((p) => p.turn)).toEqual([0, 1]);
    const pids = agentPids(s.entries());
    expect(pids).toHaveLength(1);
    expect(alive(pids[0]!)).toBe(true);
    // Each attempt has its own transcript with its own prompt.
    const t2 = AgentTranscriptSchema.parse(
      JSON.parse(readFileSync(join(s.runDir, built.transcript!), "utf8")),
    );
    expect(t2.node_id).toBe("build");
    expect(t2.messages.filter((m) => m.role === "user").map((m) => m.content.split("\n")[0])).toEqual([
      "Task of build.",
    ]);

    await s.executor.stopSessions("run-1");
    expect(alive(pids[0]!)).toBe(false);
    const third = nodeRequest(s, { id: "again" }, { reuseSession: planned.session_ref });
    const gone = expectStatus(
      await s.executor.runNode(third.request, new AbortController().signal),
      "failed",
    );
    expect(gone.error.code).toBe("pipeline_node_session_unavailable");
  });

  it("ends the session with the attempt when no node continues it (keepSession: false): its agent exits, no session_ref", async () => {
    const s = await setup({ turns: [{ steps: [{ submitHandoff: { summary: "done" } }] }] });
    const { request } = nodeRequest(s, { id: "leaf" }, { keepSession: false });
    const outcome = expectStatus(
      await s.executor.runNode(request, new AbortController().signal),
      "succeeded",
    );
    expect(outcome.session_ref).toBeNull();
    const pids = agentPids(s.entries());
    expect(pids).toHaveLength(1);
    const until = Date.now() + 5000;
    while (alive(pids[0]!) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pids[0]!)).toBe(false);
  });

  it("never rejects: an onEvent that throws does not change the outcome, nor does an aborted signal at the start", async () => {
    const s = await setup({ turns: [{ steps: [{ message: "hi" }, { submitHandoff: { summary: "ok" } }] }] });
    const { request } = nodeRequest(
      s,
      { id: "loud" },
      {
        onEvent: () => {
          throw new Error("listener bug");
        },
      },
    );
    const outcome = await s.executor.runNode(request, new AbortController().signal);
    expect(outcome).toMatchObject({ status: "succeeded", handoff: { summary: "ok" } });
    const aborted = new AbortController();
    aborted.abort("user_cancelled");
    const early = nodeRequest(s, { id: "early" });
    expect(await s.executor.runNode(early.request, aborted.signal)).toMatchObject({ status: "canceled" });
    expect(receivedPrompts(s.entries())).toHaveLength(1);
  });

  it("warns pipeline_node_transcript_failed when the transcript cannot be written, and the outcome stands", async () => {
    const s = await setup({ turns: [{ steps: [{ submitHandoff: { summary: "ok" } }] }] });
    mkdirSync(join(s.runDir, "nodes", "t", "attempt-1", "transcript.json"), { recursive: true });
    const { request, events } = nodeRequest(s, { id: "t" });
    const outcome = expectStatus(
      await s.executor.runNode(request, new AbortController().signal),
      "succeeded",
    );
    expect(outcome.transcript).toBeNull();
    const codes = events.flatMap((e) =>
      e.type === "activity" && e.activity.kind === "warning" ? [e.activity.code] : [],
    );
    expect(codes).toEqual(["pipeline_node_transcript_failed"]);
  });

  it("fails pipeline_node_session_unavailable for a session_ref it never made", async () => {
    const s = await setup({ turns: [{ steps: [{ message: "x" }] }] });
    const { request } = nodeRequest(s, { id: "n" }, { reuseSession: "acp:other/x#1.9" });
    const outcome = expectStatus(await s.executor.runNode(request, new AbortController().signal), "failed");
    expect(outcome.error.code).toBe("pipeline_node_session_unavailable");
    expect(receivedPrompts(s.entries())).toHaveLength(0);
  });
});

describe("a pipeline node's isolate on a real git repository", () => {
  async function repo(dir: string) {
    const git = (...args: string[]) => execa("git", args, { cwd: dir });
    await git("init", "-q", "-b", "main");
    await git("config", "user.email", "t@example.com");
    await git("config", "user.name", "T");
    await execa("sh", ["-c", "echo base > base.txt"], { cwd: dir });
    await git("add", "-A");
    await git("commit", "-q", "-m", "base");
    return git;
  }

  it("runs in a worktree on icode/<run>/<node>, commits the changes there and lists them in artifacts", async () => {
    const s = await setup({
      turns: [
        {
          steps: [
            { echoSession: true },
            { writeFile: { path: "out.txt", content: "made by the node\n" } },
            { submitHandoff: { summary: "wrote out.txt", artifacts: ["report"] } },
          ],
        },
      ],
    });
    const git = await repo(s.launch);
    const { request } = nodeRequest(s, { id: "impl", isolate: true });
    const outcome = expectStatus(
      await s.executor.runNode(request, new AbortController().signal),
      "succeeded",
    );
    const worktree = join(s.runDir, "nodes", "impl", "worktree");
    expect(outcome.handoff["artifacts"]).toEqual(["report", "icode/run-1/impl", "out.txt"]);
    const newSession = s.entries().find((e) => e.event === "request" && e.method === "session/new");
    expect(newSession).toMatchObject({ cwd: worktree });
    expect(existsSync(join(s.launch, "out.txt"))).toBe(false);
    const show = await git("show", "--name-only", "--format=%s", "icode/run-1/impl");
    expect(show.stdout).toContain("icode: node impl, attempt 1 of run run-1");
    expect(show.stdout).toContain("out.txt");
    expect((await git("status", "--porcelain")).stdout).toBe("");
  });

  it("adds artifacts to a custom handoff that has none, and leaves a non-list artifacts alone with a warning", async () => {
    const schema = {
      type: "object" as const,
      properties: { summary: { type: "string" as const }, artifacts: { type: "string" as const } },
      required: ["summary"],
    };
    const s = await setup({
      turns: [
        {
          when: { promptIncludes: "Task of none." },
          steps: [{ writeFile: { path: "n.txt", content: "n" } }, { submitHandoff: { summary: "none" } }],
        },
        {
          when: { promptIncludes: "Task of text." },
          steps: [
            { writeFile: { path: "t.txt", content: "t" } },
            { submitHandoff: { summary: "text", artifacts: "one file" } },
          ],
        },
        { steps: [{ message: "?" }] },
      ],
    });
    await repo(s.launch);
    const none = nodeRequest(s, { id: "none", isolate: true }, { outputSchema: schema });
    const a = expectStatus(await s.executor.runNode(none.request, new AbortController().signal), "succeeded");
    expect(a.handoff).toEqual({ summary: "none", artifacts: ["icode/run-1/none", "n.txt"] });
    const text = nodeRequest(s, { id: "text", isolate: true }, { outputSchema: schema });
    const b = expectStatus(await s.executor.runNode(text.request, new AbortController().signal), "succeeded");
    expect(b.handoff).toEqual({ summary: "text", artifacts: "one file" });
    const codes = text.events.flatMap((e) =>
      e.type === "activity" && e.activity.kind === "warning" ? [e.activity.code] : [],
    );
    expect(codes).toEqual(["pipeline_node_artifacts_not_listed"]);
  });

  it("keeps what a crashed attempt changed, committed on its branch", async () => {
    const s = await setup({
      turns: [{ steps: [{ writeFile: { path: "half.txt", content: "half done\n" } }, { crash: 1 }] }],
    });
    const git = await repo(s.launch);
    const { request } = nodeRequest(s, { id: "crashy", isolate: true });
    const outcome = expectStatus(await s.executor.runNode(request, new AbortController().signal), "failed");
    expect(outcome.error.code).toBe("acp_connection_lost");
    const show = await git("show", "--name-only", "--format=%s", "icode/run-1/crashy");
    expect(show.stdout).toContain("icode: node crashy, attempt 1 of run run-1 (failed)");
    expect(show.stdout).toContain("half.txt");
  });

  it("does not isolate a lone node by default, and refuses isolate: true outside a repository", async () => {
    const s = await setup({ turns: [{ steps: [{ submitHandoff: { summary: "ok" } }] }] });
    const plain = nodeRequest(s, { id: "plain", isolate: true });
    const refused = expectStatus(
      await s.executor.runNode(plain.request, new AbortController().signal),
      "failed",
    );
    expect(refused.error.code).toBe("pipeline_node_isolate_failed");
    await repo(s.launch);
    const lone = nodeRequest(s, { id: "lone" });
    const ok = expectStatus(
      await s.executor.runNode(lone.request, new AbortController().signal),
      "succeeded",
    );
    expect(ok.handoff).toEqual({ summary: "ok" });
    expect(existsSync(join(s.runDir, "nodes", "lone", "worktree"))).toBe(false);
  });

  it("isolates by default a node that starts while another node of the run works in the same repository", async () => {
    const s = await setup({
      turns: [
        {
          when: { promptIncludes: "Task of a." },
          steps: [{ delay: 600 }, { submitHandoff: { summary: "a" } }],
        },
        { when: { promptIncludes: "Task of b." }, steps: [{ submitHandoff: { summary: "b" } }] },
        { steps: [{ message: "?" }] },
      ],
    });
    await repo(s.launch);
    const a = nodeRequest(s, { id: "a" });
    const b = nodeRequest(s, { id: "b" });
    const runA = s.executor.runNode(a.request, new AbortController().signal);
    await new Promise((r) => setTimeout(r, 250));
    const [outA, outB] = await Promise.all([
      runA,
      s.executor.runNode(b.request, new AbortController().signal),
    ]);
    expect(expectStatus(outA, "succeeded").handoff).toEqual({ summary: "a" });
    expect(expectStatus(outB, "succeeded").handoff).toEqual({ summary: "b", artifacts: ["icode/run-1/b"] });
    expect(existsSync(join(s.runDir, "nodes", "a", "worktree"))).toBe(false);
    expect(existsSync(join(s.runDir, "nodes", "b", "worktree"))).toBe(true);
  });
});

describe("a pipeline node's permissions, effort and runtime on ACP", () => {
  const ASKS = {
    turns: [
      {
        steps: [
          {
            toolCall: {
              id: "sh",
              title: "rm -rf build",
              kind: "execute" as const,
              rawInput: { command: "rm -rf build" },
            },
          },
          {
            permission: { title: "rm -rf build", kind: "execute" as const },
            onAllowed: [{ submitHandoff: { summary: "allowed" } }],
            onRejected: [{ submitHandoff: { summary: "rejected" } }],
          },
        ],
      },
    ],
  };

  // [launch gear, permission_mode, skip_permissions, approve callback answer, handoff summary]
  const rows = [
    ["yolo", null, null, null, "allowed"],
    ["bounded", null, null, null, "rejected"],
    ["bounded", null, true, null, "allowed"],
    ["yolo", "bounded", null, null, "rejected"],
    ["yolo", "bounded", null, "allow", "allowed"],
    ["bounded", null, false, "reject", "rejected"],
  ] as const;
  it.each(rows)(
    "launch %s, permission_mode %s, skip_permissions %s, callback %s → %s",
    async (launch, mode, skip, answer, summary) => {
      const double = acpDouble(ASKS);
      const config = await configWith([double.profile], double.home, double.launch);
      const asked: string[] = [];
      const executor = createPipelineNodeExecutor({
        config,
        chrysHome: double.home,
        homeDir: double.home,
        acp: { graceMs: 500 },
        ...(answer === null
          ? {}
          : {
              approve: async (r) => {
                asked.push(r.title);
                return answer;
              },
            }),
      });
      executors.push(executor);
      const { request } = nodeRequest(
        double,
        { id: "perm", permission_mode: mode, skip_permissions: skip },
        { launchPermissionMode: launch },
      );
      const outcome = expectStatus(
        await executor.runNode(request, new AbortController().signal),
        "succeeded",
      );
      expect(outcome.handoff).toEqual({ summary });
      expect(asked).toEqual(answer === null ? [] : ["rm -rf build"]);
    },
  );

  const THINKING = {
    configOptions: [
      {
        id: "thinking",
        name: "Thinking",
        category: "thought_level",
        currentValue: "low",
        options: [
          { value: "low", name: "Low" },
          { value: "high", name: "High" },
        ],
      },
    ],
    turns: [{ steps: [{ echoSession: true as const }, { submitHandoff: { summary: "ok" } }] }],
  };

  it("sets effort through the session's thought_level option", async () => {
    const s = await setup(THINKING);
    const { request, events } = nodeRequest(s, { id: "e", effort: "high" });
    expectStatus(await s.executor.runNode(request, new AbortController().signal), "succeeded");
    const set = s.entries().filter((e) => e.event === "request" && e.method === "session/set_config_option");
    expect(set).toMatchObject([{ configId: "thinking", value: "high" }]);
    expect(events.some((e) => e.type === "activity" && e.activity.kind === "warning")).toBe(false);
  });

  it("warns acp_effort_unsupported when the option lacks the value or there is no such option", async () => {
    const s = await setup(THINKING);
    const { request, events } = nodeRequest(s, { id: "e", effort: "max" });
    expectStatus(await s.executor.runNode(request, new AbortController().signal), "succeeded");
    const warnings = events.flatMap((e) =>
      e.type === "activity" && e.activity.kind === "warning" ? [e.activity] : [],
    );
    expect(warnings).toEqual([expect.objectContaining({ code: "acp_effort_unsupported" })]);
    expect(warnings[0]!.message).toContain("low, high");
    expect(s.entries().some((e) => e.event === "request" && e.method === "session/set_config_option")).toBe(
      false,
    );

    const plain = await setup({ turns: [{ steps: [{ submitHandoff: { summary: "ok" } }] }] });
    const other = nodeRequest(plain, { id: "e", effort: "low", skills: ["review"] });
    expectStatus(await plain.executor.runNode(other.request, new AbortController().signal), "succeeded");
    const codes = other.events.flatMap((e) =>
      e.type === "activity" && e.activity.kind === "warning" ? [e.activity.code] : [],
    );
    expect(codes.sort()).toEqual(["acp_effort_unsupported", "pipeline_node_skills_not_applied"]);
  });

  it("prefers a configured ACP profile named like the preset, and a profile_id lends it its approval rules", async () => {
    const script = {
      turns: [
        {
          steps: [
            {
              permission: { title: "something", kind: "other" as const },
              onAllowed: [{ submitHandoff: { summary: "allowed" } }],
              onRejected: [{ submitHandoff: { summary: "rejected" } }],
            },
          ],
        },
      ],
    };
    const double = acpDouble(script);
    const claude = { ...double.profile, name: "Claude" };
    const base = acpProfile({ command: "unused" }, "Strict");
    const strict = {
      ...base,
      id: "strict000001",
      approval: { ...base.approval, default: "require" as const },
    };
    const config = await configWith([claude, strict], double.home, double.launch);
    const executor = createPipelineNodeExecutor({ config, chrysHome: double.home, homeDir: double.home });
    executors.push(executor);
    const plain = nodeRequest(
      double,
      { id: "p", runtime: "claude-code" },
      { launchPermissionMode: "bounded" },
    );
    const allowed = expectStatus(
      await executor.runNode(plain.request, new AbortController().signal),
      "succeeded",
    );
    expect(allowed.handoff).toEqual({ summary: "allowed" });
    const lent = nodeRequest(
      double,
      { id: "s", runtime: "claude-code", profile_id: "Strict" },
      { launchPermissionMode: "bounded" },
    );
    const rejected = expectStatus(
      await executor.runNode(lent.request, new AbortController().signal),
      "succeeded",
    );
    expect(rejected.handoff).toEqual({ summary: "rejected" });
    // Both ran the configured "Claude" profile (the double), not the built-in preset's command.
    expect(agentPids(double.entries())).toHaveLength(2);
  });

  it("runs runtime claude-code on the Claude preset's command found on PATH", async () => {
    const double = acpDouble({ turns: [{ steps: [{ submitHandoff: { summary: "via the preset" } }] }] });
    const bin = join(double.dir, "bin");
    mkdirSync(bin);
    const script = join(double.dir, "script.json");
    const shim = join(bin, "claude-agent-acp");
    writeFileSync(
      shim,
      `#!/bin/sh\nACP_DOUBLE_LOG=${JSON.stringify(double.log)} exec ${JSON.stringify(process.execPath)} ${JSON.stringify(AGENT_BIN)} --script ${JSON.stringify(script)} "$@"\n`,
    );
    chmodSync(shim, 0o755);
    // The default agent is a native profile: runtime claude-code does not use it.
    const config = await configWith([], double.home, double.launch);
    const executor = createPipelineNodeExecutor({ config, chrysHome: double.home, homeDir: double.home });
    executors.push(executor);
    const { request } = nodeRequest(
      double,
      { id: "cc", runtime: "claude-code" },
      { env: { PATH: `${bin}:${process.env["PATH"]}`, HOME: double.home } },
    );
    const outcome = expectStatus(await executor.runNode(request, new AbortController().signal), "succeeded");
    expect(outcome.handoff).toEqual({ summary: "via the preset" });
    expect(agentPids(double.entries())).toHaveLength(1);
  });
});

describe("each handoff behaviour of the scripted worker (handoffScript)", () => {
  // [behaviour, status, corrections, prompts the session got]
  const rows = [
    ["valid", "succeeded", 0, 1],
    ["corrected", "succeeded", 1, 2],
    ["never_corrected", "blocked", 2, 3],
    ["blocked", "blocked", 0, 1],
    ["crash", "failed", 0, 1],
    ["final_json", "succeeded", 0, 1],
  ] as const;
  it.each(rows)("%s → %s after %i correction(s)", async (behaviour, status, corrections, prompts) => {
    const s = await setup(handoffScript(behaviour, { echoTurn: true, handoff: { summary: "the work" } }));
    const { request, events } = nodeRequest(s, { id: behaviour.replace("_", "-") });
    const outcome = await s.executor.runNode(request, new AbortController().signal);
    expect(outcome.status).toBe(status);
    expect(outcome.corrections).toBe(corrections);
    expect(events.filter((e) => e.type === "correction")).toHaveLength(corrections);
    expect(receivedPrompts(s.entries())).toHaveLength(prompts);
    if (outcome.status === "succeeded") expect(outcome.handoff).toEqual({ summary: "the work" });
    if (outcome.status === "failed") expect(outcome.error.code).toBe("acp_connection_lost");
    // The per-session counter the worker echoes: one session, counting each prompt.
    const echoed = events
      .flatMap((e) => (e.type === "activity" && e.activity.kind === "text" ? [e.activity.text] : []))
      .filter((t) => t.startsWith('{"sessionId"'))
      .map((t) => JSON.parse(t) as { turn: number });
    expect(echoed.map((e) => e.turn)).toEqual([...Array(prompts).keys()]);
  });
});
