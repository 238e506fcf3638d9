import { createEngine, type RunDetails, type RunLogs, type RunSummary } from "@icode/workflow-engine";
import type { CommandContext } from "../command";
import type { RUNS_LIST, RUNS_LOGS, RUNS_SHOW, SESSIONS_LIST, ValuesOf } from "../command-tree";
import { EXIT } from "../exit-codes";
import type { CliIo } from "../io";
import type { CliErrorCode } from "../json/error";
import {
  HISTORY_JSON_VERSION,
  type RunLogsJson,
  type RunShowJson,
  type RunsListJson,
  type SessionsListJson,
} from "../json/history";
import { errorJsonLine } from "../render/error-json";
import { count, oneLine } from "../render/flatten";
import { renderTable } from "../render/table";
import { tracebackLines } from "../render/traceback";

/**
 * `icode sessions list`, `icode runs list|show|logs`: recorded sessions and runs, read through the engine's
 * history (never running workflow code, never changing a record).
 */

const KNOWN_CODES: readonly string[] = ["run_not_found", "session_not_found", "record_invalid", "invalid_id"];

const HINTS: Record<string, string> = {
  run_not_found: "list runs with: icode runs list",
  session_not_found: "list sessions with: icode sessions list",
};

/** `2025-12-01 23:40:12` (UTC) from an ISO time. */
function when(iso: string): string {
  return iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "");
}

function seconds(duration: number | null): string {
  return duration === null ? "-" : `${duration < 10 ? duration.toFixed(2) : duration.toFixed(1)} s`;
}

function outcomeOf(run: RunSummary): string {
  if (run.outcome === null) return run.state;
  return run.reason === "" ? run.outcome : `${run.outcome} (${run.reason})`;
}

const STATE_MARKS: Record<string, string> = { completed: "✓", failed: "✗", cancelled: "✗", skipped: "↷" };

function showText(details: RunDetails, cwd: string): string {
  const { run, inspection } = details;
  const lines = [
    `run ${run.run_id} · workflow ${oneLine(run.workflow_id)} · session ${run.session_id}`,
    `outcome: ${outcomeOf(run)}${details.node_id === "" ? "" : ` · node ${oneLine(details.node_id)}`}${details.error === "" ? "" : `: ${oneLine(details.error)}`}`,
    `started ${when(run.started_at)} UTC · took ${seconds(run.duration)}`,
  ];
  if (run.location !== null) lines.push(`folder: ${oneLine(run.location)}`);
  if (inspection.activations.length > 0) {
    lines.push("", "nodes:");
    const rows = inspection.activations.map((a) => [
      `${STATE_MARKS[a.state] ?? "…"} ${oneLine(a.loop_id === null ? a.node_id : `${a.node_id} (iteration ${a.iteration})`)}`,
      a.state,
      a.kind === "loop" || a.kind === "join" ? a.kind : count(a.attempts, "attempt"),
    ]);
    for (const row of renderTable(["", "", ""], rows).split("\n").slice(1, -1)) lines.push(`  ${row}`);
  }
  if (details.failures.length > 0) {
    lines.push("", "failures:");
    for (const f of details.failures) {
      const attempt = f.attempt === null ? "" : ` attempt ${f.attempt}`;
      const retried = f.final ? "" : " (retried)";
      lines.push(
        `  ${oneLine(f.node_id)}${attempt}${retried} (${f.error.class}): ${oneLine(f.error.message)}`,
      );
      for (const line of tracebackLines(f.error.traceback, cwd)) lines.push(`  ${line}`);
    }
  }
  if (details.warnings.length > 0) {
    lines.push("", "warnings:", ...details.warnings.map((w) => `  ${oneLine(w)}`));
  }
  return `${lines.join("\n")}\n`;
}

function logsText(logs: RunLogs): string {
  const lines: string[] = [];
  for (const c of logs.captured) {
    const phase = c.phase === "node" ? "" : ` ${c.phase}`;
    lines.push(`── ${oneLine(c.activation_id)} attempt ${c.attempt}${phase}: print() ──`);
    const text = c.stdout.text.endsWith("\n") ? c.stdout.text.slice(0, -1) : c.stdout.text;
    for (const line of text.split(/\r?\n/)) lines.push(`  | ${oneLine(line)}`);
    if (c.stdout.truncated) lines.push("  | … (output truncated)");
  }
  if (logs.emits.length > 0) {
    lines.push("── ctx.emit() ──");
    for (const e of logs.emits) lines.push(`  ${oneLine(e.activation_id)}: ${oneLine(e.text)}`);
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

type Action = (values: Record<string, unknown>, args: readonly string[], io: CliIo) => Promise<string>;

const ACTIONS: Record<string, Action> = {
  async "sessions list"(raw, _args, io) {
    const values = raw as ValuesOf<typeof SESSIONS_LIST>;
    const sessions = await createEngine({ cwd: io.cwd, env: io.env }).history.sessions();
    if (values.json) {
      const output: SessionsListJson = { version: HISTORY_JSON_VERSION, sessions };
      return `${JSON.stringify(output)}\n`;
    }
    const rows = sessions.map((s) =>
      [s.session_id, s.workflow_id, String(s.runs), `${when(s.updated_at)}`, s.workspace].map(oneLine),
    );
    return renderTable(["Session", "Workflow", "Runs", "Updated (UTC)", "Workspace"], rows);
  },
  async "runs list"(raw, _args, io) {
    const values = raw as ValuesOf<typeof RUNS_LIST>;
    const runs = await createEngine({ cwd: io.cwd, env: io.env }).history.runs(
      values.session === undefined ? {} : { sessionId: values.session },
    );
    if (values.json) {
      const output: RunsListJson = { version: HISTORY_JSON_VERSION, runs };
      return `${JSON.stringify(output)}\n`;
    }
    const rows = runs.map((r) =>
      [r.run_id, r.workflow_id, outcomeOf(r), when(r.started_at), seconds(r.duration), r.session_id].map(
        oneLine,
      ),
    );
    return renderTable(["Run", "Workflow", "Outcome", "Started (UTC)", "Duration", "Session"], rows);
  },
  async "runs show"(raw, args, io) {
    const values = raw as ValuesOf<typeof RUNS_SHOW>;
    const details = await createEngine({ cwd: io.cwd, env: io.env }).history.show(args[0]!);
    if (values.json) {
      const output: RunShowJson = { version: HISTORY_JSON_VERSION, ...details };
      return `${JSON.stringify(output)}\n`;
    }
    return showText(details, io.cwd);
  },
  async "runs logs"(raw, args, io) {
    const values = raw as ValuesOf<typeof RUNS_LOGS>;
    const logs = await createEngine({ cwd: io.cwd, env: io.env }).history.logs(
      args[0]!,
      values.node === undefined ? {} : { nodeId: values.node },
    );
    if (values.json) {
      const output: RunLogsJson = { version: HISTORY_JSON_VERSION, ...logs };
      return `${JSON.stringify(output)}\n`;
    }
    return logsText(logs);
  },
};

export const command = {
  async run({ command: parsed, io }: CommandContext): Promise<number> {
    const name = parsed.spec.path.join(" ");
    const action = ACTIONS[name];
    if (action === undefined) throw new Error(`no history action for '${name}'`);
    try {
      io.stdout.write(await action(parsed.values, parsed.args, io));
      return EXIT.ok;
    } catch (error) {
      const raw = (error as { code?: unknown }).code;
      if (typeof raw !== "string" || !KNOWN_CODES.includes(raw)) throw error;
      const code = raw as CliErrorCode;
      const message = error instanceof Error ? error.message : String(error);
      const hint = HINTS[code] ?? (error as { hint?: string }).hint ?? null;
      if (parsed.values["json"] === true) io.stdout.write(errorJsonLine({ code, message, hint }));
      io.stderr.write(
        `error: ${oneLine(message)} [${code}]\n${hint === null ? "" : `  help: ${oneLine(hint)}\n`}`,
      );
      return EXIT.failed;
    }
  },
};
