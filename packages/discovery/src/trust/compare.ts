import { jsonDigest } from "../digest";
import type { TrustRecord } from "./record";
import { type EnvironmentInfo, EnvironmentInfoSchema, type TrustPart, type TrustState } from "./schema";

/**
 * Which parts differ between a saved confirmation and the workflow now, in the order `source`,
 * `definition`, `environment`. Empty means the confirmation still holds.
 *
 * @example compareTrust(record, { ...current, source_digest: other }) // → ["source"]
 */
export function compareTrust(record: TrustRecord, current: TrustState): TrustPart[] {
  const changed: TrustPart[] = [];
  if (record.source_digest !== current.source_digest) changed.push("source");
  if (record.definition_digest !== current.definition_digest) changed.push("definition");
  if (record.environment_fingerprint !== current.environment_fingerprint) changed.push("environment");
  if ((record.profiles_digest ?? null) !== (current.profiles_digest ?? null)) changed.push("profiles");
  return changed;
}

/** SHA-256 of the canonical JSON of clarification 24's environment fields (validated first). */
export function environmentFingerprint(info: EnvironmentInfo): string {
  return jsonDigest(EnvironmentInfoSchema.parse(info));
}
