import { readdirSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { canonicalJson } from "@icode/canonical-json";
import { z } from "zod";
import { writeFileAtomicAsync } from "./atomic";
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
function transcriptFileName(activationId: string, attempt: number): string {
  return `${sanitizeForFileName(activationId)}.${attempt}.transcript.${recordHash(activationId, attempt)}.json`;
}

/**
 * Writes one attempt's transcript into `<runDir>/nodes/`, atomically and durably, without blocking the main
 * thread (an agent node's transcript is written while the next node runs). Rejects with `storage_failed`.
 */
export async function writeTranscript(runDirPath: string, record: TranscriptRecord): Promise<void> {
  const dir = join(runDirPath, FILES.nodes);
  const file = join(dir, transcriptFileName(record.activation_id, record.attempt));
  let text: string;
  try {
    text = canonicalJson(TranscriptRecordSchema.parse(record));
  } catch (cause) {
    throw storageFailed("an agent transcript", file, cause);
  }
  try {
    await mkdir(dir, { recursive: true });
  } catch (cause) {
    throw storageFailed("the node records folder", dir, cause);
  }
  await writeFileAtomicAsync(file, text, "an agent transcript");
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
