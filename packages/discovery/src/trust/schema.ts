import { z } from "zod";
import { LayoutSchema, Sha256HexSchema } from "../schema";

/** The current trust record format. Newer engines read version 1; unknown fields are kept on rewrite. */
export const TRUST_RECORD_VERSION = 1 as const;

/**
 * One saved trust confirmation: `<chrysHome>/trust/<sha256 of the absolute entry path>.json`. Field names
 * are snake_case because the file is on disk for other engine versions to read. The schema is loose:
 * fields a newer engine adds survive a read and write by this one.
 */
export const TrustRecordSchema = z.looseObject({
  /** Format version; a reader accepts any version whose fields it understands. */
  version: z.number().int().min(1).default(TRUST_RECORD_VERSION),
  /** Absolute path of the workflow's entry file: the record's key. */
  path: z.string().min(1),
  workflow_id: z.string().min(1),
  layout: LayoutSchema,
  /** Clarification 23's source digest (the file's SHA-256 or the folder digest). */
  source_digest: Sha256HexSchema,
  /** SHA-256 of the built definition's canonical JSON (`jsonDigest(definition)`). */
  definition_digest: Sha256HexSchema,
  /** `environmentFingerprint(...)` of the environment the workflow was confirmed with. */
  environment_fingerprint: Sha256HexSchema,
  /** The `WorkflowBuilder` title, shown by `icode workflow list`. */
  title: z.string(),
  /** When trust was confirmed, ISO 8601. */
  trusted_at: z.string().default(() => new Date().toISOString()),
});
export type TrustRecord = z.infer<typeof TrustRecordSchema>;
/** What `writeTrust` accepts: `version` and `trusted_at` may be left out. */
export type TrustRecordInput = z.input<typeof TrustRecordSchema>;

/** The three things whose change requires confirming trust again, in the order messages name them. */
export const TRUST_PARTS = ["source", "definition", "environment"] as const;
export const TrustPartSchema = z.enum(TRUST_PARTS);
export type TrustPart = z.infer<typeof TrustPartSchema>;

/** The current state of a workflow, compared with a saved record. */
export const TrustStateSchema = z.object({
  source_digest: Sha256HexSchema,
  definition_digest: Sha256HexSchema,
  environment_fingerprint: Sha256HexSchema,
});
export type TrustState = z.infer<typeof TrustStateSchema>;

/**
 * What the environment fingerprint covers (clarification 24). Installed packages are not covered. The
 * python-bridge fills it in; `environmentFingerprint` digests it.
 */
export const EnvironmentInfoSchema = z.object({
  /** The interpreter the workflow asked for (`[tool.chrys] python`), `null` for the default. */
  interpreter: z.string().nullable(),
  /** The interpreter's resolved path (`sys.executable`, links followed). */
  interpreter_path: z.string(),
  /** `sys.implementation.name`, e.g. `cpython`. */
  implementation: z.string(),
  /** `platform.python_version()`, e.g. `3.12.4`. */
  python_version: z.string(),
  /** `sys.platform`, e.g. `linux`. */
  platform: z.string(),
  /** `platform.machine()`, e.g. `x86_64`. */
  machine: z.string(),
  /** `platform.libc_ver()` joined as `glibc 2.39`, `null` when unknown. */
  libc: z.string().nullable(),
  /** The digest of the `chrys.workflows` SDK iCode injects. */
  sdk_digest: z.string(),
});
export type EnvironmentInfo = z.infer<typeof EnvironmentInfoSchema>;
