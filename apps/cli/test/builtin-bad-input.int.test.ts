/**
 * The built-in workflows on input they cannot use: the run fails (exit 1, outcome `node_failed`) with a
 * message saying what was wrong and how to fix it, instead of printing that message as the output and
 * exiting 0 as if the run had worked.
 */
import { describe, expect, it } from "vitest";
import { icode, ofType, parseRunJson, project, recordOf, SLOW } from "./run-helpers";

interface Case {
  id: string;
  input: string;
  /** The node that raises. */
  node: string;
  /** What its message says. */
  says: string;
}

const CASES: Case[] = [
  {
    id: "json-format",
    input: '{"a" 1}',
    node: "explain",
    says: "ValueError: Invalid JSON: Expecting ':' delimiter at line 1, column 6. Hint: Each key in an object is followed by a colon and a value.",
  },
  { id: "json-format", input: "", node: "explain", says: "The input is empty: expected a JSON document." },
  { id: "diff-summary", input: "just words", node: "explain", says: "The input holds no unified diff" },
  { id: "diff-summary", input: "", node: "explain", says: "The input is empty: expected a unified diff." },
  { id: "outline", input: "no headings here", node: "explain", says: "No Markdown headings found in 1 line" },
  {
    id: "outline",
    input: "max-lines: 0\n# A",
    node: "explain",
    says: "expected a whole number from 1 to 500",
  },
  { id: "todo-scan", input: "no-such-folder", node: "explain", says: "No such directory or file" },
  {
    id: "word-stats",
    input: " \n ",
    node: "prepare",
    says: "The input is empty: there is nothing to count.",
  },
];

describe("built-in workflows on bad input", SLOW, () => {
  it.each(CASES)("$id fails at $node on $input", async ({ id, input, node, says }) => {
    const p = project();
    const text = await icode(p, ["workflow", "run", id, "--input", input]);
    expect(text.exitCode, text.stderr).toBe(1);
    expect(text.stdout).toBe(""); // no output: the explanation is not passed off as a result
    expect(text.stderr).toContain(`✗ Workflow failed: node '${node}' failed: ValueError: `);
    expect(text.stderr).toContain(says);

    const json = await icode(p, ["workflow", "run", id, "--input", input, "--json"]);
    expect(json.exitCode).toBe(1);
    const result = parseRunJson(json);
    expect(result).toMatchObject({ outcome: "node_failed", node_id: node, outputs: [] });
    expect(result.error).toContain(says);
    const [failed] = ofType(recordOf(p, result).events, "node_failed");
    expect(failed).toMatchObject({ node_id: node, error: { class: "exception" } });
  });

  it("json-format marks the place of the error in its progress messages", async () => {
    const p = project();
    const r = await icode(p, ["workflow", "run", "json-format", "--input", '{\n  "b" 2\n}']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('explain:     2 |   "b" 2\n');
    expect(r.stderr).toContain("explain:       |       ^\n");
  });

  it("still run to completion on good input", async () => {
    const p = project();
    const r = await icode(p, ["workflow", "run", "json-format", "--input", '{"a": 1}', "--json"]);
    expect(r.exitCode).toBe(0);
    expect(parseRunJson(r)).toMatchObject({ outcome: "completed", outputs: [{ node_id: "formatted" }] });
  });
});
