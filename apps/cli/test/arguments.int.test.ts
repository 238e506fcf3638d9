/**
 * The command line of the built CLI (issue 17, items 1, 3, 9 and 10): option values that start with `-`,
 * `--timeout` strictness, help for every command group, suggestions for misspelled commands and workflow
 * IDs, `--version`, workflow IDs that are usage errors, `validate -q`, the pasteable trust hint, and every
 * `--json` outcome as one object on stdout.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLI_BIN, ECHO_WORKFLOW, REPO_ROOT, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { icode, parseErrorJson, project, runJson, SLOW, sessionIds } from "./run-helpers";

const NOTES = "---\ntitle: notes\n---\n- item one\n- item two";

describe.concurrent("values that start with '-' are values (item 1)", SLOW, () => {
  it.each([
    ["-2", ["--input", "-2"]],
    ["- item", ["--input", "- item"]],
    ["a file that starts with ---", ["--input", NOTES]],
    ["--input=-2", ["--input=-2"]],
  ])("--input %s reaches the workflow unchanged", async (_, args) => {
    const p = project();
    const r = await runJson(p, "echo", args);
    expect(r.exitCode, r.stderr).toBe(0);
    const expected = args.length === 1 ? "-2" : args[1]!;
    expect(r.json.outputs.map((o) => o.text)).toEqual([expected]);
  });

  it("--timeout -1 gets the documented 'finite positive number' error, not 'ambiguous'", async () => {
    const p = project();
    const r = await icode(p, ["workflow", "run", "echo", "--timeout", "-1"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("--timeout must be a finite positive number of seconds, got '-1'");
    expect(r.stderr).not.toContain("ambiguous");
  });

  it("-s and --session take a value that starts with '-': the session is looked up (and not found)", async () => {
    const p = project();
    for (const args of [
      ["-s", "-abc"],
      ["--session", "-abc"],
    ]) {
      const r = await icode(p, ["workflow", "run", "echo", ...args, "--json"]);
      expect(r.exitCode).toBe(1);
      expect(parseErrorJson(r, "session_not_found").message).toContain("-abc");
    }
  });
});

describe.concurrent("help for every group, suggestions, --version (item 3)", SLOW, () => {
  it("icode workflow --help, icode trajectory --help and bare groups list their commands", async () => {
    const p = project();
    for (const group of ["workflow", "trajectory", "runs", "sessions"]) {
      const help = await icode(p, [group, "--help"]);
      expect(help.exitCode).toBe(0);
      expect(help.stdout).toContain(`Usage: icode ${group} <command>`);
      expect(help.stdout).not.toContain("unknown command");
      const bare = await icode(p, [group]);
      expect(bare.exitCode).toBe(2);
      expect(bare.stdout).toBe("");
      expect(bare.stderr).toBe(help.stdout);
    }
    const workflow = await icode(p, ["workflow", "--help"]);
    expect(workflow.stdout).toMatch(/\n {2}list {3,}List the workflows/);
    expect(workflow.stdout).toMatch(/\n {2}validate {3,}Check a workflow/);
    expect(workflow.stdout).toMatch(/\n {2}run {3,}Run a workflow/);
    expect((await icode(p, ["trajectory", "--help"])).stdout).toMatch(/\n {2}export {3,}Export/);
  });

  it("a misspelled command suggests the nearest one", async () => {
    const p = project();
    const sub = await icode(p, ["workflow", "lst"]);
    expect(sub.exitCode).toBe(2);
    expect(sub.stderr).toContain("icode: unknown command 'workflow lst' (did you mean `list`?)");
    const group = await icode(p, ["workflw", "list"]);
    expect(group.exitCode).toBe(2);
    expect(group.stderr).toContain("(did you mean `workflow`?)");
    const option = await icode(p, ["workflow", "run", "echo", "--inptu", "x"]);
    expect(option.exitCode).toBe(2);
    expect(option.stderr).toContain("unknown option '--inptu' (did you mean `--input`?)");
  });

  it("a misspelled workflow ID suggests the nearest one", async () => {
    const p = project({ ".chrys/workflows/summarise.py": ECHO_WORKFLOW });
    const r = await icode(p, ["workflow", "run", "sumarise"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("error: no workflow with ID 'sumarise' [workflow_not_found]");
    expect(r.stderr).toContain("help: did you mean `summarise`?");
    const builtin = await icode(p, ["workflow", "run", "ecoh", "--json"]);
    expect(parseErrorJson(builtin, "workflow_not_found").hint).toContain("did you mean `echo`?");
  });

  it("icode --version and -v print the package's version; the help header says it too", async () => {
    const p = project();
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, "apps", "cli", "package.json"), "utf8")) as {
      version: string;
    };
    for (const flag of ["--version", "-v"]) {
      const r = await icode(p, [flag]);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
    const help = await icode(p, ["--help"]);
    expect(help.stdout.split("\n")[0]).toBe(`icode ${version}: run and check iCode workflows`);
  });
});

describe.concurrent("--json: every outcome is one JSON object on stdout (item 9)", SLOW, () => {
  it.each([
    ["an unknown option", 2, "usage_error", ["workflow", "run", "echo", "--bogus", "--json"]],
    ["a missing argument", 2, "usage_error", ["workflow", "run", "--json"]],
    ["an unknown command", 2, "usage_error", ["workflow", "lst", "--json"]],
    ["a bad --timeout", 2, "usage_error", ["workflow", "run", "echo", "--json", "--timeout", "0x10"]],
    ["an unknown workflow", 1, "workflow_not_found", ["workflow", "run", "nope", "--json"]],
    ["an unknown session", 1, "session_not_found", ["workflow", "run", "echo", "--json", "-s", "nope"]],
    ["an unknown run", 1, "run_not_found", ["runs", "show", "0123456789abcdef0123456789abcdef", "--json"]],
    ["a usage error of list", 2, "usage_error", ["workflow", "list", "extra", "--json"]],
  ])(
    "%s: exit %i, error.code %s on stdout; stderr keeps the text (usage) or the same JSON (rejections)",
    async (_, exit, code, args) => {
      const p = project();
      const r = await icode(p, args);
      expect(r.exitCode).toBe(exit);
      const error = parseErrorJson(r, code);
      expect(error.message).not.toBe("");
      if (code === "usage_error") {
        expect(r.stderr).toMatch(/^icode: /);
        expect(r.stderr).toContain("Usage: icode");
        expect(error.hint).toMatch(/^see icode .*--help$/);
      } else if (args[0] === "workflow") {
        expect(r.stderr).toBe(r.stdout); // the reference's error JSON on stderr
      }
    },
  );

  it("a run that fails still prints the result object (with outcome) on stdout and the error JSON on stderr", async () => {
    const p = project({
      ".chrys/workflows/boom.py": `from chrys.workflows import WorkflowBuilder\n\ndef boom(v):\n    raise ValueError("no")\n\nwf = WorkflowBuilder("Boom")\nn = wf.python("boom", boom)\nwf.start(n)\nwf.output(n)\nworkflow = wf.build()\n`,
    });
    const r = await runJson(p, "boom", ["--trust"]);
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ outcome: "node_failed", node_id: "boom", error: "ValueError: no" });
    expect(JSON.parse(r.stderr)).toEqual({
      error: {
        outcome: "node_failed",
        reason: "",
        node_id: "boom",
        message: "ValueError: no",
        error_class: "exception",
      },
    });
  });
});

describe.concurrent("messages and IDs (item 10)", SLOW, () => {
  it.each([
    ["an empty ID", [""], "is empty"],
    ["a newline in the ID", ["ec\nho"], "holds a line break"],
    ["a leading '-' that is no option", ["-"], "starts with '-'"],
    ["a path", ["a/b"], "holds a path separator"],
    ["an ignored name", ["_private"], "starts with '.' or '_'"],
  ])("run with %s is a usage error (exit 2), nothing recorded", async (_, ids, message) => {
    const p = project();
    const r = await icode(p, ["workflow", "run", ...ids]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
    expect(sessionIds(p.home)).toEqual([]);
  });

  it("an ID with a leading '-' after '--' is an ID: looked up, not refused as an option", async () => {
    const p = project();
    const r = await icode(p, ["workflow", "run", "--json", "--", "-x"]);
    expect(r.exitCode).toBe(1);
    expect(parseErrorJson(r, "workflow_not_found").message).toBe("no workflow with ID '-x'");
  });

  it("the trust hint repeats the user's own arguments, so that it can be pasted", async () => {
    const p = project({ ".chrys/workflows/greet.py": ECHO_WORKFLOW });
    const first = await runJson(p, "greet", ["--trust", "--input", "a"]);
    expect(first.exitCode).toBe(0);
    const sid = first.json.session_id!;
    // Change the workflow so that it needs trust again.
    const changed = `${ECHO_WORKFLOW}\n# changed\n`;
    writeTree(p.dir, { ".chrys/workflows/greet.py": changed });
    const input = "it's\nmulti-line";
    const r = await icode(p, ["workflow", "run", "greet", "--input", input, "-s", sid, "--timeout", "30"]);
    expect(r.exitCode).toBe(1);
    const help = r.stderr.split("\n").find((l) => l.startsWith("  help: "))!;
    expect(help).toBe(
      `  help: review the source, then run again with --trust: icode workflow run greet --input $'it\\'s\\nmulti-line' -s ${sid} --timeout 30 --trust`,
    );
    // Pasted into bash, it runs the workflow with the same input in the same session.
    const pasted = help.slice(help.indexOf("icode workflow run")).replace(/^icode /, `node ${CLI_BIN} `);
    const out = execFileSync("bash", ["-c", `${pasted} --json`], {
      cwd: p.dir,
      env: { ...process.env, CHRYS_HOME: p.home },
    }).toString();
    expect(JSON.parse(out)).toMatchObject({
      session_id: sid,
      outcome: "completed",
      outputs: [{ text: input }],
    });
  });

  it("validate accepts -q: nothing on a pass, the report on a failure", async () => {
    const p = project({
      "good.py": ECHO_WORKFLOW,
      "bad.py": "def broken(:\n",
    });
    const good = await icode(p, ["workflow", "validate", "-q", "good.py"]);
    expect(good).toMatchObject({ exitCode: 0, stdout: "", stderr: "" });
    const loud = await icode(p, ["workflow", "validate", "good.py"]);
    expect(loud.stdout).toBe("PASS good (file) · 1 node · 0 edges\n");
    const bad = await icode(p, ["workflow", "validate", "--quiet", "bad.py"]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toContain("[syntax_error]");
    expect(bad.stdout).toMatch(/FAIL bad \(file\): 1 error\n$/);
  });

  it("a node timeout reads the same in text and JSON", async () => {
    const p = project({
      ".chrys/workflows/slow.py": `import time\nfrom chrys.workflows import WorkflowBuilder\n\ndef slow(v):\n    time.sleep(10)\n    return v\n\nwf = WorkflowBuilder("Slow")\nn = wf.python("slow", slow, timeout=1)\nwf.start(n)\nwf.output(n)\nworkflow = wf.build()\n`,
    });
    const json = await runJson(p, "slow", ["--trust"]);
    expect(json.exitCode).toBe(1);
    expect(json.json).toMatchObject({ outcome: "node_failed", node_id: "slow" });
    const text = await icode(p, ["workflow", "run", "slow"]);
    expect(text.exitCode).toBe(1);
    expect(text.stderr).toContain(`✗ slow failed (timeout): ${json.json.error}\n`);
    expect(text.stderr).toContain(`✗ Workflow failed: node 'slow' failed: ${json.json.error}\n`);
    expect(JSON.parse(json.stderr)).toMatchObject({
      error: { message: json.json.error, error_class: "timeout" },
    });
  });
});
