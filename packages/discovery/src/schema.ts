import { DiagnosticSchema } from "@icode/workflow-errors";
import { z } from "zod";
import { DISCOVERY_CODES } from "./codes";
import { LAYOUTS, SHA256_HEX, SHA256_HEX_DESCRIPTION } from "./shapes";

/** The diagnostic codes of this package (`DISCOVERY_CODES`). */
export const DiscoveryCodeSchema = z.enum(DISCOVERY_CODES);

/** Where a workflow was found, in the spec's words. */
export const SourceSchema = z.enum(["project", "global", "builtin"]);
export type Source = z.infer<typeof SourceSchema>;

/** `file`: a single `.py` file; `package`: a workflow folder with an entry file of the folder's name. */
export const LayoutSchema = z.enum(LAYOUTS);
export type Layout = z.infer<typeof LayoutSchema>;

/** One workflow candidate in a discovery location, before its checks have run. */
export const CandidateSchema = z.object({
  id: z.string().min(1),
  source: SourceSchema,
  layout: LayoutSchema,
  /** Absolute path of the entry file (for a folder: `<folder>/<folder name>.py`). */
  path: z.string(),
  /** Absolute path of the workflow folder, `null` for a single file. */
  packageDir: z.string().nullable(),
});
export type Candidate = z.infer<typeof CandidateSchema>;

/** A workflow that `icode workflow list` shows: the first readable candidate of its ID. */
export const DiscoveredWorkflowSchema = CandidateSchema.extend({
  /** Candidates with the same ID and a lower priority, best first. They were not checked. */
  shadows: z.array(CandidateSchema),
});
export type DiscoveredWorkflow = z.infer<typeof DiscoveredWorkflowSchema>;

/** A candidate that could not be read, with the reason. It shadows nothing. */
export const SkippedSchema = z.object({
  /** `null` when a whole location could not be listed. */
  id: z.string().nullable(),
  source: SourceSchema,
  layout: LayoutSchema.nullable(),
  path: z.string(),
  packageDir: z.string().nullable(),
  reason: DiagnosticSchema,
});
export type Skipped = z.infer<typeof SkippedSchema>;

export const DiscoveryResultSchema = z.object({
  /** Sorted by ID. */
  workflows: z.array(DiscoveredWorkflowSchema),
  /** Locations that could not be listed first, then candidates by ID and priority. */
  skipped: z.array(SkippedSchema),
});
export type DiscoveryResult = z.infer<typeof DiscoveryResultSchema>;

/** What `icode workflow validate <path>` checks, once the `resolve` stage has passed. */
export const TargetSchema = z.object({
  /** The path as the user gave it. */
  path: z.string(),
  layout: LayoutSchema,
  workflowId: z.string().min(1),
  /** Absolute path of the entry file. */
  entry: z.string(),
  /** Absolute path of the workflow folder, `null` for a single file. */
  packageDir: z.string().nullable(),
  /** The discovery location holding the workflow, `null` when it is elsewhere. */
  location: SourceSchema.nullable(),
});
export type Target = z.infer<typeof TargetSchema>;

export const ResolveResultSchema = z.object({
  /** `null` when an error diagnostic stopped the stage. */
  target: TargetSchema.nullable(),
  /** Errors, or the `shadowed` warning next to a target. */
  diagnostics: z.array(DiagnosticSchema),
});
export type ResolveResult = z.infer<typeof ResolveResultSchema>;

const Sha256HexSchema = z.string().regex(SHA256_HEX, SHA256_HEX_DESCRIPTION);

/** One file of a workflow's source, as read for the digest and the run's source snapshot. */
export const SourceFileSchema = z.object({
  /** Relative to the workflow folder (or the file's own name), with `/` separators. */
  relPath: z.string(),
  absPath: z.string(),
  size: z.number().int().min(0),
  sha256: Sha256HexSchema,
});
export type SourceFile = z.infer<typeof SourceFileSchema>;

export const ReadResultSchema = z.object({
  /** Sorted by `relPath` (code point order); empty when the stage failed before reading. */
  files: z.array(SourceFileSchema),
  /** The entry file's text (a leading UTF-8 byte order mark removed), `null` when it could not be read. */
  entrySource: z.string().nullable(),
  /** Clarification 23's source digest, `null` unless every file was read. */
  sourceDigest: Sha256HexSchema.nullable(),
  diagnostics: z.array(DiagnosticSchema),
});
export type ReadResult = z.infer<typeof ReadResultSchema>;

export { Sha256HexSchema };
