/**
 * `docs/cli.md` and `--help` match the code (issue 17, "Done when"): the documented commands and, for each,
 * its documented arguments and options are exactly the parser's (the command tree), and the built CLI's
 * `--help` of every command shows every one of them.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, runCli, tmpDir } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import type { CommandSpec } from "../src/command-line/spec";
import { TREE } from "../src/command-tree";

const DOC = readFileSync(join(REPO_ROOT, "docs", "cli.md"), "utf8");
const COMMANDS: CommandSpec[] = [...TREE.groups.flatMap((g) => g.commands), ...TREE.commands];
const name = (spec: CommandSpec) => spec.path.join(" ");

/** The `## \`icode …\`` sections of the doc, by command. */
function sections(): Map<string, string> {
  const out = new Map<string, string>();
  const parts = DOC.split(/^## /m).slice(1);
  for (const part of parts) {
    const heading = /^`icode ([a-z -]+)`\n/.exec(part);
    if (heading !== null) out.set(heading[1]!, part);
  }
  return out;
}

/** The options (`--name`) and arguments (`<name>`) named in the first cell of the section's table rows. */
function documented(section: string): { options: string[]; args: string[] } {
  const options = new Set<string>();
  const args = new Set<string>();
  for (const line of section.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const first = line.split(/(?<!\\)\|/)[1] ?? "";
    for (const m of first.matchAll(/`(-[a-z]|--[a-z][a-z-]*)(?: [A-Z]+)?`/g)) options.add(m[1]!);
    for (const m of first.matchAll(/`<([a-z-]+)>`/g)) args.add(m[1]!);
  }
  return { options: [...options].sort(), args: [...args].sort() };
}

function parserOptions(spec: CommandSpec): string[] {
  return [
    ...spec.options.flatMap((o) => [`--${o.name}`, ...(o.short === undefined ? [] : [`-${o.short}`])]),
    "--help",
    "-h",
  ].sort();
}

describe("docs/cli.md matches the command tree", () => {
  it("documents exactly the parser's commands, each in a section and in the overview table", () => {
    expect([...sections().keys()].sort()).toEqual(COMMANDS.map(name).sort());
    const overview = DOC.slice(0, DOC.indexOf("## "));
    for (const spec of COMMANDS) expect(overview).toContain(`[\`icode ${name(spec)}`);
  });

  it.each(COMMANDS.map((spec) => [name(spec), spec] as const))(
    "icode %s: the documented options and arguments are the parser's",
    (_, spec) => {
      const section = sections().get(name(spec))!;
      const { options, args } = documented(section);
      expect(options).toEqual(parserOptions(spec));
      expect(args).toEqual(spec.args.map((a) => a.name).sort());
    },
  );
});

describe("--help of the built CLI matches the command tree", () => {
  it.each(COMMANDS.map((spec) => [name(spec), spec] as const))("icode %s --help", async (_, spec) => {
    const r = await runCli([...spec.path, "--help"], { cwd: tmpDir() });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.startsWith(`Usage: icode ${name(spec)}`)).toBe(true);
    for (const option of spec.options) {
      const label = `--${option.name}${option.value === undefined ? "" : ` ${option.value}`}`;
      expect(r.stdout).toContain(option.short === undefined ? `  ${label}` : `  -${option.short}, ${label}`);
    }
    for (const arg of spec.args) expect(r.stdout).toContain(`  <${arg.name}>`);
    expect(r.stdout).toContain("  -h, --help");
    // And nothing the parser does not know: every option in the help is one of the spec's.
    const shown = [...r.stdout.matchAll(/^ {2}(?:-[a-z], )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]!).sort();
    expect(shown).toEqual([...spec.options.map((o) => `--${o.name}`), "--help"].sort());
  });

  it("icode --help lists every command", async () => {
    const r = await runCli(["--help"], { cwd: tmpDir() });
    for (const spec of COMMANDS)
      expect(r.stdout).toMatch(new RegExp(`\\n {2}${name(spec)} {3,}${spec.summary}`));
  });
});
