import { readFileSync } from "node:fs";
import {
  checkTrust,
  confirmTrust,
  discoverWorkflows,
  encodedDefinition,
  readTarget,
  sha256Hex,
  type TrustCheck,
  targetOf,
} from "@icode/workflow-discovery";
import type { Diagnostic } from "@icode/workflow-errors";
import { profilesDigestOf } from "./agents/bindings";
import type { EngineContext } from "./context";
import { trustSubjectOf } from "./python/loader";
import { ReportBuilder } from "./validate/pipeline";
import { type BeforeLoad, prepareWorkflow } from "./validate/prepare";

/** What a front end's "Trust workflow" dialog shows: the source, the declared environment, the graph. */
export interface WorkflowPreview {
  id: string;
  source: "project" | "global" | "builtin";
  layout: "file" | "package";
  path: string;
  files: { path: string; size: number; text: string | null }[];
  environment: {
    requires_python: string | null;
    dependencies: string[];
    python: string | null;
    interpreter: string;
    version: string;
    platform: string;
  } | null;
  definition: {
    title: string;
    description: string | null;
    nodes: { id: string; kind: string }[];
    edges: number;
    outputs: string[];
  } | null;
  trust: { required: boolean; trusted: boolean; changed: TrustCheck["changed"] };
  /** Project agent profiles the workflow uses that start programs: trusting the workflow trusts them too. */
  agent_profiles: { name: string; file: string | null; programs: string[] }[];
  diagnostics: Diagnostic[];
  load_output: { text: string; truncated: boolean };
}

/**
 * Runs the preview stages for a workflow ID. With `onlyIfTrusted`, an untrusted workflow stops before its
 * code is loaded (`before` then holds what was learnt without running it).
 */
async function prepareById(
  id: string,
  ctx: EngineContext,
  options: { signal?: AbortSignal; onlyIfTrusted: boolean },
) {
  const found = await discoverWorkflows({
    cwd: ctx.cwd,
    chrysHome: ctx.chrysHome,
    builtinDir: ctx.builtinDir,
    uid: ctx.uid,
  });
  const workflow = found.workflows.find((w) => w.id === id);
  if (workflow === undefined)
    return { workflow: null, prepared: null, report: null, before: null, early: null };
  const report = new ReportBuilder(workflow.path);
  report.stage("resolve", []);
  const seen: { before: BeforeLoad | null; early: TrustCheck | null } = { before: null, early: null };
  const prepared = await prepareWorkflow(targetOf(workflow), ctx, report, {
    signal: options.signal,
    workdir: ctx.cwd,
    beforeLoad: async (info) => {
      seen.before = info;
      seen.early = await checkTrust(await trustSubjectOf(info), {
        chrysHome: ctx.chrysHome,
        uid: ctx.uid,
        definitionDigest: null,
      });
      return !options.onlyIfTrusted || seen.early.trusted;
    },
  });
  return { workflow, prepared, report, ...seen };
}

function textOf(path: string): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(path));
  } catch {
    return null;
  }
}

/**
 * Loads a workflow as a run would (its top-level code runs) and returns what a user reviews before trusting
 * it. `null` when no workflow has that ID.
 */
export async function previewWorkflow(
  id: string,
  ctx: EngineContext,
  signal?: AbortSignal,
): Promise<WorkflowPreview | null> {
  const { workflow, prepared, report, before, early } = await prepareById(id, ctx, {
    signal,
    onlyIfTrusted: true,
  });
  if (workflow === null || report === null) return null;
  try {
    const trust =
      prepared === null
        ? early
        : await checkTrust(await trustSubjectOf(prepared), {
            chrysHome: ctx.chrysHome,
            uid: ctx.uid,
            definitionDigest: encodedDefinition(prepared.definition).digest,
            profilesDigest: profilesDigestOf(prepared.agents?.trusted ?? [], sha256Hex),
          });
    const known = prepared ?? before;
    return {
      id: workflow.id,
      source: workflow.source,
      layout: workflow.layout,
      path: workflow.path,
      files: (prepared?.files ?? (await readTarget(targetOf(workflow), { uid: ctx.uid })).files).map((f) => ({
        path: f.relPath,
        size: f.size,
        text: textOf(f.absPath),
      })),
      environment:
        known === null
          ? null
          : {
              requires_python: known.metadata?.requires_python?.specifier ?? null,
              dependencies: known.metadata?.dependencies ?? [],
              python: known.declaredPython,
              interpreter: known.hello.python.executable,
              version: known.hello.python.version,
              platform: known.hello.python.platform,
            },
      definition:
        prepared === null
          ? null
          : {
              title: prepared.definition.title,
              description: prepared.definition.description,
              nodes: prepared.definition.nodes.map((n) => ({ id: n.id, kind: n.kind })),
              edges: prepared.definition.edges.length,
              outputs: prepared.definition.outputs,
            },
      trust:
        trust === null
          ? { required: workflow.source !== "builtin", trusted: false, changed: [] }
          : {
              required: trust.required,
              trusted: trust.trusted,
              changed: trust.changed,
            },
      agent_profiles: (prepared?.agents?.trusted ?? []).map((t) => ({
        name: t.name,
        file: t.file,
        programs: t.programs.map((p) => [p.command, ...p.args].join(" ")),
      })),
      diagnostics: report.report.diagnostics,
      load_output: report.report.output,
    };
  } finally {
    await prepared?.worker.close();
  }
}

/** Confirms trust in a workflow as it is now (what `--trust` does). Returns the diagnostics when it cannot load. */
export async function trustWorkflow(
  id: string,
  ctx: EngineContext,
  signal?: AbortSignal,
): Promise<{ ok: true; title: string } | { ok: false; diagnostics: Diagnostic[]; message: string }> {
  const { workflow, prepared, report } = await prepareById(id, ctx, { signal, onlyIfTrusted: false });
  if (workflow === null) return { ok: false, diagnostics: [], message: `no workflow with ID '${id}'` };
  if (prepared === null)
    return {
      ok: false,
      diagnostics: report?.report.diagnostics ?? [],
      message: `workflow '${id}' cannot be loaded`,
    };
  try {
    const record = await confirmTrust(await trustSubjectOf(prepared), {
      chrysHome: ctx.chrysHome,
      title: prepared.definition.title,
      definitionDigest: encodedDefinition(prepared.definition).digest,
      profilesDigest: profilesDigestOf(prepared.agents?.trusted ?? [], sha256Hex),
    });
    return { ok: true, title: record.title };
  } finally {
    await prepared.worker.close();
  }
}
