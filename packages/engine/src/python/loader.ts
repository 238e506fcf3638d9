import { readFileSync } from "node:fs";
import { dirname, sep } from "node:path";
import { pythonExecutors, sdkDigest } from "@icode/python-bridge";
import {
  type DiscoveredWorkflow,
  discoverWorkflows,
  environmentFingerprint,
  readTarget,
  targetOf,
  type TrustSubject,
} from "@icode/workflow-discovery";
import type { EngineContext } from "../context";
import type { FoundWorkflow, PreparedWorkflow, WorkflowLoader } from "../loader";

import type { Refusal } from "../run/report";
import { ReportBuilder } from "../validate/pipeline";
import { type BeforeLoad, type PreparedPython, prepareWorkflow } from "../validate/prepare";

/** A found Python workflow: what discovery knows of it. */
interface FoundPython extends FoundWorkflow {
  readonly discovered: DiscoveredWorkflow;
}

/**
 * The loader of Python-authored workflows: discovery by ID, then the validate stages with a warm worker kept
 * for the run (trust is asked before any workflow code runs), the bridge's executors on that worker.
 */
export function pythonLoader(ctx: EngineContext): WorkflowLoader {
  return {
    kind: "python",
    async find(workflowId, cwd): Promise<FoundPython | Refusal> {
      const found = await discoverWorkflows({
        cwd,
        chrysHome: ctx.chrysHome,
        builtinDir: ctx.builtinDir,
        uid: ctx.uid,
      });
      const workflow = found.workflows.find((w) => w.id === workflowId);
      if (workflow !== undefined) {
        return {
          id: workflow.id,
          path: workflow.path,
          source: workflow.source,
          workspace: workspaceOf(workflow, cwd),
          discovered: workflow,
        };
      }
      const skipped = found.skipped.filter((s) => s.id === workflowId);
      if (skipped.length === 0) return { code: "workflow_not_found", message: `no workflow with ID '${workflowId}'` };
      // One reason, one code, one hint: the first candidate's (the one that would have run).
      const reason = skipped[0]!.reason;
      return {
        code: "workflow_unreadable",
        message: `workflow '${workflowId}' cannot be read: ${skipped.map((s) => s.reason.message).join("; ")}`,
        hint: reason.hint,
        diagnostics: skipped.map((s) => s.reason),
      };
    },

    async prepare(found, options): Promise<PreparedWorkflow | Refusal> {
      const { discovered } = found as FoundPython;
      const target = targetOf(discovered);
      const report = new ReportBuilder(discovered.path);
      report.stage("resolve", []);
      let refusal: Refusal | null = null;
      const prepared = await prepareWorkflow(target, ctx, report, {
        signal: options.signal,
        workdir: options.workspace,
        loadTimeoutMs: options.loadTimeoutMs,
        workflowDefaultModel: options.workflowDefaultModel,
        beforeLoad: async (info) => {
          refusal = await options.trustGate(await trustSubjectOf(info));
          return refusal === null;
        },
      });
      if (refusal !== null) return refusal;
      const loadOutput = report.report.output;
      if (prepared === null) {
        const errors = report.report.diagnostics.filter((d) => d.severity === "error");
        return {
          code: "validation_failed",
          message: `workflow '${found.id}' cannot be loaded: ${errors[0]?.message ?? "validation failed"}`,
          diagnostics: report.report.diagnostics,
          loadOutput,
        };
      }
      return preparedPython(ctx, prepared, await trustSubjectOf(prepared), loadOutput, report.report.diagnostics);
    },
  };
}

/** A loaded Python workflow as the run path sees it. */
function preparedPython(
  ctx: EngineContext,
  prepared: PreparedPython,
  trust: TrustSubject,
  loadOutput: PreparedWorkflow["loadOutput"],
  diagnostics: PreparedWorkflow["diagnostics"],
): PreparedWorkflow {
  const py = prepared.hello.python;
  const worker = prepared.worker;
  return {
    definition: prepared.definition,
    trust,
    environment: {
      interpreter: prepared.declaredPython,
      interpreter_kind: prepared.interpreterKind,
      executable: py.executable,
      implementation: py.implementation,
      version: py.version,
      platform: py.platform,
      machine: py.machine,
      libc: py.libc,
      source_digest: prepared.sourceDigest,
      environment_fingerprint: trust.environmentFingerprint,
    },
    source:
      prepared.target.layout === "file"
        ? { path: prepared.target.entry }
        : { files: prepared.files.map((f) => ({ path: f.relPath, content: readFileSync(f.absPath) })) },
    loadOutput,
    diagnostics,
    agents: prepared.agents,
    async unchanged() {
      const reread = await readTarget(prepared.target, { uid: ctx.uid });
      return reread.sourceDigest === prepared.sourceDigest;
    },
    executors: (io) =>
      pythonExecutors(worker, {
        beforeSend: io.beforeSend,
        onOutput: (output) =>
          io.nodeDiagnostics({
            node_id: output.nodeId,
            activation_id: output.activationId,
            attempt: output.attempt,
            phases: [{ phase: output.phase, stdout: output.stdout }],
          }),
      }),
    native: () => worker.native(),
    close: () => worker.close(),
  };
}

/** What trust covers of a Python workflow: its entry, source digest and environment fingerprint. */
export async function trustSubjectOf(info: BeforeLoad): Promise<TrustSubject> {
  const py = info.hello.python;
  return {
    entry: info.target.entry,
    workflowId: info.target.workflowId,
    layout: info.target.layout,
    builtin: info.target.location === "builtin",
    sourceDigest: info.sourceDigest,
    environmentFingerprint: environmentFingerprint({
      // The interpreter selected (declared, ICODE_PYTHON or python3 on PATH) as a path, links not followed,
      // so pointing the workflow at another interpreter, even a venv of the same Python, needs trust again.
      interpreter: `${info.interpreterKind}:${info.interpreterCommand}`,
      interpreter_path: py.executable,
      implementation: py.implementation,
      python_version: py.version,
      platform: py.platform,
      machine: py.machine,
      libc: py.libc === "" ? null : py.libc,
      sdk_digest: await sdkDigest(),
    }),
  };
}

/**
 * The working directory of a new session: a project workflow runs in its project (the folder holding
 * `.chrys/workflows/`); built-in and global workflows in the current directory.
 */
function workspaceOf(workflow: DiscoveredWorkflow, cwd: string): string {
  if (workflow.source !== "project") return cwd;
  const marker = `${sep}.chrys${sep}workflows${sep}`;
  const at = workflow.path.lastIndexOf(marker);
  return at === -1 ? dirname(workflow.path) : workflow.path.slice(0, at);
}
