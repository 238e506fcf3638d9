/** `{{NAME}}`: letters, digits and `_`, not starting with a digit. Anything else in braces is literal text. */
const TEMPLATE = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/** Result of resolving `{{NAME}}` placeholders: the value, or the first variable that is missing or empty. */
export type TemplateResult<T> = { ok: true; value: T } | { ok: false; missing: string };

/** Names of the `{{NAME}}` placeholders in a string, in order of appearance, without repeats. */
export function templateNames(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(TEMPLATE), (m) => m[1] as string))];
}

/**
 * Replaces every `{{NAME}}` in a string, a list of strings or a string map with the environment variable
 * `NAME`. A variable that is unset or empty fails the whole value: a connection or start that needs it must
 * not go ahead with a blank. Text in braces that is not a valid name (`{{ x }}`, `{{1A}}`) stays as written.
 */
export function resolveTemplates<T extends string | readonly string[] | Readonly<Record<string, string>>>(
  value: T,
  env: Readonly<Record<string, string | undefined>>,
): TemplateResult<T> {
  let missing: string | null = null;
  const one = (text: string): string =>
    text.replace(TEMPLATE, (whole, name: string) => {
      const found = env[name];
      if (found === undefined || found === "") {
        missing ??= name;
        return whole;
      }
      return found;
    });
  let out: unknown;
  if (typeof value === "string") out = one(value);
  else if (Array.isArray(value)) out = value.map(one);
  else out = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, one(v as string)]));
  return missing === null ? { ok: true, value: out as T } : { ok: false, missing };
}
