import { statSync } from "node:fs";
import { listAgentsFor, listModelsFor } from "@icode/workflow-engine";
import type { CommandContext } from "../command";
import type { AGENTS_LIST, MODELS_LIST, ValuesOf } from "../command-tree";
import { EXIT } from "../exit-codes";
import type { AgentsListJson, ModelsListJson } from "../json/profiles";
import { errorJsonLine } from "../render/error-json";
import { agentsText, modelsText, warningLine } from "../render/profile-tables";

/**
 * `icode agents [list]` and `icode models [list]` (agent-profiles.md 5). This bundle imports the engine's
 * listing functions only: the agents package, the AI SDK, the ACP SDK and the record store stay unloaded
 * (test/profiles-bundle.int.test.ts checks the modules a listing loads).
 */
export const command = {
  async run({ command: parsed, io }: CommandContext): Promise<number> {
    const values = parsed.values as ValuesOf<typeof AGENTS_LIST> & ValuesOf<typeof MODELS_LIST>;
    if (!isDirectory(io.cwd)) {
      const message = `the working directory ${io.cwd === "" ? "" : `${io.cwd} `}no longer exists`;
      const hint = "cd into an existing directory and run the command again";
      if (values.json) io.stdout.write(errorJsonLine({ code: "cwd_missing", message, hint }));
      io.stderr.write(`error: ${message} [cwd_missing]\n  help: ${hint}\n`);
      return EXIT.failed;
    }
    const options = { cwd: io.cwd, env: io.env };
    if (parsed.spec.path[0] === "agents") {
      const listing = await listAgentsFor(options);
      if (values.json) {
        const output: AgentsListJson = listing;
        io.stdout.write(`${JSON.stringify(output)}\n`);
      } else {
        warn(io, listing.problems);
        io.stdout.write(agentsText(listing));
      }
      return EXIT.ok;
    }
    const listing = await listModelsFor(options);
    if (values.json) {
      const output: ModelsListJson = listing;
      io.stdout.write(`${JSON.stringify(output)}\n`);
    } else {
      warn(io, listing.problems);
      io.stdout.write(modelsText(listing));
    }
    return EXIT.ok;
  },
};

/** Text mode: each problem on stderr. `--json` puts problems only in `problems` (agent-profiles.md 5). */
function warn(io: CommandContext["io"], problems: Parameters<typeof warningLine>[0][]): void {
  for (const p of problems) io.stderr.write(`${warningLine(p)}\n`);
}

/** Whether `path` is a directory that still exists (bin.ts passes `$PWD` when the process's one is gone). */
function isDirectory(path: string): boolean {
  if (path === "") return false;
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
