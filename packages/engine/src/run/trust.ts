import { sdkDigest } from "@icode/python-bridge";
import {
  canonicalJson,
  compareTrust,
  environmentFingerprint,
  readTrust,
  sha256Hex,
  type TrustPart,
  type TrustRecord,
  writeTrust,
} from "@icode/workflow-discovery";
import type { Definition } from "@icode/workflow-graph";
import type { EngineContext } from "../context";
import type { BeforeLoad } from "../validate/prepare";

/** What a trust confirmation is about: known before the workflow's code runs, except its definition. */
export type TrustSubject = Pick<
  BeforeLoad,
  "target" | "sourceDigest" | "interpreterKind" | "interpreterCommand" | "declaredPython" | "hello"
>;

const encoded = new WeakMap<Definition, { json: string; digest: string }>();

/**
 * A built definition's canonical JSON and its digest, computed once per definition object: a run compares
 * the digest with the trust record, may save it, records it in the run header and writes the JSON as the
 * run's `definition.json`; for a 10,000-node workflow each encoding costs tens of milliseconds.
 * Definitions are never changed after they are built.
 */
export function encodedDefinition(definition: Definition): { json: string; digest: string } {
  let found = encoded.get(definition);
  if (found === undefined) {
    const json = canonicalJson(definition);
    found = { json, digest: sha256Hex(json) };
    encoded.set(definition, found);
  }
  return found;
}

/** The digest of a built definition (see `encodedDefinition`). */
export function definitionDigest(definition: Definition): string {
  return encodedDefinition(definition).digest;
}

/** The environment fingerprint of clarification 24 for the interpreter a workflow runs in. */
export async function environmentOf(subject: TrustSubject): Promise<string> {
  const py = subject.hello.python;
  return environmentFingerprint({
    // The interpreter selected (declared, ICODE_PYTHON or python3 on PATH) as a path, links not followed,
    // so pointing the workflow at another interpreter, even a venv of the same Python, needs trust again.
    interpreter: `${subject.interpreterKind}:${subject.interpreterCommand}`,
    interpreter_path: py.executable,
    implementation: py.implementation,
    python_version: py.version,
    platform: py.platform,
    machine: py.machine,
    libc: py.libc === "" ? null : py.libc,
    sdk_digest: await sdkDigest(),
  });
}

export interface TrustCheck {
  /** Built-in workflows need no trust. */
  required: boolean;
  /** A confirmation exists and matches every part compared. */
  trusted: boolean;
  /** What changed since the saved confirmation; empty when there is none or nothing changed. */
  changed: TrustPart[];
  record: TrustRecord | null;
}

/**
 * Compares the saved confirmation with the workflow as it is: source and environment always (before any
 * workflow code runs), the built definition once it is known.
 */
export async function checkTrust(
  subject: TrustSubject,
  ctx: EngineContext,
  definition: Definition | null,
): Promise<TrustCheck> {
  if (subject.target.location === "builtin")
    return { required: false, trusted: true, changed: [], record: null };
  const record = await readTrust(ctx.chrysHome, subject.target.entry, { uid: ctx.uid });
  if (record === null) return { required: true, trusted: false, changed: [], record };
  const changed = compareTrust(record, {
    source_digest: subject.sourceDigest,
    environment_fingerprint: await environmentOf(subject),
    definition_digest: definition === null ? record.definition_digest : definitionDigest(definition),
  });
  return { required: true, trusted: changed.length === 0, changed, record };
}

/** Saves the confirmation of the workflow as it is now; later runs need no `--trust` until it changes. */
export async function confirmTrust(
  subject: TrustSubject,
  definition: Definition,
  ctx: EngineContext,
): Promise<TrustRecord> {
  return writeTrust(ctx.chrysHome, {
    path: subject.target.entry,
    workflow_id: subject.target.workflowId,
    layout: subject.target.layout,
    title: definition.title,
    source_digest: subject.sourceDigest,
    definition_digest: definitionDigest(definition),
    environment_fingerprint: await environmentOf(subject),
  });
}

/** The message of a refusal for lack of trust. */
export function untrustedMessage(id: string, path: string, check: TrustCheck): string {
  return check.record === null
    ? `workflow '${id}' (${path}) is not trusted yet`
    : `workflow '${id}' changed since it was trusted (${check.changed.join(", ")})`;
}
