import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir } from "@icode/test-utils";
import { isWorkflowError } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import {
  inlineAgentScript,
  loadAgentScript,
  parseAgentScript,
  SCRIPT_ENV,
  writeAgentScript,
} from "./script-file";

const OK = { turns: [{ steps: [{ message: "ok" }] }] };

function thrown(run: () => unknown): { code?: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(isWorkflowError(error)).toBe(true);
    return error as { code: string; message: string };
  }
  throw new Error("expected a throw");
}

describe("loadAgentScript", () => {
  it("reads --script FILE first, then ACP_DOUBLE_SCRIPT as a path or as inline JSON", () => {
    const dir = tmpDir();
    const file = writeAgentScript(join(dir, "a.json"), { ...OK, name: "from-file" });
    const other = writeAgentScript(join(dir, "b.json"), { ...OK, name: "from-env" });
    expect(loadAgentScript(["--script", file], { [SCRIPT_ENV]: other })).toMatchObject({
      source: "flag",
      script: { name: "from-file" },
    });
    expect(loadAgentScript([], { [SCRIPT_ENV]: other })).toMatchObject({
      source: "env_file",
      script: { name: "from-env" },
    });
    expect(
      loadAgentScript([], { [SCRIPT_ENV]: ` ${JSON.stringify({ ...OK, name: "inline" })}` }),
    ).toMatchObject({
      source: "env_inline",
      script: { name: "inline" },
    });
  });

  it("fails with script_invalid when there is no script, no file, no JSON or no valid script", () => {
    const dir = tmpDir();
    expect(thrown(() => loadAgentScript([], {}))).toMatchObject({ code: "script_invalid" });
    expect(thrown(() => loadAgentScript([], {})).message).toContain(SCRIPT_ENV);
    expect(thrown(() => loadAgentScript(["--script"], {})).message).toContain("--script needs a file path");
    expect(thrown(() => loadAgentScript(["--script", join(dir, "none.json")], {})).message).toContain(
      "cannot be read",
    );
    writeFileSync(join(dir, "bad.json"), "{ turns: ");
    expect(thrown(() => loadAgentScript([], { [SCRIPT_ENV]: join(dir, "bad.json") })).message).toContain(
      "is not JSON",
    );
    const invalid = thrown(() =>
      loadAgentScript([], { [SCRIPT_ENV]: '{"turns": [{"steps": [{"crash": 300}]}]}' }),
    );
    expect(invalid).toMatchObject({ code: "script_invalid" });
    expect(invalid.message).toContain("turns[0].steps[0].crash");
  });
});

describe("writeAgentScript and inlineAgentScript", () => {
  it("write only valid scripts, as they were given", () => {
    const file = join(tmpDir(), "s.json");
    writeAgentScript(file, OK);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(OK);
    expect(JSON.parse(inlineAgentScript(OK))).toEqual(OK);
    expect(thrown(() => inlineAgentScript({ turns: [] }))).toMatchObject({ code: "script_invalid" });
    expect(parseAgentScript(OK).turns).toHaveLength(1);
  });
});
