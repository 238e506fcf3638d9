import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { createEngine } from "@icode/workflow-engine";
import { parse } from "../args";
import { EXIT } from "../exit-codes";
import type { CliIo } from "../io";
import { oneLine } from "../render/flatten";
import { UsageError } from "../usage";

export const USAGE = `Usage: icode trajectory export --session ID --format json|perfetto --out FILE

Export a workflow session's runs for analysis:
  json       runs, nodes, attempts, timings and usage
  perfetto   Chrome trace-event JSON that ui.perfetto.dev opens (a track per node, a slice per attempt)

Options:
  --session ID   The workflow session ID
  --format F     json or perfetto
  --out FILE     Where to write the export
  -h, --help     Show this help
`;

export const command = {
  async run(argv: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parse(
      argv,
      {
        session: { type: "string" },
        format: { type: "string" },
        out: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      USAGE,
    );
    if (values.help) {
      io.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`, USAGE);
    if (values.session === undefined) throw new UsageError("missing --session", USAGE);
    if (values.format !== "json" && values.format !== "perfetto") {
      throw new UsageError(`--format must be json or perfetto, got '${values.format ?? ""}'`, USAGE);
    }
    if (values.out === undefined) throw new UsageError("missing --out", USAGE);
    const engine = createEngine({ cwd: io.cwd, env: io.env });
    let data: unknown;
    try {
      data = await engine.exportTrajectory(values.session, values.format);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      io.stderr.write(`icode: cannot export session ${oneLine(values.session)}: ${oneLine(message)}\n`);
      return EXIT.failed;
    }
    writeFileSync(resolve(io.cwd, values.out), `${JSON.stringify(data)}\n`);
    return EXIT.ok;
  },
};
