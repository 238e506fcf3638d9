import { ValidateReportSchema } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { baseDefinition, manyNodes, place, pretty } from "../../test/helpers";
import { PIPELINE_CODES } from "../codes";
import { parsePipeline, validatePipeline } from "./validate";

type Definition = ReturnType<typeof baseDefinition>;

interface Row {
  code: string;
  /** What to break in a copy of the base definition, or the raw text to validate. */
  change: ((d: Definition) => void) | { text: string };
  stage: "read" | "load" | "graph";
  severity?: "error" | "warning";
  pointer: string | null;
  /** Where the diagnostic points: the first match of this text (or its `occurrence`-th). */
  at?: { needle: string; occurrence?: number; after?: boolean } | null;
  /** A word or phrase the message must contain. */
  says?: string;
  env?: Record<string, string>;
}

const node = (d: Definition, i: number) => d.nodes[i] as Record<string, unknown>;

// One valid base, one thing broken per row: every code of PIPELINE_CODES that validatePipeline emits for a
// text (the file-reading ones are in test/validate-file.int.test.ts).
const ROWS: Row[] = [
  {
    code: "pipeline_json_syntax",
    change: { text: '{\n  "name": "x",\n  "nodes": [,]\n}\n' },
    stage: "load",
    pointer: "/nodes/0",
    at: { needle: ",]" },
    says: "a value was expected",
  },
  {
    code: "pipeline_json_syntax",
    change: { text: '{\n  // a comment\n  "name": "x"\n}\n' },
    stage: "load",
    pointer: "",
    at: { needle: "// a comment" },
    says: "comments are not allowed",
  },
  {
    code: "pipeline_json_syntax",
    change: { text: '{\n  "name": "x",\n}\n' },
    stage: "load",
    pointer: "",
    at: { needle: "}" },
  },
  {
    code: "pipeline_duplicate_key",
    change: {
      text: '{\n  "name": "a",\n  "name": "b",\n  "nodes": [{"id": "x", "name": "X", "prompt_template": "p"}]\n}\n',
    },
    stage: "load",
    pointer: "/name",
    at: { needle: '"name"', occurrence: 1 },
    says: "given twice",
  },
  {
    code: "pipeline_unknown_field",
    change: (d) => {
      node(d, 1)["prompt"] = "x";
    },
    stage: "load",
    pointer: "/nodes/1/prompt",
    at: { needle: '"prompt"' },
    says: 'unknown field "prompt" in node "build"',
  },
  {
    code: "pipeline_unknown_field",
    change: (d) => {
      (d as Record<string, unknown>)["revision"] = 3;
    },
    stage: "load",
    pointer: "/revision",
    at: { needle: '"revision"' },
    says: "the pipeline",
  },
  {
    code: "pipeline_field_missing",
    change: (d) => {
      delete node(d, 2)["prompt_template"];
    },
    stage: "load",
    pointer: "/nodes/2/prompt_template",
    at: { needle: '{\n      "id": "check"' },
    says: 'node "check" has no "prompt_template"',
  },
  {
    code: "pipeline_field_missing",
    change: (d) => {
      delete (d as Record<string, unknown>)["name"];
    },
    stage: "load",
    pointer: "/name",
    at: { needle: "{" },
    says: 'the pipeline has no "name"',
  },
  {
    code: "pipeline_field_invalid",
    change: (d) => {
      node(d, 0)["requires_approval"] = "yes";
    },
    stage: "load",
    pointer: "/nodes/0/requires_approval",
    at: { needle: '"yes"' },
    says: 'requires_approval must be true or false, found a string ("yes")',
  },
  {
    code: "pipeline_field_invalid",
    change: (d) => {
      (d as Record<string, unknown>)["failure_policy"] = "stop";
    },
    stage: "load",
    pointer: "/failure_policy",
    at: { needle: '"stop"' },
    says: '"pause", "fail_fast", "continue"',
  },
  {
    code: "pipeline_field_invalid",
    change: (d) => {
      node(d, 1)["effort"] = "extreme";
    },
    stage: "load",
    pointer: "/nodes/1/effort",
    at: { needle: '"extreme"' },
    says: '"low", "medium", "high", "xhigh", "max", or null',
  },
  {
    code: "pipeline_field_invalid",
    change: (d) => {
      node(d, 1)["permission_mode"] = "ask";
    },
    stage: "load",
    pointer: "/nodes/1/permission_mode",
    at: { needle: '"ask"' },
    says: '"bounded", "yolo", or null',
  },
  {
    code: "pipeline_field_invalid",
    change: (d) => {
      node(d, 0)["id"] = "has space";
    },
    stage: "load",
    pointer: "/nodes/0/id",
    at: { needle: '"has space"' },
    says: "a node ID",
  },
  {
    code: "pipeline_field_invalid",
    change: (d) => {
      node(d, 1)["depends_on"] = ["plan", 7];
    },
    stage: "load",
    pointer: "/nodes/1/depends_on/1",
    at: { needle: "7" },
    says: "depends_on[1] must be a node ID",
  },
  {
    code: "pipeline_field_invalid",
    change: { text: '[\n  "not a pipeline"\n]\n' },
    stage: "load",
    pointer: "",
    at: { needle: "[" },
    says: "must be a JSON object, found an array",
  },
  {
    code: "pipeline_no_nodes",
    change: (d) => {
      d.nodes = [];
    },
    stage: "load",
    pointer: "/nodes",
    at: { needle: "[]" },
  },
  {
    code: "pipeline_too_many_nodes",
    change: (d) => {
      d.nodes = manyNodes(201);
    },
    stage: "load",
    pointer: "/nodes",
    at: { needle: "[" },
    says: "201 nodes, more than the limit of 200",
  },
  {
    code: "pipeline_too_many_nodes",
    change: (d) => {
      d.nodes = manyNodes(6);
    },
    env: { ICODE_PIPELINE_MAX_NODES: "5" },
    stage: "load",
    pointer: "/nodes",
    at: { needle: "[" },
    says: "limit of 5",
  },
  {
    code: "pipeline_many_nodes",
    change: (d) => {
      d.nodes = manyNodes(65);
    },
    stage: "load",
    severity: "warning",
    pointer: "/nodes",
    at: { needle: "[" },
    says: "65 nodes",
  },
  {
    code: "pipeline_limit_override_invalid",
    change: () => {},
    env: { ICODE_PIPELINE_MAX_NODES: "lots" },
    stage: "load",
    severity: "warning",
    pointer: null,
    at: null,
    says: 'ICODE_PIPELINE_MAX_NODES is "lots"',
  },
  {
    code: "pipeline_unknown_runtime",
    change: (d) => {
      node(d, 0)["runtime"] = "claud-code";
    },
    stage: "load",
    pointer: "/nodes/0/runtime",
    at: { needle: '"claud-code"' },
    says: 'unknown runtime "claud-code"',
  },
  {
    code: "pipeline_permissions_conflict",
    change: (d) => {
      Object.assign(node(d, 0), { permission_mode: "bounded", skip_permissions: true });
    },
    stage: "load",
    pointer: "/nodes/0/skip_permissions",
    at: { needle: "true" },
  },
  {
    code: "pipeline_output_schema_unsupported",
    change: (d) => {
      node(d, 0)["output_schema"] = { type: "array", items: { type: "string" } };
    },
    stage: "load",
    pointer: "/nodes/0/output_schema/type",
    at: { needle: '"array"' },
    says: 'the root of an output_schema must be {"type": "object", …}',
  },
  {
    code: "pipeline_output_schema_unsupported",
    change: (d) => {
      node(d, 0)["output_schema"] = {
        type: "object",
        properties: { summary: { type: "string", minLength: 3 } },
      };
    },
    stage: "load",
    pointer: "/nodes/0/output_schema/properties/summary/minLength",
    at: { needle: '"minLength"' },
    says: 'keyword "minLength" is not supported',
  },
  {
    code: "pipeline_output_schema_no_summary",
    change: (d) => {
      node(d, 0)["output_schema"] = { type: "object", properties: { verdict: { enum: ["ok", "no"] } } };
    },
    stage: "load",
    severity: "warning",
    pointer: "/nodes/0/output_schema",
    at: { needle: '"output_schema": ', after: true },
  },
  {
    code: "pipeline_duplicate_node_id",
    change: (d) => {
      node(d, 2)["id"] = "plan";
      node(d, 2)["depends_on"] = [];
    },
    stage: "graph",
    pointer: "/nodes/2/id",
    at: { needle: '"plan"', occurrence: 2 },
    says: 'node ID "plan" is used by nodes[0] and nodes[2]',
  },
  {
    code: "pipeline_unknown_dependency",
    change: (d) => {
      node(d, 2)["depends_on"] = ["biuld"];
    },
    stage: "graph",
    pointer: "/nodes/2/depends_on/0",
    at: { needle: '"biuld"' },
    says: 'depends on "biuld", which is not a node',
  },
  {
    code: "pipeline_self_dependency",
    change: (d) => {
      node(d, 2)["depends_on"] = ["build", "check"];
    },
    stage: "graph",
    pointer: "/nodes/2/depends_on/1",
    at: { needle: '"check"', occurrence: 1 },
    says: 'node "check" depends on itself',
  },
  {
    code: "pipeline_duplicate_dependency",
    change: (d) => {
      node(d, 2)["depends_on"] = ["build", "build"];
    },
    stage: "graph",
    severity: "warning",
    pointer: "/nodes/2/depends_on/1",
    at: { needle: '"build"', occurrence: 2 },
  },
  {
    code: "pipeline_dependency_cycle",
    change: (d) => {
      node(d, 0)["depends_on"] = ["check"];
    },
    stage: "graph",
    pointer: "/nodes/0/depends_on/0",
    at: { needle: '"check"' },
    says: "dependency cycle: plan → check → build → plan",
  },
  {
    code: "pipeline_reuse_session_not_ancestor",
    change: (d) => {
      node(d, 0)["reuse_session_of"] = "check";
    },
    stage: "graph",
    pointer: "/nodes/0/reuse_session_of",
    at: { needle: '"check"' },
    says: "not one of its ancestors",
  },
  {
    code: "pipeline_reuse_session_not_ancestor",
    change: (d) => {
      node(d, 2)["reuse_session_of"] = "nope";
    },
    stage: "graph",
    pointer: "/nodes/2/reuse_session_of",
    at: { needle: '"nope"' },
    says: "not a node of this pipeline",
  },
  {
    code: "pipeline_reuse_session_not_ancestor",
    change: (d) => {
      node(d, 2)["reuse_session_of"] = "check";
    },
    stage: "graph",
    pointer: "/nodes/2/reuse_session_of",
    at: { needle: '"check"', occurrence: 1 },
    says: "reuses its own session",
  },
  {
    code: "pipeline_reuse_session_mismatch",
    change: (d) => {
      Object.assign(node(d, 2), { reuse_session_of: "plan", runtime: "codex" });
    },
    stage: "graph",
    severity: "warning",
    pointer: "/nodes/2/reuse_session_of",
    at: { needle: '"plan"', occurrence: 2 },
    says: 'runtime ("auto" vs "codex")',
  },
  {
    code: "pipeline_session_shared",
    change: (d) => {
      d.nodes = [
        { id: "a", name: "A", prompt_template: "p" },
        { id: "b", name: "B", prompt_template: "p", depends_on: ["a"], reuse_session_of: "a" },
        { id: "c", name: "C", prompt_template: "p", depends_on: ["a"], reuse_session_of: "a" },
      ];
    },
    stage: "graph",
    pointer: "/nodes/2/reuse_session_of",
    at: { needle: '"a"', occurrence: 4 },
    says: 'nodes "b" and "c" both continue the session of "a"',
  },
  {
    code: "pipeline_template_unknown_variable",
    change: (d) => {
      node(d, 0)["prompt_template"] = "Plan {{task}} for {{project}}";
    },
    stage: "graph",
    severity: "warning",
    pointer: "/nodes/0/prompt_template",
    at: { needle: "{{project}}" },
    says: "{{project}} is not a template variable",
  },
  {
    code: "pipeline_template_unknown_node",
    change: (d) => {
      node(d, 1)["prompt_template"] = "Build {{upstream.plna.summary}}";
    },
    stage: "graph",
    severity: "warning",
    pointer: "/nodes/1/prompt_template",
    at: { needle: "{{upstream.plna.summary}}" },
  },
  {
    code: "pipeline_template_not_direct",
    change: (d) => {
      node(d, 2)["prompt_template"] = "Check {{upstream.plan.summary}}";
    },
    stage: "graph",
    severity: "warning",
    pointer: "/nodes/2/prompt_template",
    at: { needle: "{{upstream.plan.summary}}", occurrence: 1 },
    says: "not a direct dependency",
  },
  {
    code: "pipeline_template_not_direct",
    // Escapes and a character outside the BMP before the variable: columns count characters as written.
    change: (d) => {
      node(d, 2)["prompt_template"] = 'Check\n"quoted" 🚀\t{{upstream.plan.json}}';
    },
    stage: "graph",
    severity: "warning",
    pointer: "/nodes/2/prompt_template",
    at: { needle: "{{upstream.plan.json}}" },
  },
  {
    code: "pipeline_template_field_undeclared",
    change: (d) => {
      node(d, 1)["prompt_template"] = "Build {{upstream.plan.steps}}";
    },
    stage: "graph",
    severity: "warning",
    pointer: "/nodes/1/prompt_template",
    at: { needle: "{{upstream.plan.steps}}" },
    says: 'the output_schema of "plan" does not declare',
  },
];

function run(row: Row) {
  let text: string;
  if ("text" in row.change) text = row.change.text;
  else {
    const d = baseDefinition();
    row.change(d);
    text = pretty(d);
  }
  return { text, report: validatePipeline(text, "/w/p.json", { env: row.env ?? {} }) };
}

describe("validatePipeline: one row per diagnostic code", () => {
  it.each(ROWS.map((row, i) => [`${row.code} #${i}`, row] as const))("%s", (_name, row) => {
    const { text, report } = run(row);
    expect(ValidateReportSchema.parse(report)).toEqual(report);
    const found = report.diagnostics.find((d) => d.code === row.code);
    expect(found, JSON.stringify(report.diagnostics, null, 1)).toBeDefined();
    const severity = row.severity ?? "error";
    expect(found).toMatchObject({ stage: row.stage, severity, pointer: row.pointer, file: "/w/p.json" });
    if (row.at === null || row.at === undefined) {
      expect(found).toMatchObject({ line: null, column: null });
    } else {
      const start = place(text, row.at.needle, row.at.occurrence);
      const where = row.at.after ? { ...start, column: start.column + [...row.at.needle].length } : start;
      expect({ line: found!.line, column: found!.column }).toEqual(where);
      expect(found!.source_line).toBe(text.split("\n")[where.line - 1]);
    }
    if (row.says !== undefined) expect(found!.message).toContain(row.says);
    expect(found!.hint).not.toBeNull();
    expect(report.status).toBe(severity === "error" ? "fail" : "pass");
    const stage = report.stages.find((s) => s.name === row.stage);
    expect(stage?.status).toBe(severity === "error" ? "fail" : "pass");
  });

  it("covers every validation code that a text can trigger", () => {
    const fileOnly = [
      "pipeline_file_not_found",
      "pipeline_not_a_file",
      "pipeline_unreadable",
      "pipeline_not_utf8",
    ];
    expect(new Set(ROWS.map((r) => r.code))).toEqual(
      new Set(PIPELINE_CODES.filter((c) => !fileOnly.includes(c) && c !== "pipeline_too_large")),
    );
  });

  it("ends a variable's range just after its closing braces", () => {
    const d = baseDefinition();
    (d.nodes[2] as Record<string, unknown>)["prompt_template"] = "Check {{upstream.plan.summary}}";
    const text = pretty(d);
    const found = validatePipeline(text, null).diagnostics[0]!;
    expect(found.end_column! - found.column!).toBe("{{upstream.plan.summary}}".length);
    expect(found.file).toBeNull();
  });

  it("names each edge of a cycle in notes, with its line", () => {
    const d = baseDefinition();
    (d.nodes[0] as Record<string, unknown>)["depends_on"] = ["check"];
    const text = pretty(d);
    const found = validatePipeline(text, "/w/p.json").diagnostics.find(
      (x) => x.code === "pipeline_dependency_cycle",
    )!;
    expect(found.notes).toEqual([
      { message: '"check" depends on "build"', file: "/w/p.json", line: place(text, '"build"', 1).line },
      { message: '"build" depends on "plan"', file: "/w/p.json", line: place(text, '"plan"', 1).line },
    ]);
  });

  it("reports a too-large text in the read stage and stops", () => {
    const report = validatePipeline(" ".repeat(4 * 1024 * 1024 + 1), "/w/p.json");
    expect(report.diagnostics.map((d) => [d.code, d.stage])).toEqual([["pipeline_too_large", "read"]]);
    expect(report.stages.map((s) => s.status)).toEqual([
      "pass",
      "fail",
      "skipped",
      "skipped",
      "skipped",
      "skipped",
      "skipped",
    ]);
  });
});

describe("validatePipeline: stages and the report", () => {
  it("passes a valid pipeline: resolve and read are the caller's, metadata and environment never apply", () => {
    const text = pretty(baseDefinition());
    const report = validatePipeline(text, "/w/base.json", { path: "base.json" });
    expect(report).toMatchObject({
      version: 1,
      status: "pass",
      target: {
        path: "base.json",
        layout: "file",
        workflow_id: null,
        entry: "/w/base.json",
        package_dir: null,
        files: 1,
      },
      diagnostics: [],
      diagnostics_truncated: false,
      workflow: { title: "Base", node_count: 3, edge_count: 2, outputs: ["check"] },
      environment: null,
    });
    expect(report.target.source_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.fromEntries(report.stages.map((s) => [s.name, s.status]))).toEqual({
      resolve: "pass",
      read: "pass",
      metadata: "skipped",
      environment: "skipped",
      load: "pass",
      graph: "pass",
      bindings: "skipped",
    });
  });

  it("skips every stage after a failing one, and keeps the warnings of passing ones", () => {
    const d = baseDefinition();
    d.nodes = [...manyNodes(65), { id: "x", name: "X", prompt_template: "p", depends_on: ["x"] }];
    const report = validatePipeline(pretty(d), null);
    expect(report.diagnostics.map((x) => [x.code, x.stage])).toEqual([
      ["pipeline_many_nodes", "load"],
      ["pipeline_self_dependency", "graph"],
    ]);
    expect(report.stages.map((s) => s.status).slice(4)).toEqual(["pass", "fail", "skipped"]);
  });

  it("reports problems in the order they appear in the text", () => {
    const d = baseDefinition();
    (d.nodes[2] as Record<string, unknown>)["depends_on"] = ["gone"];
    (d.nodes[0] as Record<string, unknown>)["depends_on"] = ["plan"];
    const codes = validatePipeline(pretty(d), null).diagnostics.map((x) => [x.code, x.pointer]);
    expect(codes).toEqual([
      ["pipeline_self_dependency", "/nodes/0/depends_on/0"],
      ["pipeline_unknown_dependency", "/nodes/2/depends_on/0"],
    ]);
  });

  it("keeps at most 100 diagnostics", () => {
    const d = baseDefinition();
    d.nodes = manyNodes(150).map((n) => ({ ...n, depends_on: ["missing"] }));
    const report = validatePipeline(pretty(d), null);
    expect(report.diagnostics).toHaveLength(100);
    expect(report.diagnostics_truncated).toBe(true);
  });

  it("escapes ~ and / in pointers (RFC 6901)", () => {
    const d = baseDefinition();
    (d.nodes[0] as Record<string, unknown>)["output_schema"] = {
      type: "object",
      properties: { summary: { type: "string" }, "a/b~c": { format: "x" } },
    };
    const found = validatePipeline(pretty(d), null).diagnostics[0]!;
    expect(found.pointer).toBe("/nodes/0/output_schema/properties/a~1b~0c/format");
  });

  it("returns the definition with defaults once it loads, even when a later stage fails", () => {
    const d = baseDefinition();
    (d.nodes[0] as Record<string, unknown>)["depends_on"] = ["check"];
    const { report, definition } = parsePipeline(pretty(d), null);
    expect(report.status).toBe("fail");
    expect(definition?.nodes[1]).toMatchObject({
      runtime: "auto",
      requires_approval: false,
      output_schema: null,
    });
    expect(parsePipeline("{", null).definition).toBeNull();
  });

  it("honours ICODE_PIPELINE_MAX_NODES above the default", () => {
    const d = baseDefinition();
    d.nodes = manyNodes(250);
    const report = validatePipeline(pretty(d), null, { env: { ICODE_PIPELINE_MAX_NODES: "300" } });
    expect(report.status).toBe("pass");
    expect(report.diagnostics.map((x) => x.code)).toEqual(["pipeline_many_nodes"]);
  });
});
