import { writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createEngine } from "@icode/workflow-engine";
import type { CommandContext } from "../command";
import { helpCommand, shortUsage } from "../command-line/help";
import { type TRAJECTORY_EXPORT, TREE, type ValuesOf } from "../command-tree";
import { EXIT } from "../exit-codes";
import type { CliIo } from "../io";
import type { CliErrorCode } from "../json/error";
import { oneLine } from "../render/flatten";
import { UsageError } from "../usage";

const KNOWN_CODES: readonly string[] = [
  "session_not_found",
  "record_invalid",
  "invalid_id",
  "pipeline_run_not_found",
  "pipeline_invalid_id",
  "pipeline_store_failed",
  "pipeline_store_too_new",
];

/** Why `--out` could not be written, and what to do about it, by the system's error code. */
function outProblem(file: string, error: unknown): { message: string; hint: string } {
  const code = (error as NodeJS.ErrnoException).code;
  const because = (why: string) =>
    `cannot write the export to ${file}: ${why}${code === undefined ? "" : ` (${code})`}`;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return {
        message: because(`the folder ${dirname(file)} does not exist`),
        hint: `create it first (mkdir -p ${dirname(file)}), or name a file in an existing folder`,
      };
    case "EISDIR":
      return { message: because("it is a folder"), hint: `name a file, for example ${file}/export.json` };
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return {
        message: because("the folder cannot be written"),
        hint: "name a file in a folder you can write, or '-' for standard output",
      };
    default:
      return {
        message: because(error instanceof Error ? error.message : String(error)),
        hint: "name another file, or '-' for standard output",
      };
  }
}

function fail(io: CliIo, code: CliErrorCode, message: string, hint: string | null): number {
  io.stderr.write(
    `icode: ${oneLine(message)} [${code}]\n${hint === null ? "" : `  help: ${oneLine(hint)}\n`}`,
  );
  return EXIT.failed;
}

export const command = {
  async run({ command: parsed, io }: CommandContext): Promise<number> {
    const values = parsed.values as ValuesOf<typeof TRAJECTORY_EXPORT>;
    const format = values.format as "json" | "perfetto";
    if (values.session === undefined && values.run === undefined) {
      throw new UsageError(
        "give --session ID (a workflow session) or --run ID (a pipeline run)",
        shortUsage(TREE, parsed.spec),
        helpCommand(TREE, parsed.spec.path),
      );
    }
    const engine = createEngine({ cwd: io.cwd, env: io.env });
    let data: unknown;
    try {
      data =
        values.run !== undefined
          ? await engine.pipelines.exportTrajectory(values.run, format)
          : await engine.exportTrajectory(values.session!, format);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const raw = (error as { code?: unknown }).code;
      const code: CliErrorCode =
        typeof raw === "string" && KNOWN_CODES.includes(raw) ? (raw as CliErrorCode) : "internal_error";
      const what = values.run !== undefined ? `pipeline run ${values.run}` : `session ${values.session}`;
      return fail(
        io,
        code,
        `cannot export ${what}: ${message}`,
        code === "session_not_found"
          ? "list sessions with: icode sessions list"
          : code === "pipeline_run_not_found"
            ? "list the pipeline runs with: icode pipeline runs"
            : null,
      );
    } finally {
      await engine.pipelines.close();
    }
    const text = `${JSON.stringify(data)}\n`;
    if (values.out === "-") {
      io.stdout.write(text);
      return EXIT.ok;
    }
    const file = resolve(io.cwd, values.out!);
    try {
      writeFileSync(file, text);
    } catch (error) {
      const { message, hint } = outProblem(file, error);
      return fail(io, "output_write_failed", message, hint);
    }
    return EXIT.ok;
  },
};
