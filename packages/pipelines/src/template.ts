import type { PipelineNode } from "./definition";
import type { Handoff } from "./handoff";

/** One `{{…}}` of a prompt template, with where it is (UTF-16 offsets into the template). */
export type TemplateVariable = { offset: number; length: number; raw: string } & (
  | { kind: "task" }
  | { kind: "upstream_summaries" }
  | { kind: "upstream"; node: string; field: "summary" | "json" | (string & {}) }
  /** Looks like a variable (`{{name}}`, `{{a.b}}`) but is none of the above: left as written. */
  | { kind: "unknown"; name: string }
);

const VARIABLE = /\{\{([^{}]*)\}\}/g;
const UPSTREAM = /^upstream\.([A-Za-z0-9_-]+)\.([^.\s]+)$/;
const LOOKS_LIKE_A_VARIABLE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * The variables of a template, in order. Spaces just inside the braces are allowed (`{{ task }}`); text in
 * braces that does not look like a name (`{{"a": 1}}`) is not a variable at all.
 */
export function scanTemplate(template: string): TemplateVariable[] {
  const found: TemplateVariable[] = [];
  for (const match of template.matchAll(VARIABLE)) {
    const name = match[1]!.trim();
    const at = { offset: match.index, length: match[0].length, raw: match[0] };
    if (name === "task") found.push({ ...at, kind: "task" });
    else if (name === "upstream_summaries") found.push({ ...at, kind: "upstream_summaries" });
    else {
      const upstream = UPSTREAM.exec(name);
      if (upstream !== null) found.push({ ...at, kind: "upstream", node: upstream[1]!, field: upstream[2]! });
      else if (LOOKS_LIKE_A_VARIABLE.test(name)) found.push({ ...at, kind: "unknown", name });
    }
  }
  return found;
}

export interface PromptContext {
  /** The run's `task_input`. */
  task: string;
  /** The node whose prompt this is: its `depends_on` are the direct dependencies that get rendered. */
  node: Pick<PipelineNode, "depends_on">;
  /** The handoffs of finished upstream nodes by ID; only those of direct dependencies are used. */
  upstream: Readonly<Record<string, Handoff>>;
}

/**
 * Renders a prompt template (the reference's "Template variables"):
 *
 * - `{{task}}`: the task input.
 * - `{{upstream.<id>.summary}}`, `{{upstream.<id>.<field>}}`: a top-level field of a direct dependency's
 *   handoff; a string as it is, any other value as JSON (2-space indented), a missing field as "".
 * - `{{upstream.<id>.json}}`: the whole handoff as JSON (2-space indented).
 * - `{{upstream_summaries}}`: each direct dependency with a handoff, in `depends_on` order, as
 *   `<id>: <summary>`, separated by a blank line; `(no summary)` for an empty or missing summary; `""` when
 *   there is none.
 *
 * A variable naming a node that is not a direct dependency, or one that has no handoff in `upstream`, and
 * every other `{{…}}`, is left exactly as written. Rendering is one pass: text a handoff brings in is
 * never rendered again.
 *
 * @example
 * renderPrompt("Fix: {{upstream.review.summary}} ({{upstream.plan.summary}})", {
 *   task: "t", node: { depends_on: ["review"] }, upstream: { review: { summary: "2 bugs" } },
 * });
 * // → "Fix: 2 bugs ({{upstream.plan.summary}})"
 */
export function renderPrompt(template: string, context: PromptContext): string {
  const direct = [...new Set(context.node.depends_on)];
  const handoffOf = (id: string): Handoff | undefined =>
    direct.includes(id) && Object.hasOwn(context.upstream, id) ? context.upstream[id] : undefined;
  let out = "";
  let last = 0;
  for (const variable of scanTemplate(template)) {
    const value = renderVariable(variable, context.task, direct, handoffOf);
    if (value === null) continue;
    out += template.slice(last, variable.offset) + value;
    last = variable.offset + variable.length;
  }
  return out + template.slice(last);
}

function renderVariable(
  variable: TemplateVariable,
  task: string,
  direct: readonly string[],
  handoffOf: (id: string) => Handoff | undefined,
): string | null {
  switch (variable.kind) {
    case "task":
      return task;
    case "upstream_summaries":
      return direct
        .flatMap((id) => {
          const handoff = handoffOf(id);
          if (handoff === undefined) return [];
          const value = own(handoff, "summary");
          const summary = value === undefined ? "" : asText(value);
          return [`${id}: ${summary.trim() === "" ? "(no summary)" : summary}`];
        })
        .join("\n\n");
    case "upstream": {
      const handoff = handoffOf(variable.node);
      if (handoff === undefined) return null;
      if (variable.field === "json") return JSON.stringify(handoff, null, 2);
      const value = own(handoff, variable.field);
      return value === undefined ? "" : asText(value);
    }
    case "unknown":
      return null;
  }
}

/** A field of the handoff itself, never one of `Object.prototype` (`{{upstream.a.constructor}}`). */
function own(handoff: Handoff, field: string): unknown {
  return Object.hasOwn(handoff, field) ? handoff[field] : undefined;
}

function asText(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "");
}
