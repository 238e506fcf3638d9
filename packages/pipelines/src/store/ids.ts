import { randomBytes } from "node:crypto";
import { PipelineError } from "../codes";

/** A user definition's ID: lowercase letters, digits and `-`, 1 to 64 characters, no `/`. */
export const USER_DEFINITION_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;
/** A built-in (`builtin/<name>`) or extension (`<extension>/<name>`) definition's ID. */
export const MANAGED_DEFINITION_ID = /^[a-z0-9][a-z0-9-]{0,63}\/[a-z0-9][a-z0-9-]{0,63}$/;
export const RUN_ID = /^[0-9a-f]{32}$/;

export function checkUserDefinitionId(id: string): void {
  if (!USER_DEFINITION_ID.test(id)) {
    throw new PipelineError(
      "pipeline_invalid_id",
      `"${id}" is not a definition ID: expected 1 to 64 lowercase letters, digits and -, starting with a letter or digit`,
      {
        hint: id.includes("/")
          ? "IDs with a / belong to built-in and extension definitions"
          : "for example plan-and-review",
      },
    );
  }
}

export function checkRunId(id: string): void {
  if (!RUN_ID.test(id)) {
    throw new PipelineError(
      "pipeline_invalid_id",
      `"${id}" is not a run ID: expected 32 lowercase hex characters`,
    );
  }
}

/** An ID made from a name: `Plan & Review!` → `plan-review` (`pipeline` when nothing is left). */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 56)
    .replace(/-+$/, "");
  return slug === "" ? "pipeline" : slug;
}

/** `base`, else `base-2`, `base-3`, … : the first that `taken` does not hold. */
export function uniqueId(base: string, taken: (id: string) => boolean): string {
  if (!taken(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken(candidate)) return candidate;
  }
}

export function newRunId(): string {
  return randomBytes(16).toString("hex");
}
