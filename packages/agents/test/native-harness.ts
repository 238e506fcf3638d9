/*
 * Real parts for the native loop's tests: a configuration directory and a workspace on disk loaded by the
 * real `loadAgentConfig`, the provider double, tools of our own (they really run and leave traces), and the
 * scheduler's side of an attempt (`AttemptIO`) as a plain recorder with a real AbortController.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentConfig, loadAgentConfig } from "@icode/agent-profiles";
import type { ProviderDouble } from "@icode/model-provider-double";
import { tmpDir, writeTree } from "@icode/test-utils";
import type { AgentNode } from "@icode/workflow-graph";
import {
  type AgentActivity,
  AgentActivitySchema,
  type AgentAttemptRequest,
  type AttemptIO,
  type AttemptResult,
} from "@icode/workflow-scheduler";
import type { ApprovalCallback, NativeAttemptContext } from "../src/attempt";
import type { NativeRunner } from "../src/native/runner";
import type { AgentTool, Toolset, ToolsetOptions } from "../src/tool";
import { type AgentTranscript, AgentTranscriptSchema } from "../src/transcript";

export const WIRES = ["openai", "anthropic"] as const;
export type TestWire = (typeof WIRES)[number];
export const MODES = [
  { name: "plain", stream: false },
  { name: "streaming", stream: true },
] as const;

export interface Setup {
  home: string;
  workspace: string;
  config: AgentConfig;
}

/** A model profile file for a route of the double (its `model_id`), in the wire's provider. */
export function modelYaml(
  provider: ProviderDouble,
  wire: TestWire,
  route: string,
  extra: Record<string, unknown> = {},
): string {
  const fields: Record<string, unknown> = {
    name: `double ${route}`,
    provider: wire === "openai" ? "openai" : "anthropic",
    model_id: route,
    base_url: wire === "openai" ? provider.openaiBaseUrl : provider.url,
    api_key: "sk-test-key",
    max_context_tokens: 100000,
    max_output_tokens: 1000,
    ...extra,
  };
  return `${Object.entries(fields)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join("\n")}\n`;
}

/** Writes `models/<id>.yaml`, project agent profiles and workspace files, and loads them for real. */
export async function setup(files: {
  models: Record<string, string>;
  agents?: Record<string, string>;
  workspace?: Record<string, string>;
  settings?: string;
  env?: Record<string, string>;
}): Promise<Setup> {
  const home = tmpDir("icode-native-home-");
  const workspace = tmpDir("icode-native-ws-");
  writeTree(
    home,
    Object.fromEntries(Object.entries(files.models).map(([id, yaml]) => [`models/${id}.yaml`, yaml])),
  );
  if (files.settings !== undefined) writeFileSync(join(home, "settings.yaml"), files.settings);
  writeTree(
    workspace,
    Object.fromEntries(
      Object.entries(files.agents ?? {}).map(([name, yaml]) => [`.chrys/agents/${name}.yaml`, yaml]),
    ),
  );
  writeTree(workspace, files.workspace ?? {});
  const config = await loadAgentConfig({
    chrysHome: home,
    cwd: workspace,
    env: files.env ?? {},
    homeDir: home,
    normalize: false,
  });
  const broken = config.problems.filter((p) => p.severity === "error");
  if (broken.length > 0) throw new Error(`test configuration does not load: ${JSON.stringify(broken)}`);
  return { home, workspace, config };
}

/** The scheduler's side of one attempt: records activities; `abort(reason)` is the timeout / cancel. */
export class RecordingIO implements AttemptIO {
  readonly activities: AgentActivity[] = [];
  readonly controller = new AbortController();
  readonly signal: AbortSignal = this.controller.signal;
  onActivity: ((a: AgentActivity) => void) | null = null;

  onAbort(listener: (reason: string) => void): void {
    this.signal.addEventListener("abort", () => listener(String(this.signal.reason)), { once: true });
  }
  emit(): void {}
  async ask() {
    return { status: "unavailable" as const };
  }
  activity(activity: AgentActivity): void {
    // every activity must be what the scheduler's schema (and so events.jsonl) accepts
    AgentActivitySchema.parse(activity);
    this.activities.push(activity);
    this.onActivity?.(activity);
  }
  conditionsStarted(): void {}
  abort(reason: string): void {
    this.controller.abort(reason);
  }
  of<K extends AgentActivity["kind"]>(kind: K): Extract<AgentActivity, { kind: K }>[] {
    return this.activities.filter((a): a is Extract<AgentActivity, { kind: K }> => a.kind === kind);
  }
  get text(): string {
    return this.of("text")
      .map((a) => a.text)
      .join("");
  }
}

export function agentNode(overrides: Partial<AgentNode> = {}): AgentNode {
  return {
    id: "review",
    scope: null,
    site: null,
    kind: "agent",
    profile: "Tester",
    model: null,
    instructions_suffix: null,
    timeout: null,
    retry: null,
    ...overrides,
  } as AgentNode;
}

export interface Attempt {
  result: AttemptResult;
  io: RecordingIO;
  transcripts: AgentTranscript[];
}

export interface AttemptOptions {
  profile?: string;
  model: string;
  input?: string;
  attempt?: number;
  continueFrom?: number | null;
  node?: Partial<AgentNode>;
  approvalMode?: "bypass" | "manual" | "auto";
  approve?: ApprovalCallback;
  env?: Record<string, string>;
  io?: RecordingIO;
  runId?: string;
  activationId?: string;
}

/** Runs one attempt through the runner, the way the engine's executor will. */
export async function attempt(runner: NativeRunner, s: Setup, options: AttemptOptions): Promise<Attempt> {
  const profile = s.config.profiles.find((p) => p.name === (options.profile ?? "Tester"));
  const model = s.config.models.find((m) => m.id === options.model);
  if (profile === undefined || model === undefined) throw new Error("test profile or model not loaded");
  const io = options.io ?? new RecordingIO();
  const transcripts: AgentTranscript[] = [];
  const request: AgentAttemptRequest = {
    runId: options.runId ?? "run-1",
    activationId: options.activationId ?? "review#1",
    iteration: 1,
    attempt: options.attempt ?? 1,
    input: { text: options.input ?? "Review the change.", data: null },
    timeoutMs: null,
    node: agentNode(options.node),
    continueFrom: options.continueFrom ?? null,
  };
  const context: NativeAttemptContext = {
    request,
    io,
    profile,
    config: s.config,
    model,
    workspace: s.workspace,
    env: options.env ?? {},
    chrysHome: s.home,
    homeDir: s.home,
    approvalMode: options.approvalMode ?? "bypass",
    ...(options.approve === undefined ? {} : { approve: options.approve }),
    transcript: (t) => transcripts.push(AgentTranscriptSchema.parse(t)),
  };
  const result = await runner.run(context);
  return { result, io, transcripts };
}

/** A toolset builder offering `tools`, recording the options of every build. */
export function toolsetOf(tools: AgentTool[], extra: Partial<Omit<Toolset, "tools" | "close">> = {}) {
  const builds: ToolsetOptions[] = [];
  let closed = 0;
  const build = async (options: ToolsetOptions): Promise<Toolset> => {
    builds.push(options);
    return {
      tools,
      instructions: extra.instructions ?? [],
      warnings: extra.warnings ?? [],
      close: async () => {
        closed += 1;
      },
    };
  };
  return { build, builds, closed: () => closed };
}

/**
 * A real tool: appends its `note` argument to `notes.txt` in the working directory and counts its runs,
 * so a test can see whether (and how often) it ran.
 */
export function noteTool(overrides: Partial<AgentTool> = {}) {
  const runs: unknown[] = [];
  const t: AgentTool = {
    name: "write_note",
    kind: "filesystem.write",
    description: "Append a note to notes.txt",
    inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
    activityKind: "edit",
    title: (input) => `write_note ${(input as { note?: string }).note ?? ""}`,
    target: (_input, context) => ({
      type: "write",
      path: join(context.cwd, "notes.txt"),
      insideGitRepository: false,
    }),
    async execute(input, context) {
      runs.push(input);
      const note = (input as { note?: unknown }).note;
      if (typeof note !== "string") return { ok: false, error: "note must be a string" };
      const { appendFile } = await import("node:fs/promises");
      await appendFile(join(context.cwd, "notes.txt"), `${note}\n`);
      return { ok: true, output: `wrote "${note}"` };
    },
    ...overrides,
  };
  return { tool: t, runs };
}

/** A tool that waits until its signal aborts (a long-running tool cut by a timeout). */
export function waitTool(started: () => void): AgentTool {
  return {
    name: "wait_forever",
    kind: "sleep",
    description: "Wait",
    inputSchema: { type: "object", properties: {} },
    activityKind: "other",
    title: () => "wait_forever",
    execute: (_input, context) =>
      new Promise((resolve) => {
        started();
        context.signal.addEventListener("abort", () => resolve({ ok: false, error: "aborted" }), {
          once: true,
        });
      }),
  };
}

/** A profile YAML with the given extra lines. */
export function profileYaml(name: string, lines: string[] = []): string {
  return [`name: ${name}`, ...lines].join("\n") + "\n";
}

/** Retries that do not wait (the delays asked for are still recorded in `request_retry`). */
export const noWait = async (): Promise<void> => undefined;
