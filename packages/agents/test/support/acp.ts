import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  type AcpDoubleScriptInput,
  AGENT_BIN,
  type AgentLogEntry,
  agentCommand,
  readAgentLog,
  writeAgentScript,
} from "@icode/acp-agent-double";
import { type AgentProfile, AgentProfileFileSchema, loadAgentConfig } from "@icode/agent-profiles";
import type { ApprovalMode } from "@icode/agent-profiles/policy";
import { tmpDir } from "@icode/test-utils";
import type { AgentActivity, AttemptIO, AttemptResult } from "@icode/workflow-scheduler";
import type { AcpAttemptContext, ApprovalCallback } from "../../src/attempt";
import type { AgentTranscript } from "../../src/transcript";

export function requireDoubleBuilt(): void {
  if (!existsSync(AGENT_BIN)) {
    throw new Error(
      `${AGENT_BIN} is missing; build the doubles first: npx -y pnpm@10.34.9 exec turbo run build --filter=./internal/*`,
    );
  }
}

type AcpInput =
  NonNullable<Parameters<typeof AgentProfileFileSchema.parse>[0]> extends infer T
    ? T extends { acp?: infer A }
      ? Exclude<A, null | undefined>
      : never
    : never;

/** An ACP profile as the loader makes it (sub-agent-only, every other section at its default). */
export function acpProfile(acp: Record<string, unknown>, name = "Double"): AgentProfile {
  const {
    id: _id,
    metadata: _m,
    ...rest
  } = AgentProfileFileSchema.parse({
    name,
    sub_agent_only: true,
    acp: acp as AcpInput,
  });
  return { ...rest, id: "acp0double01", source: "user", file: null, digest: null, kind: "acp" };
}

/** A workspace, a log file, and the double started with `script` (its log through `acp.env`). */
export function doubleSetup(script: AcpDoubleScriptInput, acp: Record<string, unknown> = {}) {
  requireDoubleBuilt();
  const dir = tmpDir("acp-attempt-");
  const workspace = join(dir, "work");
  mkdirSync(workspace, { mode: 0o755 });
  const log = join(dir, "agent.jsonl");
  const file = writeAgentScript(join(dir, "script.json"), script);
  const { command, args } = agentCommand({ script: file });
  const profile = acpProfile({
    command,
    args,
    ...acp,
    env: { ACP_DOUBLE_LOG: log, ...((acp["env"] as Record<string, string> | undefined) ?? {}) },
  });
  return { dir, workspace, log, profile, entries: (): AgentLogEntry[] => readAgentLog(log) };
}

/** The engine side of one attempt, for tests: records activities, aborts with a reason on demand. */
export class TestIO implements AttemptIO {
  readonly activities: AgentActivity[] = [];
  private readonly controller = new AbortController();
  private readonly listeners: ((reason: string) => void)[] = [];
  private settled = false;
  /** Called on each activity (after it is recorded). */
  onActivity: (activity: AgentActivity, io: TestIO) => void = () => {};

  get signal(): AbortSignal {
    return this.controller.signal;
  }
  onAbort(listener: (reason: string) => void): void {
    if (this.controller.signal.aborted) listener(String(this.controller.signal.reason));
    else this.listeners.push(listener);
  }
  abort(reason: string): void {
    if (this.settled || this.controller.signal.aborted) return;
    this.controller.abort(reason);
    for (const listener of this.listeners) listener(reason);
  }
  settle(): void {
    this.settled = true;
  }
  emit(): void {}
  ask(): Promise<never> {
    throw new Error("an ACP attempt never asks questions");
  }
  activity(activity: AgentActivity): void {
    this.activities.push(activity);
    this.onActivity(activity, this);
  }
  conditionsStarted(): void {}

  of<K extends AgentActivity["kind"]>(kind: K): Extract<AgentActivity, { kind: K }>[] {
    return this.activities.filter((a): a is Extract<AgentActivity, { kind: K }> => a.kind === kind);
  }
  text(): string {
    return this.of("text")
      .map((a) => a.text)
      .join("");
  }
}

export interface AttemptSetup {
  profile: AgentProfile;
  workspace: string;
  input?: string;
  suffix?: string | null;
  modelId?: string | null;
  env?: Record<string, string | undefined>;
  approvalMode?: ApprovalMode;
  approve?: ApprovalCallback;
  attempt?: number;
  io?: TestIO;
}

/** A real attempt context: a loaded (empty) configuration, the node, the input, the transcript sink. */
export async function attemptContext(setup: AttemptSetup) {
  const home = tmpDir("acp-home-");
  const env = setup.env ?? { PATH: process.env["PATH"], HOME: home };
  const config = await loadAgentConfig({ chrysHome: home, cwd: setup.workspace, env: {}, homeDir: home });
  const io = setup.io ?? new TestIO();
  const transcripts: AgentTranscript[] = [];
  const context: AcpAttemptContext = {
    request: {
      runId: "run-1",
      activationId: "review#1",
      iteration: 1,
      attempt: setup.attempt ?? 1,
      input: { text: setup.input ?? "Review the change.", data: null },
      timeoutMs: null,
      continueFrom: null,
      node: {
        id: "review",
        kind: "agent",
        scope: null,
        site: null,
        profile: setup.profile.name,
        model: null,
        instructions_suffix: setup.suffix ?? null,
        timeout: null,
        retry: null,
      },
    },
    io,
    profile: setup.profile,
    config,
    workspace: setup.workspace,
    env,
    chrysHome: home,
    homeDir: home,
    approvalMode: setup.approvalMode ?? "bypass",
    ...(setup.approve ? { approve: setup.approve } : {}),
    transcript: (t) => transcripts.push(t),
    modelId: setup.modelId ?? null,
  };
  return { context, io, transcripts };
}

export function failureOf(result: AttemptResult) {
  if (result.status !== "failed") throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result.error;
}

/** True while a process with this id exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function agentPids(entries: readonly AgentLogEntry[]): number[] {
  return entries.filter((e) => e.event === "start").map((e) => e.pid);
}
