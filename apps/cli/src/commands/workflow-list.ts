import { listWorkflowsFor } from "@icode/workflow-engine";
import { parse } from "../args";
import { EXIT } from "../exit-codes";
import type { CliIo } from "../io";
import { oneLine } from "../render/flatten";
import { renderTable } from "../render/table";
import { UsageError } from "../usage";

export const USAGE = `Usage: icode workflow list [--json]

List the workflows found from the current directory without running any workflow code:
project workflows in ./.chrys/workflows/, global ones in $CHRYS_HOME/workflows/ (default ~/.chrys), and the
built-in ones. When several share an ID, the first readable one in priority order wins (project folder,
project file, global folder, global file, built-in). Titles of custom workflows come from saved trust
confirmations ("-" until a workflow was trusted).

Options:
  --json      Print {"workflows": [{"id", "source", "layout", "title", "path"}]}
  -h, --help  Show this help

Warnings about skipped workflows go to stderr.
`;

export const command = {
  async run(argv: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parse(
      argv,
      { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      USAGE,
    );
    if (values.help) {
      io.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`, USAGE);
    // `listWorkflowsFor` rather than `createEngine().list()`: the same listing, without loading the validate
    // and run machinery (zod schemas, the Python bridge, records) that a one-shot `list` never uses.
    const { workflows, skipped } = await listWorkflowsFor({ cwd: io.cwd, env: io.env });
    for (const s of skipped) {
      io.stderr.write(
        `warning: skipped ${oneLine(s.path)}: ${oneLine(s.reason.message)} [${s.reason.code}]\n`,
      );
    }
    if (values.json) {
      io.stdout.write(`${JSON.stringify({ workflows })}\n`);
    } else {
      const rows = workflows.map((w) =>
        [w.id, w.source, w.title === "" ? "-" : w.title, w.path].map(oneLine),
      );
      io.stdout.write(renderTable(["ID", "Source", "Title", "Path"], rows));
    }
    return EXIT.ok;
  },
};
