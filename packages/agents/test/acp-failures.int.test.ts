import { readFileSync } from "node:fs";
import { join } from "node:path";
import { finishedTurns } from "@icode/acp-agent-double";
import { describe, expect, it } from "vitest";
import { createAcpAttempt } from "../src/acp/run-attempt";
import { acpProfile, agentPids, alive, attemptContext, doubleSetup, failureOf } from "./support/acp";

const run = createAcpAttempt({ graceMs: 500 });

function requests(entries: ReturnType<ReturnType<typeof doubleSetup>["entries"]>) {
  return entries.flatMap((e) => (e.event === "request" ? [e.method] : []));
}

describe("how an ACP turn ends badly", () => {
  it("a crash mid-turn is a lost connection, retried, with the agent's stderr kept", async () => {
    const setup = doubleSetup({
      turns: [{ steps: [{ message: "partial" }, { stderr: "fatal: out of memory\n" }, { crash: 3 }] }],
    });
    const { context, transcripts, io } = await attemptContext(setup);
    const error = failureOf(await run(context));
    expect(error).toMatchObject({ class: "acp_connection_lost", retryable: true, traceback: null });
    expect(error.message).toContain("exited with code 3");
    expect(error.message).toContain("fatal: out of memory");
    expect(io.text()).toBe("partial");
    expect(transcripts[0]).toMatchObject({
      outcome: "acp_connection_lost",
      stderr: { text: "fatal: out of memory\n", truncated: false },
    });
  });

  it("a crash by a signal says which", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ crash: "SIGKILL" }] }] });
    const error = failureOf(await run((await attemptContext(setup)).context));
    expect(error).toMatchObject({ class: "acp_connection_lost", retryable: true });
    expect(error.message).toContain("killed by SIGKILL");
  });

  it.each([
    ["empty", "acp_empty_answer", [{ empty: true as const }]],
    ["only whitespace", "acp_empty_answer", [{ message: "  \n" }]],
    ["a thought but no message", "acp_empty_answer", [{ thought: "hmm" }]],
    ["refusal", "acp_refused", [{ message: "no" }, { stop: "refusal" as const }]],
    ["max_tokens", "acp_cut_short", [{ message: "half an ans" }, { stop: "max_tokens" as const }]],
    ["max_turn_requests", "acp_cut_short", [{ message: "step 99" }, { stop: "max_turn_requests" as const }]],
  ])("%s ends as %s, not retried", async (_label, cls, steps) => {
    const setup = doubleSetup({ turns: [{ steps }] });
    const { context, transcripts } = await attemptContext(setup);
    expect(failureOf(await run(context))).toMatchObject({ class: cls, retryable: false });
    expect(transcripts[0]?.outcome).toBe(cls);
    expect(finishedTurns(setup.entries())).toHaveLength(1);
  });

  it("an error answer to the prompt is the agent's error, retried", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ error: { message: "backend exploded" } }] }] });
    const error = failureOf(await run((await attemptContext(setup)).context));
    expect(error).toMatchObject({ class: "acp_agent_error", retryable: true });
    expect(error.message).toContain("backend exploded (JSON-RPC -32603)");
  });

  it("an auth-required answer to the prompt needs a person, and is not retried", async () => {
    const setup = doubleSetup({
      turns: [{ steps: [{ error: { code: -32000, message: "token expired" } }] }],
    });
    const error = failureOf(await run((await attemptContext(setup)).context));
    expect(error).toMatchObject({ class: "acp_auth_required", retryable: false });
    expect(error.message).toContain("token expired");
  });
});

describe("an ACP attempt that is stopped", () => {
  it("sends session/cancel when the attempt is cancelled, and ends the process", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ message: "working" }, { hang: true }] }] });
    const { context, io } = await attemptContext(setup);
    io.onActivity = (activity, self) => {
      if (activity.kind === "text") self.abort("user_cancelled");
    };
    const error = failureOf(await run(context));
    expect(error).toMatchObject({ class: "acp_cancelled", retryable: false });
    const entries = setup.entries();
    expect(entries.some((e) => e.event === "notification_received" && e.method === "session/cancel")).toBe(
      true,
    );
    expect(finishedTurns(entries).map((t) => t.stopReason)).toEqual(["cancelled"]);
    for (const pid of agentPids(entries)) expect(alive(pid)).toBe(false);
  });

  it("reports the node timeout as the retryable timeout class", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ message: "working" }, { hang: true }] }] });
    const { context, io, transcripts } = await attemptContext(setup);
    io.onActivity = (activity, self) => {
      if (activity.kind === "text") self.abort("timeout");
    };
    expect(failureOf(await run(context))).toMatchObject({ class: "timeout", retryable: true });
    expect(transcripts[0]?.outcome).toBe("timeout");
  });

  it("ends an agent that ignores session/cancel after the grace period", async () => {
    const setup = doubleSetup({
      turns: [{ steps: [{ message: "stuck" }, { hang: { ignoreCancel: true } }] }],
    });
    const { context, io } = await attemptContext(setup);
    io.onActivity = (activity, self) => {
      if (activity.kind === "text") self.abort("user_cancelled");
    };
    expect(failureOf(await run(context))).toMatchObject({ class: "acp_cancelled" });
    const entries = setup.entries();
    expect(entries.some((e) => e.event === "notification_received" && e.method === "session/cancel")).toBe(
      true,
    );
    expect(finishedTurns(entries)).toEqual([]);
    for (const pid of agentPids(entries)) expect(alive(pid)).toBe(false);
  });

  it("stops an agent that sends nothing for idle_timeout_seconds, and retries it", async () => {
    const setup = doubleSetup(
      { turns: [{ steps: [{ message: "thinking…" }, { hang: true }] }] },
      { idle_timeout_seconds: 0.3 },
    );
    const { context } = await attemptContext(setup);
    const error = failureOf(await run(context));
    expect(error).toMatchObject({ class: "acp_idle_timeout", retryable: true });
    expect(error.message).toContain("0.3 s");
    const entries = setup.entries();
    expect(entries.some((e) => e.event === "notification_received" && e.method === "session/cancel")).toBe(
      true,
    );
    for (const pid of agentPids(entries)) expect(alive(pid)).toBe(false);
  });

  it("does nothing when cancelled before it starts", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ message: "x" }] }] });
    const { context, io, transcripts } = await attemptContext(setup);
    io.abort("skipped");
    expect(failureOf(await run(context))).toMatchObject({ class: "acp_cancelled" });
    expect(setup.entries()).toEqual([]);
    expect(transcripts).toHaveLength(1);
  });
});

describe("authentication", () => {
  it("authenticates with the agent's own method when session/new asks for it", async () => {
    const setup = doubleSetup({
      auth: { methods: [{ id: "agent-login", name: "Log in with the stored key" }] },
      turns: [{ steps: [{ message: "in" }] }],
    });
    expect(await run((await attemptContext(setup)).context)).toEqual({
      status: "completed",
      value: { text: "in", data: null },
    });
    const entries = setup.entries();
    expect(requests(entries)).toEqual([
      "initialize",
      "session/new",
      "authenticate",
      "session/new",
      "session/prompt",
    ]);
    expect(entries.find((e) => e.event === "request" && e.method === "authenticate")).toMatchObject({
      methodId: "agent-login",
    });
  });
});

describe("an ACP agent that cannot start", () => {
  it("fails on a missing {{NAME}} in acp.env, before any process starts", async () => {
    const setup = doubleSetup(
      { turns: [{ steps: [{ message: "x" }] }] },
      { env: { KEY: "{{NOT_SET_ANYWHERE}}" } },
    );
    const error = failureOf(await run((await attemptContext(setup)).context));
    expect(error).toMatchObject({ class: "acp_start_failed", retryable: false });
    expect(error.message).toContain("NOT_SET_ANYWHERE");
    expect(setup.entries()).toEqual([]);
  });

  it("fails on an empty command, and on a program that is not on PATH", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ message: "x" }] }] });
    const empty = failureOf(await run((await attemptContext({ ...setup, profile: acpProfile({}) })).context));
    expect(empty).toMatchObject({ class: "acp_start_failed", retryable: false });
    expect(empty.message).toContain("acp.command is empty");
    const missing = acpProfile({ command: "no-such-acp-agent-on-this-machine" });
    const error = failureOf(await run((await attemptContext({ ...setup, profile: missing })).context));
    expect(error).toMatchObject({ class: "acp_start_failed", retryable: false });
    expect(error.message).toContain("no such program on PATH");
  });

  it("fails on a cwd outside the workspace unless allow_external_cwd, and on a missing cwd", async () => {
    const outside = doubleSetup({ turns: [{ steps: [{ echoSession: true }] }] }, { cwd: ".." });
    const error = failureOf(await run((await attemptContext(outside)).context));
    expect(error).toMatchObject({ class: "acp_start_failed" });
    expect(error.message).toContain("outside the session's working directory");
    expect(outside.entries()).toEqual([]);

    const allowed = doubleSetup(
      { turns: [{ steps: [{ echoSession: true }] }] },
      { cwd: "..", allow_external_cwd: true },
    );
    const result = await run((await attemptContext(allowed)).context);
    expect(result.status === "completed" && JSON.parse(result.value.text).cwd).toBe(allowed.dir);

    const missing = doubleSetup({ turns: [{ steps: [{ echoSession: true }] }] }, { cwd: "nope" });
    expect(failureOf(await run((await attemptContext(missing)).context)).message).toContain("does not exist");
  });

  it("is unreachable after the attempt's connection tries when it exits at once", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ message: "x" }] }] });
    const tries = join(setup.dir, "tries.txt");
    const profile = acpProfile({
      command: process.execPath,
      args: [
        "-e",
        "require('fs').appendFileSync(process.argv[1], 'x'); console.error('no API key'); process.exit(3)",
        tries,
      ],
    });
    const { context, io } = await attemptContext({ ...setup, profile });
    const error = failureOf(await run(context));
    expect(error).toMatchObject({ class: "acp_unreachable", retryable: false });
    expect(error.message).toContain("after 3 connection tries");
    expect(error.message).toContain("exited with code 3");
    expect(error.message).toContain("no API key");
    expect(readFileSync(tries, "utf8")).toBe("xxx");
    expect(io.of("warning").map((w) => w.code)).toEqual(["acp_reconnecting", "acp_reconnecting"]);
  });

  it("is unreachable when the handshake outlasts handshake_timeout_seconds on every try", async () => {
    const setup = doubleSetup(
      { handshakeDelayMs: 60_000, turns: [{ steps: [{ message: "x" }] }] },
      { handshake_timeout_seconds: 0.3 },
    );
    const twice = createAcpAttempt({ graceMs: 500, connectTries: 2 });
    const error = failureOf(await twice((await attemptContext(setup)).context));
    expect(error).toMatchObject({ class: "acp_unreachable", retryable: false });
    expect(error.message).toContain("did not answer initialize within 0.3 s");
    const pids = agentPids(setup.entries());
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });

  it("fails the start when the profile is not an ACP profile", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ message: "x" }] }] });
    const native = { ...setup.profile, kind: "native" as const, acp: undefined };
    expect(failureOf(await run((await attemptContext({ ...setup, profile: native })).context))).toMatchObject(
      {
        class: "acp_start_failed",
      },
    );
  });
});
