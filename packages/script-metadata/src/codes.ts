import { z } from "zod";

/**
 * The diagnostic codes this package emits: `metadata_invalid` (stage `metadata`) for the `# /// script`
 * block, `environment_invalid` (stage `environment`) for the interpreter it selects.
 */
export const SCRIPT_METADATA_CODES = ["metadata_invalid", "environment_invalid"] as const;
export const ScriptMetadataCodeSchema = z.enum(SCRIPT_METADATA_CODES);
export type ScriptMetadataCode = z.infer<typeof ScriptMetadataCodeSchema>;
