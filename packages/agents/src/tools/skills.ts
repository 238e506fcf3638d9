import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import type { Skill } from "@icode/agent-profiles/policy";
import { z } from "zod";
import type { AgentTool } from "../tool";
import { brief, defineTool, toolError } from "./define-tool";
import { findOnPath } from "./find-shell";
import { describeProcess, runProcess } from "./run-process";
import { readTextFile } from "./text-file";

/** Characters of one skill resource returned at most. */
const SKILL_RESOURCE_MAX_CHARS = 100_000;

type Env = Readonly<Record<string, string | undefined>>;

/** How a script of an extension is started: an interpreter found on `PATH` and its arguments. */
export function scriptCommand(
  script: string,
  args: readonly string[],
  env: Env,
  platform: NodeJS.Platform = process.platform,
): { file: string; args: string[] } | { error: string } {
  const ext = extname(script).toLowerCase();
  const first = (names: string[]): string | null => {
    for (const name of names) {
      const found = findOnPath(name, env, platform);
      if (found !== null) return found;
    }
    return null;
  };
  const interpreters: Record<string, { names: string[]; args: string[] }> = {
    ".py": { names: platform === "win32" ? ["python", "py"] : ["python3", "python"], args: [] },
    ".sh": { names: ["bash", "sh"], args: [] },
    ".ps1": { names: ["pwsh", "powershell"], args: ["-NoProfile", "-NonInteractive", "-File"] },
    ".js": { names: ["node"], args: [] },
    ".mjs": { names: ["node"], args: [] },
    ".cjs": { names: ["node"], args: [] },
    ".rb": { names: ["ruby"], args: [] },
  };
  const interpreter = interpreters[ext];
  if (interpreter === undefined) return { file: script, args: [...args] };
  const file = first(interpreter.names);
  if (file === null) {
    return {
      error: `no ${interpreter.names.join(" or ")} on PATH to run ${basename(script)}; interpreters are not installed for you`,
    };
  }
  return { file, args: [...interpreter.args, script, ...args] };
}

function skillBody(text: string): string {
  return text.replace(/^\uFEFF?---\r?\n[\s\S]*?\r?\n---\r?(?:\n|$)/u, "").trim();
}

export interface SkillToolsOptions {
  skills: readonly Skill[];
  /** `skills.script_timeout`, seconds. */
  scriptTimeoutSeconds: number;
  env: Env;
  running: Set<() => Promise<void>>;
}

/**
 * The `skill` kind's tools for the skills a profile has (agent-profiles.md 2.4): `load_skill` returns a
 * skill's instructions (the body of its `SKILL.md`, or the inline text) and lists its resources and
 * scripts; `read_skill_resource` returns one resource (text files only, cut at 100,000 characters);
 * `run_skill_script` runs one of its scripts (the resources with an allowed extension) through execa, in the
 * working directory, with the engine's environment and `script_timeout`, unsandboxed.
 */
export function skillTools(options: SkillToolsOptions): AgentTool[] {
  const byName = new Map(options.skills.map((s) => [s.name, s]));
  const names = options.skills.map((s) => s.name);
  const SkillName = z
    .string()
    .min(1)
    .describe(`One of: ${names.join(", ")}`);
  const find = (name: string): Skill | string =>
    byName.get(name) ?? `there is no skill ${name}; the skills are ${names.join(", ")}`;
  const scriptName = (skill: Skill, path: string) =>
    skill.resources.find((r) => r.path === path)?.name ?? basename(path);

  const load = defineTool({
    name: "load_skill",
    kind: "skill",
    activityKind: "read",
    description: "Load a skill: its instructions and the resources and scripts it comes with.",
    input: z.strictObject({ name: SkillName }),
    title: (input) => `load_skill ${input.name}`,
    target(input) {
      const skill = byName.get(input.name);
      return skill?.path ? { type: "read", path: skill.path } : { type: "other" };
    },
    async execute(input) {
      const skill = find(input.name);
      if (typeof skill === "string") return toolError(skill);
      let body: string;
      if (skill.path === null) body = skill.instructions ?? "";
      else {
        try {
          body = skillBody(await readFile(skill.path, "utf8"));
        } catch (error) {
          return toolError(`cannot read ${skill.path}: ${(error as Error).message}`);
        }
      }
      const scripts = new Set(skill.scripts);
      const resources = skill.resources.map((r) => {
        const what = r.path !== null && scripts.has(r.path) ? " (script: run it with run_skill_script)" : "";
        return `- ${r.name}${what}${r.description ? `: ${r.description}` : ""}`;
      });
      const parts = [
        `# Skill ${skill.name}`,
        skill.description,
        "",
        body === "" ? "(no instructions)" : body,
      ];
      if (resources.length > 0)
        parts.push("", "Resources (read them with read_skill_resource):", ...resources);
      if (skill.dir !== null) parts.push("", `The skill's folder: ${skill.dir}`);
      return { ok: true, output: parts.join("\n") };
    },
  });

  const read = defineTool({
    name: "read_skill_resource",
    kind: "skill",
    activityKind: "read",
    description: "Read a resource file of a skill, by the name load_skill lists.",
    input: z.strictObject({
      skill: SkillName,
      resource: z.string().min(1).describe("Resource name, as listed"),
    }),
    title: (input) => `read_skill_resource ${input.skill} ${brief(input.resource)}`,
    target(input) {
      const path = byName.get(input.skill)?.resources.find((r) => r.name === input.resource)?.path;
      return path ? { type: "read", path } : { type: "other" };
    },
    async execute(input) {
      const skill = find(input.skill);
      if (typeof skill === "string") return toolError(skill);
      const resource = skill.resources.find((r) => r.name === input.resource);
      if (resource === undefined) {
        const list = skill.resources.map((r) => r.name).join(", ") || "none";
        return toolError(`skill ${skill.name} has no resource ${input.resource}; its resources: ${list}`);
      }
      let text: string;
      if (resource.path === null) text = resource.content ?? "";
      else {
        const file = await readTextFile(resource.path, `${skill.name}/${resource.name}`);
        if (!file.ok) return toolError(file.error);
        text = file.text;
      }
      if (text.length > SKILL_RESOURCE_MAX_CHARS) {
        text = `${text.slice(0, SKILL_RESOURCE_MAX_CHARS)}\n[resource cut at ${SKILL_RESOURCE_MAX_CHARS} of ${text.length} characters]`;
      }
      return { ok: true, output: text };
    },
  });

  const tools = [load, read];
  if (options.skills.some((s) => s.scripts.length > 0)) {
    const timeoutMs = options.scriptTimeoutSeconds * 1000;
    tools.push(
      defineTool({
        name: "run_skill_script",
        kind: "skill",
        activityKind: "execute",
        description:
          "Run a script of a skill (a resource load_skill marks as a script) in the working directory, with " +
          "arguments. Returns its exit code and output.",
        input: z.strictObject({
          skill: SkillName,
          script: z.string().min(1).describe("Script name, as load_skill lists it"),
          args: z.array(z.string()).optional().describe("Arguments passed to the script"),
        }),
        title: (input) =>
          `run_skill_script ${input.skill} ${brief([input.script, ...(input.args ?? [])].join(" "))}`,
        target: () => ({ type: "other" }),
        async execute(input, context) {
          const skill = find(input.skill);
          if (typeof skill === "string") return toolError(skill);
          const path = skill.scripts.find((p) => scriptName(skill, p) === input.script);
          if (path === undefined) {
            const list = skill.scripts.map((p) => scriptName(skill, p)).join(", ") || "none";
            return toolError(`skill ${skill.name} has no script ${input.script}; its scripts: ${list}`);
          }
          const command = scriptCommand(path, input.args ?? [], options.env);
          if ("error" in command) return toolError(command.error);
          const result = await runProcess(
            { ...command, cwd: context.cwd, env: options.env, timeoutMs, signal: context.signal },
            options.running,
          );
          if (result.status === "spawn_failed")
            return toolError(`${input.script} could not start: ${result.message}`);
          const text = describeProcess(result, timeoutMs);
          return result.status === "exited" && result.exitCode === 0
            ? { ok: true, output: text }
            : toolError(text);
        },
      }),
    );
  }
  return tools;
}

/** The instructions entry that tells the model which skills it can load. */
export function skillInstructions(skills: readonly Skill[]): string {
  return [
    "Skills you can use: load one with load_skill before following it.",
    ...skills.map((s) => `- ${s.name}: ${s.description}`),
  ].join("\n");
}
