import { listWorkflowsFor } from "@icode/workflow-engine";
import type { CommandContext } from "../command";
import type { ValuesOf, WORKFLOW_LIST } from "../command-tree";
import { EXIT } from "../exit-codes";
import type { WorkflowListJson } from "../json/workflow-list";
import { oneLine } from "../render/flatten";
import { renderTable } from "../render/table";

export const command = {
  async run({ command: parsed, io }: CommandContext): Promise<number> {
    const values = parsed.values as ValuesOf<typeof WORKFLOW_LIST>;
    // `listWorkflowsFor` rather than `createEngine().list()`: the same listing, without loading the validate
    // and run machinery (zod schemas, the Python bridge, records) that a one-shot `list` never uses.
    const { workflows, skipped } = await listWorkflowsFor({ cwd: io.cwd, env: io.env });
    for (const s of skipped) {
      io.stderr.write(
        `warning: skipped ${oneLine(s.path)}: ${oneLine(s.reason.message)} [${s.reason.code}]\n`,
      );
    }
    if (values.json) {
      const output: WorkflowListJson = { workflows };
      io.stdout.write(`${JSON.stringify(output)}\n`);
    } else {
      const rows = workflows.map((w) =>
        [w.id, w.source, w.title === "" ? "-" : w.title, w.path].map(oneLine),
      );
      io.stdout.write(renderTable(["ID", "Source", "Title", "Path"], rows));
    }
    return EXIT.ok;
  },
};
