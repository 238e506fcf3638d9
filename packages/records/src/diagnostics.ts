import { createHash } from "node:crypto";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { CapturedTextSchema } from "@icode/workflow-graph";
import { z } from "zod";
import { writeJsonAtomic } from "./atomic";
import { storageFailed } from "./codes";
import { readJsonFile } from "./json-file";
import { FILES } from "./layout";

/** Where in an attempt the output was captured: the node function, its outgoing conditions, a loop's
 * `until`, a join's `combine`. */
const DIAGNOSTIC_PHASES = ["node", "conditions", "until", "combine"] as const;
const DiagnosticPhaseSchema = z.enum(DIAGNOSTIC_PHASES);

/**
 * One node diagnostics record: `nodes/<activation_id>.<attempt>.diagnostics.<hash8>.json` (spec "Node
 * diagnostics"). `phases[].stdout.text` holds the captured text.
 */
export const NodeDiagnosticsSchema = z.object({
  node_id: z.string(),
  activation_id: z.string(),
  attempt: z.number().int().min(1),
  phases: z.array(z.object({ phase: DiagnosticPhaseSchema, stdout: CapturedTextSchema })),
});
export type NodeDiagnostics = z.infer<typeof NodeDiagnosticsSchema>;

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;
const MAX_NAME = 96;

/**
 * The file name part for an activation ID: characters other than ASCII letters, digits, `.`, `_`, `-` and
 * `@` become `_` (so `review@iter#2` → `review@iter_2`, `a/b` → `a_b`), a leading `.` and Windows device
 * names get a `_` prefix, and the result is cut to 96 characters. Different IDs can sanitize alike; the
 * hash in the file name keeps them apart.
 */
export function sanitizeForFileName(id: string): string {
  let name = id.replace(/[^A-Za-z0-9._@-]/g, "_");
  if (name === "" || name.startsWith(".") || WINDOWS_RESERVED.test(name.split(".")[0] ?? ""))
    name = `_${name}`;
  return name.length > MAX_NAME ? name.slice(0, MAX_NAME) : name;
}

/** The first 8 hex characters of SHA-256 over the record identity `<activation_id>\0<attempt>`. */
export function recordHash(activationId: string, attempt: number): string {
  return createHash("sha256").update(`${activationId}\u0000${attempt}`, "utf8").digest("hex").slice(0, 8);
}

/** `<sanitized activation>.<attempt>.diagnostics.<hash8>.json` */
export function diagnosticsFileName(activationId: string, attempt: number): string {
  return `${sanitizeForFileName(activationId)}.${attempt}.diagnostics.${recordHash(activationId, attempt)}.json`;
}

/** Whether a record has anything worth a file: some captured text, or a truncation to report. */
function hasDiagnosticContent(record: NodeDiagnostics): boolean {
  return record.phases.some((p) => p.stdout.text !== "" || p.stdout.truncated);
}

/**
 * Writes a node diagnostics record into `<runDir>/nodes/` and returns the file path, or `null` (and writes
 * nothing) when no phase captured anything. Phases without content are left out of the file.
 */
export function writeNodeDiagnostics(runDirPath: string, record: NodeDiagnostics): string | null {
  const parsed = NodeDiagnosticsSchema.parse(record);
  if (!hasDiagnosticContent(parsed)) return null;
  const dir = join(runDirPath, FILES.nodes);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (cause) {
    throw storageFailed("the node diagnostics folder", dir, cause);
  }
  const file = join(dir, diagnosticsFileName(parsed.activation_id, parsed.attempt));
  const kept = { ...parsed, phases: parsed.phases.filter((p) => p.stdout.text !== "" || p.stdout.truncated) };
  writeJsonAtomic(file, kept, "a node diagnostics record");
  return file;
}

/** Every node diagnostics record of a run, ordered by activation then attempt. Unreadable files throw. */
export function readNodeDiagnostics(runDirPath: string): NodeDiagnostics[] {
  const dir = join(runDirPath, FILES.nodes);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw cause;
  }
  return names
    .filter((name) => /\.\d+\.diagnostics\.[0-9a-f]{8}\.json$/.test(name))
    .map((name) => readJsonFile(join(dir, name), NodeDiagnosticsSchema, "a node diagnostics record"))
    .sort((a, b) =>
      a.activation_id < b.activation_id ? -1 : a.activation_id > b.activation_id ? 1 : a.attempt - b.attempt,
    );
}
