import { describe, expect, it } from "vitest";
import { TREE } from "../command-tree";
import { parseCommandLine } from "./parse";
import { editDistance, nearest } from "./suggest";

const parse = (...argv: string[]) => parseCommandLine(argv, TREE, "9.9.9");

function command(...argv: string[]) {
  const line = parse(...argv);
  if (line.kind !== "command") throw new Error(`expected a command, got ${JSON.stringify(line)}`);
  return line.command;
}

function usage(...argv: string[]) {
  const line = parse(...argv);
  if (line.kind !== "usage") throw new Error(`expected a usage error, got ${JSON.stringify(line)}`);
  return line;
}

describe("parseCommandLine: option values", () => {
  it.each([["-2"], ["- item"], ["---\ntitle: notes\n---\nbody"], ["--json"], ["--help"], ["-h"], [""]])(
    "an option that takes a value takes the next word, whatever it starts with: %j",
    (value) => {
      const parsed = command("workflow", "run", "echo", "--input", value);
      expect(parsed.values).toMatchObject({ input: value, json: false });
      expect(parsed.args).toEqual(["echo"]);
    },
  );

  it("takes --name=value, -sVALUE and -s VALUE, and values starting with '-' for short options too", () => {
    expect(command("workflow", "run", "echo", "--input=-2").values["input"]).toBe("-2");
    expect(command("workflow", "run", "echo", "-s-abc").values["session"]).toBe("-abc");
    expect(command("workflow", "run", "echo", "-s", "-abc").values["session"]).toBe("-abc");
    expect(command("workflow", "run", "echo", "--timeout", "-1").values["timeout"]).toBe("-1");
  });

  it("reads clusters of flags and stops options at --", () => {
    const parsed = command("workflow", "run", "-q", "--json", "--", "-x");
    expect(parsed.values).toMatchObject({ quiet: true, json: true });
    expect(parsed.args).toEqual(["-x"]);
    expect(parsed.afterSeparator).toEqual([true]);
    expect(command("workflow", "validate", "-q", "a.py").afterSeparator).toEqual([false]);
  });

  it("refuses a missing value, a value for a flag, a repeated option and unknown options, suggesting the nearest", () => {
    expect(usage("workflow", "run", "echo", "--input").message).toBe("--input needs a value (TEXT)");
    expect(usage("workflow", "run", "echo", "--json=yes").message).toBe("--json takes no value, got 'yes'");
    expect(usage("workflow", "run", "echo", "--input", "a", "--input", "b").message).toBe(
      "--input is given more than once",
    );
    expect(usage("workflow", "run", "echo", "--inptu", "x").message).toBe(
      "unknown option '--inptu' (did you mean `--input`?)",
    );
    expect(usage("workflow", "run", "echo", "-x").message).toBe("unknown option '-x'");
  });

  it("refuses --input with --input-file, a wrong --format, missing required options and extra arguments", () => {
    expect(usage("workflow", "run", "echo", "--input", "a", "--input-file", "f").message).toBe(
      "--input and --input-file cannot be used together",
    );
    expect(usage("trajectory", "export", "--session", "s", "--format", "xml", "--out", "f").message).toBe(
      "--format must be json or perfetto, got 'xml'",
    );
    expect(usage("trajectory", "export", "--session", "s", "--out", "f").message).toBe("missing --format");
    // Neither --session nor --run is refused by the command itself (test/pipeline.int.test.ts).
    expect(
      usage("trajectory", "export", "--session", "s", "--run", "r", "--format", "json", "--out", "f").message,
    ).toBe("--session and --run cannot be used together");
    expect(usage("workflow", "run").message).toBe("missing <workflow-id>");
    expect(usage("workflow", "run", "a", "b").message).toBe(
      "unexpected argument 'b' (it takes one <workflow-id>)",
    );
    expect(usage("workflow", "list", "x").message).toBe("unexpected argument 'x' (it takes no arguments)");
    expect(usage("completion", "tcsh").message).toBe("<shell> must be bash, zsh, fish, got 'tcsh'");
  });

  it("notes --json on a usage error, so that the error is also written as JSON, and names the help command", () => {
    expect(usage("workflow", "run", "--json", "--bogus")).toMatchObject({
      json: true,
      help: "icode workflow run --help",
    });
    expect(usage("workflow", "run", "--bogus")).toMatchObject({ json: false });
    expect(usage("workflow", "lst", "--json")).toMatchObject({ json: true, help: "icode workflow --help" });
    // A value that happens to be "--json" is a value.
    expect(usage("workflow", "run", "--input", "--json")).toMatchObject({ json: false });
  });
});

describe("parseCommandLine: commands, groups and help", () => {
  it("prints a group's commands for the bare group (stderr, exit 2) and for --help (stdout, exit 0)", () => {
    for (const group of ["workflow", "runs", "sessions", "trajectory"]) {
      const bare = parse(group);
      expect(bare).toMatchObject({ kind: "help", stream: "stderr", exitCode: 2 });
      const help = parse(group, "--help");
      expect(help).toMatchObject({ kind: "help", stream: "stdout", exitCode: 0 });
      if (help.kind !== "help") throw new Error("help");
      for (const spec of TREE.groups.find((g) => g.name === group)!.commands) {
        expect(help.text).toContain(`  ${spec.path[1]}`);
      }
    }
  });

  it("suggests the nearest command for a misspelled one", () => {
    expect(usage("workflw").message).toBe("unknown command 'workflw' (did you mean `workflow`?)");
    expect(usage("workflow", "lst").message).toBe("unknown command 'workflow lst' (did you mean `list`?)");
    expect(usage("workflow", "valdiate", "x").message).toBe(
      "unknown command 'workflow valdiate' (did you mean `validate`?)",
    );
    expect(usage("runs", "shwo").message).toBe("unknown command 'runs shwo' (did you mean `show`?)");
    expect(usage("frobnicate").message).toBe("unknown command 'frobnicate'");
  });

  it("answers --version, -v, --help, help and `help <command>`", () => {
    expect(parse("--version")).toEqual({ kind: "version" });
    expect(parse("-v")).toEqual({ kind: "version" });
    expect(parse()).toMatchObject({ kind: "help", stream: "stderr", exitCode: 2 });
    const overview = parse("--help");
    expect(overview).toMatchObject({ kind: "help", stream: "stdout", exitCode: 0 });
    if (overview.kind !== "help") throw new Error("help");
    expect(overview.text.startsWith("icode 9.9.9: ")).toBe(true);
    const run = parse("help", "workflow", "run");
    expect(run).toMatchObject({ kind: "help", stream: "stdout", exitCode: 0 });
    if (run.kind !== "help") throw new Error("help");
    expect(run.text).toContain("Usage: icode workflow run <workflow-id>");
    expect(parse("workflow", "run", "echo", "--bogus", "--help")).toMatchObject({
      kind: "help",
      exitCode: 0,
    });
  });

  it("never asks for a command when the line is help or a usage error (so validate starts no Python then)", () => {
    for (const argv of [
      ["workflow", "validate"],
      ["workflow", "validate", "-h"],
      ["workflow", "validate", "a.py", "--help"],
      ["workflow", "validate", "a.py", "b.py"],
      ["workflow", "validate", "a.py", "--bogus"],
      ["workflow", "validate", "a.py", "--json=false"],
    ]) {
      expect([argv, parse(...argv).kind]).not.toEqual([argv, "command"]);
    }
    expect(command("workflow", "validate", "-", "-q").args).toEqual(["-"]);
  });
});

describe("nearest", () => {
  it("counts insertions, deletions, replacements and swaps as one edit each", () => {
    expect(editDistance("list", "lsit")).toBe(1);
    expect(editDistance("list", "lst")).toBe(1);
    expect(editDistance("list", "lists")).toBe(1);
    expect(editDistance("list", "last")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("keeps to a third of the word's length, or a unique prefix", () => {
    expect(nearest("echp", ["echo", "word-stats"])).toBe("echo");
    expect(nearest("xyz", ["echo"])).toBeNull();
    expect(nearest("word", ["echo", "word-stats"])).toBe("word-stats");
    expect(nearest("", ["echo"])).toBeNull();
  });
});

describe("parseCommandLine: a group with a default command (icode agents, icode models)", () => {
  it.each([
    [["agents"], ["agents", "list"], false],
    [["agents", "list"], ["agents", "list"], false],
    [["agents", "--json"], ["agents", "list"], true],
    [["agents", "list", "--json"], ["agents", "list"], true],
    [["models"], ["models", "list"], false],
    [["models", "--json"], ["models", "list"], true],
  ])("%j runs %j", (argv, path, json) => {
    const parsed = command(...argv);
    expect(parsed.spec.path).toEqual(path);
    expect(parsed.values["json"]).toBe(json);
  });

  it("--help and -h after the group show the default command's help (exit 0)", () => {
    for (const argv of [
      ["agents", "--help"],
      ["agents", "-h"],
      ["agents", "list", "--help"],
    ]) {
      const line = parse(...argv);
      expect(line).toMatchObject({ kind: "help", stream: "stdout", exitCode: 0 });
      if (line.kind === "help") expect(line.text.startsWith("Usage: icode agents list [--json]")).toBe(true);
    }
  });

  it.each([
    [["agents", "lst"], "unknown command 'agents lst' (did you mean `list`?)"],
    [["agents", "--bogus"], "unknown option '--bogus'"],
    [["models", "list", "extra"], "unexpected argument 'extra' (it takes no arguments)"],
    [["agents", "--json=yes"], "--json takes no value, got 'yes'"],
  ])("%j is a usage error: %s", (argv, message) => {
    expect(usage(...argv).message).toBe(message);
  });

  it("a group without a default still shows its help when no command follows", () => {
    expect(parse("workflow")).toMatchObject({ kind: "help", stream: "stderr", exitCode: 2 });
  });
});
