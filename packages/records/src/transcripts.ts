import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writeJsonAtomic } from "./atomic";
import { storageFailed } from "./codes";
import { recordHash, sanitizeForFileName } from "./diagnostics";
import { readJsonFile } from "./json-file";
import { FILES } from "./layout";

/**
 * One agent attempt's transcript, as the run keeps it: `nodes/<activation>.<attempt>.transcript.<hash8>.json`
 * beside the node diagnostics. The transcript itself is the agent runtime's (`AgentTranscriptSchema` of
 * `@icode/workflow-agents`); the records keep it whole and name it by activation and attempt.
 */
export const TranscriptRecordSchema = z.object({
  node_id: z.string(),
  activation_id: z.string(),
  attempt: z.number().int().min(1),
  transcript: z.record(z.string(), z.json()),
});
export type TranscriptRecord = z.infer<typeof TranscriptRecordSchema>;

/** `<sanitized activation>.<attempt>.transcript.<hash8>.json` */
export function transcriptFileName(activationId: string, attempt: number): string {
  return `${sanitizeForFileName(activationId)}.${attempt}.transcript.${recordHash(activationId, attempt)}.json`;
}

/** Writes one attempt's transcript into `<runDir>/nodes/`. Throws `storage_failed`. */
export function writeTranscript(runDirPath: string, record: TranscriptRecord): void {
  const parsed = TranscriptRecordSchema.parse(record);
  const dir = join(runDirPath, FILES.nodes);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (cause) {
    throw storageFailed("the node records folder", dir, cause);
  }
  writeJsonAtomic(
    join(dir, transcriptFileName(parsed.activation_id, parsed.attempt)),
    parsed,
    "an agent transcript",
  );
}

/** Every transcript of a run, ordered by activation then attempt. */
export function readTranscripts(runDirPath: string): TranscriptRecord[] {
  const dir = join(runDirPath, FILES.nodes);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw cause;
  }
  return names
    .filter((name) => /\.\d+\.transcript\.[0-9a-f]{8}\.json$/.test(name))
    .map((name) => readJsonFile(join(dir, name), TranscriptRecordSchema, "an agent transcript"))
    .sort((a, b) =>
      a.activation_id < b.activation_id ? -1 : a.activation_id > b.activation_id ? 1 : a.attempt - b.attempt,
    );
}
