import { z } from "zod";
import { Sha256HexSchema } from "../schema";

/**
 * What requires confirming trust again when it changes, in the order messages name them: the source, the
 * built definition, the environment, and the project agent profiles the workflow uses that start programs.
 */
export const TRUST_PARTS = ["source", "definition", "environment", "profiles"] as const;
export const TrustPartSchema = z.enum(TRUST_PARTS);
export type TrustPart = z.infer<typeof TrustPartSchema>;

/** The current state of a workflow, compared with a saved record. */
export const TrustStateSchema = z.object({
  source_digest: Sha256HexSchema,
  definition_digest: Sha256HexSchema,
  environment_fingerprint: Sha256HexSchema,
  /** Digest of the project agent profiles that start programs (`null`/absent: none are used). */
  profiles_digest: Sha256HexSchema.nullable().optional(),
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
