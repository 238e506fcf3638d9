import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type PipelineDefinition, PipelineDefinitionSchema } from "./definition";
import type { PipelineStore } from "./store/store";

/**
 * The folder of the built-in pipelines shipped in the package (`builtin-pipelines/<name>.json`), beside the
 * code's own folder. Its name is its own, so that a bundle that copies the packages' assets beside it (as
 * the CLI does) keeps it apart from the engine's `builtin/`. Worked out when called, never at import.
 */
export function builtinPipelinesDir(): string {
  return fileURLToPath(new URL("../builtin-pipelines/", import.meta.url));
}

export interface BuiltinPipeline {
  /** `builtin/<file name without .json>`. */
  id: string;
  file: string;
  definition: PipelineDefinition;
}

/** The built-in pipelines, by ID. Throws if a shipped file does not fit the schema (a packaging bug). */
export function builtinPipelines(dir: string = builtinPipelinesDir()): BuiltinPipeline[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => {
      const file = join(dir, name);
      const definition = PipelineDefinitionSchema.parse(JSON.parse(readFileSync(file, "utf8")));
      return { id: `builtin/${name.slice(0, -".json".length)}`, file, definition };
    });
}

/**
 * Puts the built-in pipelines into `store` as locked, published `builtin` definitions: new ones added,
 * changed ones updated (their revision +1), ones no longer shipped removed. Runs keep their snapshots.
 */
export async function installBuiltinPipelines(
  store: PipelineStore,
  dir: string = builtinPipelinesDir(),
): Promise<{ added: string[]; updated: string[]; unchanged: string[]; removed: string[] }> {
  const shipped = builtinPipelines(dir);
  const before = new Map(
    (await store.listDefinitions({ source: "builtin" })).map((d) => [d.id, d.revision] as const),
  );
  const result = {
    added: [] as string[],
    updated: [] as string[],
    unchanged: [] as string[],
    removed: [] as string[],
  };
  for (const builtin of shipped) {
    const stored = await store.putManagedDefinition({
      id: builtin.id,
      source: "builtin",
      definition: builtin.definition,
    });
    const previous = before.get(builtin.id);
    if (previous === undefined) result.added.push(builtin.id);
    else if (previous !== stored.revision) result.updated.push(builtin.id);
    else result.unchanged.push(builtin.id);
    before.delete(builtin.id);
  }
  for (const id of before.keys()) {
    await store.deleteManagedDefinition(id);
    result.removed.push(id);
  }
  return result;
}
