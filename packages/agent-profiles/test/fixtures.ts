import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { AgentProfile, ModelProfile, ProfileSource } from "../src/config";
import { unusableReason } from "../src/load-models";
import { type AgentProfileFile, AgentProfileFileSchema } from "../src/schema/agent-profile";
import { type ModelProfileFile, ModelProfileFileSchema } from "../src/schema/model-profile";

/** A temporary folder holding `files` (relative path → content). */
export async function tempTree(
  files: Record<string, string> = {},
  prefix = "agent-profiles-",
): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  await writeTree(root, files);
  return root;
}

export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  }
}

/** An effective agent profile built in memory through the file schema. */
export function agent(
  input: AgentProfileFile,
  extra: { source?: ProfileSource; file?: string | null } = {},
): AgentProfile {
  const { id, metadata: _m, ...rest } = AgentProfileFileSchema.parse(input);
  const source = extra.source ?? "user";
  return {
    ...rest,
    // As the reader does: ACP profiles are always sub-agent-only.
    sub_agent_only: rest.sub_agent_only || rest.acp !== undefined,
    id: id ?? null,
    source,
    file: extra.file ?? (source === "builtin" ? null : `/config/agents/${input.name}.yaml`),
    digest: source === "builtin" ? null : "0".repeat(64),
    kind: rest.acp === undefined ? "native" : "acp",
  };
}

/** A loaded model profile built in memory through the file schema. */
export function model(input: ModelProfileFile & { id: string }): ModelProfile {
  const settings = { ...ModelProfileFileSchema.parse(input), id: input.id };
  const reason = unusableReason(settings);
  return {
    ...settings,
    file: `/config/models/${input.id}.yaml`,
    digest: "0".repeat(64),
    usable: reason === null,
    unusableReason: reason,
  };
}

/** The value at a field path (`tools.mcp[0].url`), or a list of them for a list of paths. */
export function at(value: unknown, path: string | readonly string[]): unknown {
  if (typeof path !== "string") return path.map((p) => at(value, p));
  let v = value;
  for (const part of path.match(/[^.[\]]+/gu) ?? []) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}
