import { canonicalJson } from "@icode/canonical-json";
import { sha256Hex } from "../digest";
import type { Layout } from "../schema";
import { compareTrust } from "./compare";
import type { TrustRecord } from "./record";
import type { TrustPart } from "./schema";
import { readTrust, writeTrust } from "./store";

/**
 * What a trust confirmation is about: the workflow's entry (the record's key), its source digest and its
 * environment fingerprint, known before any of its code runs; its built definition once it has loaded.
 */
export interface TrustSubject {
  readonly entry: string;
  readonly workflowId: string;
  readonly layout: Layout;
  /** Built-in workflows ship with the engine and need no trust. */
  readonly builtin: boolean;
  readonly sourceDigest: string;
  readonly environmentFingerprint: string;
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
 * workflow code runs), the definition when its digest is given (once it has loaded).
 */
export async function checkTrust(
  subject: TrustSubject,
  options: {
    chrysHome: string;
    uid: number | null;
    definitionDigest: string | null;
    /** The agent profiles' digest once known (with the definition); absent before it is. */
    profilesDigest?: string | null;
  },
): Promise<TrustCheck> {
  if (subject.builtin) return { required: false, trusted: true, changed: [], record: null };
  const record = await readTrust(options.chrysHome, subject.entry, { uid: options.uid });
  if (record === null) return { required: true, trusted: false, changed: [], record };
  const changed = compareTrust(record, {
    source_digest: subject.sourceDigest,
    environment_fingerprint: subject.environmentFingerprint,
    definition_digest: options.definitionDigest ?? record.definition_digest,
    profiles_digest:
      options.profilesDigest === undefined ? (record.profiles_digest ?? null) : options.profilesDigest,
  });
  return { required: true, trusted: changed.length === 0, changed, record };
}

/** Saves the confirmation of the workflow as it is now; later runs need no trust until it changes. */
export function confirmTrust(
  subject: TrustSubject,
  options: { chrysHome: string; title: string; definitionDigest: string; profilesDigest?: string | null },
): Promise<TrustRecord> {
  return writeTrust(options.chrysHome, {
    path: subject.entry,
    workflow_id: subject.workflowId,
    layout: subject.layout,
    title: options.title,
    source_digest: subject.sourceDigest,
    definition_digest: options.definitionDigest,
    environment_fingerprint: subject.environmentFingerprint,
    ...(options.profilesDigest == null ? {} : { profiles_digest: options.profilesDigest }),
  });
}

/** Why a workflow may not run: never trusted, or what changed since. For people. */
export function untrustedMessage(subject: TrustSubject, check: TrustCheck): string {
  return check.record === null
    ? `workflow '${subject.workflowId}' (${subject.entry}) is not trusted yet`
    : `workflow '${subject.workflowId}' changed since it was trusted (${check.changed.join(", ")})`;
}

const encoded = new WeakMap<object, { json: string; digest: string }>();

/**
 * A definition's canonical JSON and its SHA-256 (the trust record's `definition_digest`), computed once per
 * definition object: a run compares the digest, may save it, records it in the run header and writes the JSON
 * as `definition.json`; for a 10,000-node workflow each encoding costs tens of milliseconds. Definitions are
 * never changed after they are built.
 */
export function encodedDefinition(definition: object): { json: string; digest: string } {
  let found = encoded.get(definition);
  if (found === undefined) {
    const json = canonicalJson(definition);
    found = { json, digest: sha256Hex(json) };
    encoded.set(definition, found);
  }
  return found;
}
