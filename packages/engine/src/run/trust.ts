import { sdkDigest } from "@icode/python-bridge";
import {
  compareTrust,
  environmentFingerprint,
  jsonDigest,
  readTrust,
  type TrustPart,
  type TrustRecord,
  writeTrust,
} from "@icode/workflow-discovery";
import type { EngineContext } from "../context";
import type { PreparedWorkflow } from "../validate/prepare";

export interface TrustCheck {
  /** Built-in workflows need no trust. */
  required: boolean;
  trusted: boolean;
  /** What changed since the saved confirmation; empty when there is none or nothing changed. */
  changed: TrustPart[];
  record: TrustRecord | null;
  state: { source_digest: string; definition_digest: string; environment_fingerprint: string };
}

/** The fingerprint of what a confirmation covers: source, built definition and environment (clarification 24). */
export async function trustState(prepared: PreparedWorkflow): Promise<TrustCheck["state"]> {
  const py = prepared.worker.hello.python;
  return {
    source_digest: prepared.sourceDigest,
    definition_digest: jsonDigest(prepared.definition),
    environment_fingerprint: environmentFingerprint({
      // The interpreter selected (declared, ICODE_PYTHON or python3 on PATH) as a path, links not followed,
      // so pointing the workflow at another interpreter, even a venv of the same Python, needs trust again.
      interpreter: `${prepared.interpreterKind}:${prepared.interpreterCommand}`,
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

export async function checkTrust(prepared: PreparedWorkflow, ctx: EngineContext): Promise<TrustCheck> {
  const state = await trustState(prepared);
  if (prepared.target.location === "builtin") {
    return { required: false, trusted: true, changed: [], record: null, state };
  }
  const record = await readTrust(ctx.chrysHome, prepared.target.entry, { uid: ctx.uid });
  const changed = record === null ? [] : compareTrust(record, state);
  return { required: true, trusted: record !== null && changed.length === 0, changed, record, state };
}

/** Saves the confirmation of the workflow as it is now; later runs need no `--trust` until it changes. */
export async function confirmTrust(prepared: PreparedWorkflow, ctx: EngineContext): Promise<TrustRecord> {
  const state = await trustState(prepared);
  return writeTrust(ctx.chrysHome, {
    path: prepared.target.entry,
    workflow_id: prepared.target.workflowId,
    layout: prepared.target.layout,
    title: prepared.definition.title,
    ...state,
  });
}
