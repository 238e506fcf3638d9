import * as z from "zod/mini";
import { LAYOUTS, SHA256_HEX, SHA256_HEX_DESCRIPTION } from "../shapes";

// zod/mini rather than zod: `icode workflow list` reads trust records for the titles it shows, and loading the
// full zod API would take most of its time (~40 ms of a ~150 ms budget), while the mini API keeps only what
// this schema uses.

const Sha256Hex = z.string().check(z.regex(SHA256_HEX, SHA256_HEX_DESCRIPTION));

/** The current trust record format. Newer engines read version 1; unknown fields are kept on rewrite. */
export const TRUST_RECORD_VERSION = 1 as const;

/**
 * One saved trust confirmation: `<chrysHome>/trust/<sha256 of the absolute entry path>.json`. Field names
 * are snake_case because the file is on disk for other engine versions to read. The schema is loose:
 * fields a newer engine adds survive a read and write by this one.
 */
export const TrustRecordSchema = z.looseObject({
  /** Format version; a reader accepts any version whose fields it understands. */
  version: z._default(z.number().check(z.int(), z.minimum(1)), TRUST_RECORD_VERSION),
  /** Absolute path of the workflow's entry file: the record's key. */
  path: z.string().check(z.minLength(1)),
  workflow_id: z.string().check(z.minLength(1)),
  layout: z.enum(LAYOUTS),
  /** Clarification 23's source digest (the file's SHA-256 or the folder digest). */
  source_digest: Sha256Hex,
  /** SHA-256 of the built definition's canonical JSON (`jsonDigest(definition)`). */
  definition_digest: Sha256Hex,
  /** `environmentFingerprint(...)` of the environment the workflow was confirmed with. */
  environment_fingerprint: Sha256Hex,
  /** Digest of the project agent profiles that start programs, when the workflow uses any (agent profiles §1.6). */
  profiles_digest: z.optional(z.nullable(Sha256Hex)),
  /** The `WorkflowBuilder` title, shown by `icode workflow list`. */
  title: z.string(),
  /** When trust was confirmed, ISO 8601. */
  trusted_at: z._default(z.string(), () => new Date().toISOString()),
});
export type TrustRecord = z.infer<typeof TrustRecordSchema>;
/** What `writeTrust` accepts: `version` and `trusted_at` may be left out. */
export type TrustRecordInput = z.input<typeof TrustRecordSchema>;
