// First: zod settles how it parses before any schema is built (see ../zod-jitless).
import "../zod-jitless";
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  PIPELINE_STORE_CODES,
  type PipelineCatalog,
  type PipelineRun,
  pipelineCatalogFor,
  type StoredDefinition,
} from "@icode/workflow-engine";
import type { CommandContext } from "../command";
import { helpCommand, shortUsage } from "../command-line/help";
import type { ParsedCommand } from "../command-line/spec";
import {
  type PIPELINE_COPY,
  type PIPELINE_DELETE,
  type PIPELINE_EXPORT,
  type PIPELINE_IMPORT,
  type PIPELINE_INSPECT,
  type PIPELINE_LIST,
  type PIPELINE_PUBLISH,
  type PIPELINE_RUNS,
  type PIPELINE_SHOW,
  type PIPELINE_VALIDATE,
  TREE,
  type ValuesOf,
} from "../command-tree";
import { EXIT } from "../exit-codes";
import type { CliIo } from "../io";
import type { CliErrorCode, CliErrorJson } from "../json/error";
import {
  PIPELINE_JSON_VERSION,
  type PipelineChangeJson,
  type PipelineDeleteJson,
  type PipelineInspectJson,
  type PipelineListJson,
  type PipelineRunsJson,
  type PipelineShowJson,
  type PipelineSummaryJson,
} from "../json/pipeline";
import { errorJsonLine } from "../render/error-json";
import { count, oneLine } from "../render/flatten";
import { shellQuote } from "../render/shell-quote";
import { renderTable } from "../render/table";
import { renderDiagnostic, renderValidateText } from "../render/validate-text";
import { isUsageError, UsageError } from "../usage";

/**
 * `icode pipeline list|show|validate|import|export|publish|copy|delete`: the pipeline definitions through the
 * engine's `pipelines` namespace (`pipelineCatalogFor`, without the run machinery: this bundle loads SQLite and
 * zod, never the agents package, a model SDK or the ACP SDK).
 */

const STORE_CODES: ReadonlySet<string> = new Set(PIPELINE_STORE_CODES);

/** A hint in the CLI's words for the store's refusals, where the store's own hint names no command. */
function hintOf(code: string, id: string | null, hint: string | null): string | null {
  switch (code) {
    case "pipeline_definition_not_found":
      return "list the stored pipelines with: icode pipeline list";
    case "pipeline_run_not_found":
      return "list the pipeline runs with: icode pipeline runs";
    case "pipeline_definition_locked":
      return id === null ? hint : `copy it first: icode pipeline copy ${shellQuote(id)}`;
    case "pipeline_revision_conflict":
      return id === null
        ? hint
        : `someone changed it first; see its revision with: icode pipeline show ${shellQuote(id)}`;
    case "pipeline_definition_invalid":
      return hint ?? "check it with: icode pipeline validate FILE";
    default:
      return hint;
  }
}

interface Failure {
  code: CliErrorCode;
  message: string;
  hint: string | null;
  problems?: CliErrorJson["error"]["problems"];
}

function failureOf(error: unknown, id: string | null): Failure {
  const raw = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof raw !== "string" || !STORE_CODES.has(raw)) {
    return {
      code: "internal_error",
      message,
      hint: "this is a defect of icode; please report it with the command line and the stderr output",
    };
  }
  const hint = (error as { hint?: unknown }).hint;
  const diagnostics = (error as { diagnostics?: CliErrorJson["error"]["problems"] }).diagnostics;
  return {
    code: raw as CliErrorCode,
    message,
    hint: hintOf(raw, id, typeof hint === "string" ? hint : null),
    ...(diagnostics !== undefined && diagnostics.length > 0 ? { problems: diagnostics } : {}),
  };
}

function fail(io: CliIo, json: boolean, failure: Failure): number {
  let text = `icode: ${oneLine(failure.message)} [${failure.code}]\n`;
  for (const d of failure.problems ?? []) {
    if (d.severity !== "error") continue;
    // A stored definition's problems have no file: their place is the pointer.
    if (d.file !== null) text += `${renderDiagnostic(d, io.cwd).join("\n")}\n`;
    else
      text += `  at ${d.pointer === "" ? "the top" : (d.pointer ?? "the top")}: ${oneLine(d.message)} [${d.code}]\n`;
  }
  if (failure.hint !== null) text += `  help: ${oneLine(failure.hint)}\n`;
  io.stderr.write(text);
  if (json) io.stdout.write(errorJsonLine(failure));
  return EXIT.failed;
}

function summaryOf(d: StoredDefinition): PipelineSummaryJson {
  return {
    id: d.id,
    name: d.name,
    description: d.definition.description,
    status: d.status,
    revision: d.revision,
    source: d.source,
    locked: d.locked,
    node_count: d.definition.nodes.length,
    updated_at: d.updated_at,
    published_at: d.published_at,
  };
}

const line = (io: CliIo, value: unknown) => io.stdout.write(`${JSON.stringify(value)}\n`);

/** `--expected-revision N`: a whole number ≥ 1, else a usage error (exit 2). */
function expectedRevision(parsed: ParsedCommand, raw: string | undefined): { expected_revision?: number } {
  if (raw === undefined) return {};
  const value = /^[0-9]+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(
      `--expected-revision must be a whole number ≥ 1, found ${JSON.stringify(raw)}`,
      shortUsage(TREE, parsed.spec),
      helpCommand(TREE, parsed.spec.path),
    );
  }
  return { expected_revision: value };
}

function lifecycle(d: StoredDefinition): string {
  return `${d.status}, revision ${d.revision}${d.locked ? `, ${d.source}, locked` : ""}`;
}

type Handler = (parsed: ParsedCommand, io: CliIo, pipelines: PipelineCatalog) => Promise<number>;

const withoutDefinition = ({ definition: _snapshot, ...run }: PipelineRun) => run;

/** `2026-05-01 12:00:00` from an ISO time (UTC). */
const when = (iso: string | null) => (iso === null ? "-" : iso.replace("T", " ").replace(/\.\d+Z$|Z$/, ""));

const HANDLERS: Record<string, Handler> = {
  async runs(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_RUNS>;
    const runs = await pipelines.runs();
    if (values.json) {
      const out: PipelineRunsJson = { version: PIPELINE_JSON_VERSION, runs: runs.map(withoutDefinition) };
      line(io, out);
      return EXIT.ok;
    }
    if (runs.length === 0) {
      io.stdout.write("No pipeline runs yet. Start one with: icode pipeline run ID --input TEXT\n");
      return EXIT.ok;
    }
    const rows = runs.map((r) =>
      [
        r.run_id,
        r.definition_id,
        String(r.definition_revision),
        r.state,
        r.failure_policy,
        when(r.created_at),
      ].map(oneLine),
    );
    io.stdout.write(renderTable(["Run", "Pipeline", "Revision", "State", "Policy", "Created (UTC)"], rows));
    return EXIT.ok;
  },

  async inspect(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_INSPECT>;
    const inspection = await pipelines.inspect(parsed.args[0]!);
    if (values.json) {
      const out: PipelineInspectJson = {
        version: PIPELINE_JSON_VERSION,
        ...inspection,
        run: withoutDefinition(inspection.run),
      };
      line(io, out);
      return EXIT.ok;
    }
    const { run, nodes, lease } = inspection;
    const live = lease !== null && Date.parse(lease.expires_at) > Date.now();
    const lines = [
      `run ${run.run_id} · pipeline ${oneLine(run.definition_id)} (revision ${run.definition_revision}) · ${run.state}`,
      `failure policy ${run.failure_policy} · created ${when(run.created_at)} UTC · ended ${when(run.ended_at)}`,
      live
        ? `driven by ${oneLine(lease.owner)} until ${when(lease.expires_at)} UTC`
        : "not driven by any process",
      `folder: ${oneLine(inspection.run_dir)}`,
      "",
      "nodes:",
    ];
    const rows = nodes.map((n) =>
      [
        n.node_id,
        n.state,
        count(n.attempts, "attempt"),
        n.error !== null
          ? `${n.error.message} [${n.error.code}]`
          : typeof n.handoff?.summary === "string"
            ? n.handoff.summary
            : n.state === "waiting_approval"
              ? `approve with: icode pipeline approve ${run.run_id} ${shellQuote(n.node_id)}`
              : "-",
      ].map(oneLine),
    );
    for (const row of renderTable(["Node", "State", "Attempts", "Summary or error"], rows)
      .trimEnd()
      .split("\n")) {
      lines.push(`  ${row}`);
    }
    io.stdout.write(`${lines.join("\n")}\n`);
    return EXIT.ok;
  },

  async list(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_LIST>;
    const status = values.status as StoredDefinition["status"] | undefined;
    const definitions = await pipelines.listDefinitions(status === undefined ? {} : { status });
    if (values.json) {
      const out: PipelineListJson = {
        version: PIPELINE_JSON_VERSION,
        definitions: definitions.map(summaryOf),
      };
      line(io, out);
      return EXIT.ok;
    }
    if (definitions.length === 0) {
      io.stdout.write(
        status === undefined
          ? "No pipelines are stored.\n"
          : `No ${status} pipelines. See all with: icode pipeline list\n`,
      );
      return EXIT.ok;
    }
    const rows = definitions.map((d) =>
      [
        d.id,
        d.status,
        String(d.revision),
        d.locked ? `${d.source} (locked)` : d.source,
        String(d.definition.nodes.length),
        d.name,
      ].map(oneLine),
    );
    io.stdout.write(renderTable(["ID", "Status", "Revision", "Source", "Nodes", "Name"], rows));
    return EXIT.ok;
  },

  async show(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_SHOW>;
    const d = await pipelines.getDefinition(parsed.args[0]!);
    if (values.json) {
      const out: PipelineShowJson = { version: PIPELINE_JSON_VERSION, definition: d };
      line(io, out);
      return EXIT.ok;
    }
    const def = d.definition;
    const lines = [
      `pipeline ${oneLine(d.id)} · ${oneLine(d.name)}`,
      `${lifecycle(d)} · failure policy ${def.failure_policy} · auto-supervise ${def.auto_supervise ? "on" : "off"}`,
      `updated ${d.updated_at}${d.published_at === null ? " · never published" : ` · published ${d.published_at}`}`,
    ];
    if (def.description !== "") lines.push(oneLine(def.description));
    lines.push("", `${count(def.nodes.length, "node")}:`);
    const rows = def.nodes.map((n) =>
      [
        n.id,
        n.name,
        n.depends_on.length === 0 ? "-" : n.depends_on.join(", "),
        n.profile_id ?? "-",
        n.runtime,
        n.requires_approval ? "approval" : "-",
      ].map(oneLine),
    );
    for (const row of renderTable(["ID", "Name", "Depends on", "Profile", "Runtime", "Gate"], rows)
      .trimEnd()
      .split("\n")) {
      lines.push(`  ${row}`);
    }
    if (d.locked) lines.push("", `locked: copy it to change it: icode pipeline copy ${shellQuote(d.id)}`);
    else if (d.status === "draft")
      lines.push("", `draft: publish it to run it: icode pipeline publish ${shellQuote(d.id)}`);
    io.stdout.write(`${lines.join("\n")}\n`);
    return EXIT.ok;
  },

  async validate(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_VALIDATE>;
    const report = await pipelines.validate({ file: parsed.args[0]! });
    if (values.json) line(io, report);
    else if (!(values.quiet && report.status === "pass")) io.stdout.write(renderValidateText(report, io.cwd));
    return report.status === "pass" ? EXIT.ok : EXIT.failed;
  },

  async import(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_IMPORT>;
    const file = parsed.args[0]!;
    const d = await pipelines.import({ file }, values.id === undefined ? {} : { id: values.id });
    if (values.json) {
      const out: PipelineChangeJson = { version: PIPELINE_JSON_VERSION, definition: summaryOf(d) };
      line(io, out);
    } else {
      io.stdout.write(
        `imported ${oneLine(file)} as ${oneLine(d.id)} (${lifecycle(d)})\n` +
          `  next: icode pipeline publish ${shellQuote(d.id)}\n`,
      );
    }
    return EXIT.ok;
  },

  async export(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_EXPORT>;
    const text = await pipelines.export(parsed.args[0]!);
    if (values.out === undefined || values.out === "-") {
      io.stdout.write(text);
      return EXIT.ok;
    }
    const file = resolve(io.cwd, values.out);
    try {
      writeFileSync(file, text);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return fail(io, false, {
        code: "output_write_failed",
        message: `cannot write the pipeline to ${file}: ${error instanceof Error ? error.message : String(error)}${code === undefined ? "" : ` (${code})`}`,
        hint: "name a file in a folder you can write, or '-' for standard output",
      });
    }
    return EXIT.ok;
  },

  async publish(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_PUBLISH>;
    const id = parsed.args[0]!;
    const before = await pipelines.getDefinition(id).catch(() => null);
    const d = await pipelines.publish(id, expectedRevision(parsed, values["expected-revision"]));
    if (values.json) {
      const out: PipelineChangeJson = { version: PIPELINE_JSON_VERSION, definition: summaryOf(d) };
      line(io, out);
    } else if (before !== null && before.revision === d.revision) {
      io.stdout.write(`${oneLine(d.id)} is already published (revision ${d.revision}); nothing changed\n`);
    } else {
      io.stdout.write(`published ${oneLine(d.id)} (revision ${d.revision})\n`);
    }
    return EXIT.ok;
  },

  async copy(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_COPY>;
    const from = parsed.args[0]!;
    const d = await pipelines.copy(from, {
      ...(values.id === undefined ? {} : { id: values.id }),
      ...(values.name === undefined ? {} : { name: values.name }),
    });
    if (values.json) {
      const out: PipelineChangeJson = { version: PIPELINE_JSON_VERSION, definition: summaryOf(d) };
      line(io, out);
    } else {
      io.stdout.write(
        `copied ${oneLine(from)} to ${oneLine(d.id)} (${lifecycle(d)})\n` +
          `  next: icode pipeline publish ${shellQuote(d.id)}\n`,
      );
    }
    return EXIT.ok;
  },

  async delete(parsed, io, pipelines) {
    const values = parsed.values as ValuesOf<typeof PIPELINE_DELETE>;
    const id = parsed.args[0]!;
    await pipelines.delete(id, expectedRevision(parsed, values["expected-revision"]));
    if (values.json) {
      const out: PipelineDeleteJson = { version: PIPELINE_JSON_VERSION, id, deleted: true };
      line(io, out);
    } else io.stdout.write(`deleted ${oneLine(id)}\n`);
    return EXIT.ok;
  },
};

export const command = {
  async run({ command: parsed, io }: CommandContext): Promise<number> {
    const handler = HANDLERS[parsed.spec.path[1]!];
    if (handler === undefined) throw new Error(`no pipeline command ${parsed.spec.path.join(" ")}`);
    const json = parsed.values.json === true;
    const pipelines = pipelineCatalogFor({ cwd: io.cwd, env: io.env });
    try {
      return await handler(parsed, io, pipelines);
    } catch (error) {
      if (isUsageError(error)) throw error;
      return fail(io, json, failureOf(error, parsed.args[0] ?? null));
    } finally {
      await pipelines.close();
    }
  },
};
