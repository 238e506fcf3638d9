import { Document, parse, Scalar } from "yaml";
import type { z } from "zod";
import { isMapping, type Kept } from "./read/fields";
import { AcpSchema, AgentProfileFileSchema } from "./schema/agent-profile";

/**
 * The canonical form of a user profile file (agent-profiles.md 1.4 step 2): `name` and `id` first, then the
 * fields in the reference's order; fields equal to their defaults and unknown keys dropped; `approval`
 * written out in full (not for ACP agents, which ignore it); comments and formatting not kept. Unknown tool
 * kinds and the silently accepted keys (`metadata`, `tools.custom`, `approval.user_can_override`) are kept.
 */
export function canonicalProfileYaml(
  accepted: Record<string, unknown>,
  kept: readonly Kept[],
  id: string,
): string {
  const body = dropDefaults(AgentProfileFileSchema, accepted);
  delete body["name"];
  delete body["id"];
  const isAcp = "acp" in accepted;
  if (!isAcp) {
    const approval = AgentProfileFileSchema.shape.approval.parse(accepted["approval"]);
    body["approval"] = { default: approval.default, overrides: approval.overrides };
  }
  const ordered: Record<string, unknown> = { name: String(accepted["name"]).trim(), id };
  for (const key of Object.keys(AgentProfileFileSchema.shape)) if (key in body) ordered[key] = body[key];
  for (const k of kept) setPath(ordered, k.path, k.value);
  const doc = new Document(ordered);
  const idNode = doc.get("id", true);
  if (idNode instanceof Scalar && readsAsNonString(id)) idNode.type = Scalar.QUOTE_DOUBLE;
  return doc.toString({ lineWidth: 0 });
}

/** True when YAML (1.2 core, or a 1.1 reader's `yes`/`on`/`0x1F`) would read the text as a non-string. */
export function readsAsNonString(text: string): boolean {
  try {
    return (
      typeof parse(text, { schema: "core" }) !== "string" ||
      typeof parse(text, { version: "1.1" }) !== "string"
    );
  } catch {
    return true;
  }
}

type AnySchema = z.ZodType;

function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  for (;;) {
    const def = s._zod.def as { type: string; innerType?: AnySchema; in?: AnySchema };
    if (def.innerType !== undefined && ["default", "prefault", "optional", "nullable"].includes(def.type))
      s = def.innerType;
    else if (def.type === "pipe" && def.in !== undefined) s = def.in;
    else return s;
  }
}

function objectShape(schema: AnySchema): Record<string, AnySchema> | null {
  const def = schema._zod.def as { type: string; shape?: Record<string, AnySchema> };
  return def.type === "object" && def.shape !== undefined ? def.shape : null;
}

/** The object schema an element of a list uses (a discriminated union picks the option by its tag). */
function elementObject(schema: AnySchema, element: Record<string, unknown>): AnySchema | null {
  const s = unwrap(schema);
  if (objectShape(s) !== null) return s;
  const def = s._zod.def as { type: string; options?: AnySchema[] };
  if (def.type !== "union" || def.options === undefined) return null;
  return (
    def.options.find((o) => objectShape(o)?.["transport"]?.safeParse(element["transport"]).success) ?? null
  );
}

function dropDefaults(schema: AnySchema, input: Record<string, unknown>): Record<string, unknown> {
  const shape = objectShape(unwrap(schema)) ?? {};
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(shape)) {
    if (!(key in input)) continue;
    const value = input[key];
    if (key === "acp" && schema === AgentProfileFileSchema) {
      out[key] = isMapping(value) ? dropDefaults(AcpSchema, value) : {};
      continue;
    }
    const inner = unwrap(field);
    if (objectShape(inner) !== null && isMapping(value)) {
      const sub = dropDefaults(inner, value);
      if (Object.keys(sub).length > 0) out[key] = sub;
      continue;
    }
    const def = inner._zod.def as { type: string; element?: AnySchema };
    if (def.type === "array" && def.element !== undefined && Array.isArray(value) && value.every(isMapping)) {
      const element = def.element;
      const items = value.map((e) => {
        const s = elementObject(element, e);
        return s === null ? e : dropDefaults(s, e);
      });
      if (items.length > 0) out[key] = items;
      continue;
    }
    if (!isDefault(field, value)) out[key] = value;
  }
  return out;
}

function isDefault(field: AnySchema, value: unknown): boolean {
  const d = field.safeParse(undefined);
  if (!d.success) return false;
  const v = field.safeParse(value);
  return v.success && deepEqual(v.data, d.data);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isMapping(a) && isMapping(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    if (!isMapping(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[path.at(-1) as string] = value;
}
