import { readdir, readFile } from "node:fs/promises";
import { extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { parse } from "yaml";
import type { AgentProfile } from "./config";
import { isInside } from "./paths";
import { type ConfigProblem, ProblemSink } from "./problems";
import { SKILL_NAME } from "./schema/agent-profile";
import type { ResolvedSettings } from "./settings";

export const SKILL_SOURCES = ["path", "config", "user_agents", "project_agents", "inline"] as const;
export type SkillSource = (typeof SKILL_SOURCES)[number];

/** Levels below a skill root searched for `SKILL.md`. */
export const SKILL_SEARCH_DEPTH = 2;
/** Files listed as resources of one skill, at most (ours). */
export const SKILL_RESOURCE_LIMIT = 200;

export interface SkillResource {
  name: string;
  /** Absolute path of a file resource; null for inline resources. */
  path: string | null;
  description: string;
  /** Inline content; null for files (read on demand). */
  content: string | null;
}

export interface Skill {
  name: string;
  description: string;
  source: SkillSource;
  /** The skill's folder, or null for inline skills. */
  dir: string | null;
  /** Its `SKILL.md`, or null for inline skills. */
  path: string | null;
  /** Inline skills' instructions; null for files (the body of `SKILL.md`, read on demand). */
  instructions: string | null;
  /** Other files of the skill folder (relative names), or the inline resources. */
  resources: SkillResource[];
  /** Absolute paths of resources whose extension is in `skills.script_extensions`. */
  scripts: string[];
  /** True when the skill comes from a root inside the working directory (the repository provides it). */
  projectProvided: boolean;
}

export interface DiscoverSkillsOptions {
  cwd: string;
  chrysHome: string;
  homeDir: string;
  settings: Pick<ResolvedSettings, "projectSkillsEnabled">;
}

/**
 * Finds a profile's skills (agent-profiles.md 2.4). Roots in this order: `skills.paths`, `<config>/skills/`,
 * `~/.agents/skills/` (when `auto_load_user_agents_skills`), `<cwd>/.agents/skills/` (when
 * `auto_load_cwd_agents_skills` and the user settings' `project.skills_enabled`); then inline skills. Each
 * root and two levels below it are searched for `SKILL.md`, not descending into a found skill. For equal
 * names the first wins.
 */
export async function discoverSkills(
  profile: Pick<AgentProfile, "skills" | "file" | "kind">,
  options: DiscoverSkillsOptions,
): Promise<{ skills: Skill[]; problems: ConfigProblem[] }> {
  const sink = new ProblemSink(profile.file);
  if (profile.kind === "acp") return { skills: [], problems: [] };
  const s = profile.skills;
  const roots: { dir: string; source: SkillSource; field: string | null }[] = s.paths.map((p, i) => ({
    dir: expandHome(p, options.homeDir, options.cwd),
    source: "path" as const,
    field: `skills.paths[${i}]`,
  }));
  roots.push({ dir: join(options.chrysHome, "skills"), source: "config", field: null });
  if (s.auto_load_user_agents_skills)
    roots.push({ dir: join(options.homeDir, ".agents", "skills"), source: "user_agents", field: null });
  if (s.auto_load_cwd_agents_skills && options.settings.projectSkillsEnabled) {
    roots.push({ dir: join(options.cwd, ".agents", "skills"), source: "project_agents", field: null });
  }

  const skills: Skill[] = [];
  const names = new Set<string>();
  for (const root of roots) {
    const dirs = await findSkillDirs(sink, root.dir, root.field);
    for (const dir of dirs) {
      const skill = await readSkill(
        sink,
        dir,
        root.source,
        isInside(options.cwd, dir),
        s.script_extensions,
        root.field,
      );
      if (skill === null || names.has(skill.name)) continue;
      names.add(skill.name);
      skills.push(skill);
    }
  }
  for (const inline of s.inline) {
    if (names.has(inline.name)) continue;
    names.add(inline.name);
    skills.push({
      name: inline.name,
      description: inline.description,
      source: "inline",
      dir: null,
      path: null,
      instructions: inline.instructions,
      resources: inline.resources.map((r) => ({
        name: r.name,
        path: null,
        description: r.description,
        content: r.content,
      })),
      scripts: [],
      projectProvided: false,
    });
  }
  return { skills, problems: sink.problems };
}

function expandHome(path: string, homeDir: string, cwd: string): string {
  if (path === "~") return homeDir;
  if (path.startsWith("~/") || path.startsWith("~\\")) return join(homeDir, path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}

async function entries(dir: string): Promise<import("node:fs").Dirent[] | null> {
  try {
    return (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  } catch {
    return null;
  }
}

async function findSkillDirs(sink: ProblemSink, root: string, field: string | null): Promise<string[]> {
  const top = await entries(root);
  if (top === null) {
    if (field !== null)
      sink.warn(
        "skill_root_unreadable",
        field,
        `the skill folder ${root} does not exist or cannot be listed; no skills are loaded from it`,
      );
    return [];
  }
  const found: string[] = [];
  const walk = async (dir: string, list: import("node:fs").Dirent[], depth: number) => {
    if (list.some((e) => e.name === "SKILL.md" && (e.isFile() || e.isSymbolicLink()))) {
      found.push(dir);
      return;
    }
    if (depth >= SKILL_SEARCH_DEPTH) return;
    for (const e of list) {
      if (!e.isDirectory() || e.name.startsWith(".")) continue;
      const sub = join(dir, e.name);
      const subList = await entries(sub);
      if (subList !== null) await walk(sub, subList, depth + 1);
    }
  };
  await walk(root, top, 0);
  return found;
}

async function readSkill(
  sink: ProblemSink,
  dir: string,
  source: SkillSource,
  projectProvided: boolean,
  extensions: readonly string[],
  field: string | null,
): Promise<Skill | null> {
  const path = join(dir, "SKILL.md");
  const where = field ?? "skills";
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    sink.warn(
      "skill_invalid",
      where,
      `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}); the skill is not loaded`,
    );
    return null;
  }
  const front = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\r?(?:\n|$)/u.exec(text);
  let meta: unknown = null;
  try {
    meta = front === null ? null : parse(front[1] as string, { schema: "core" });
  } catch {
    meta = null;
  }
  const m = (typeof meta === "object" && meta !== null ? meta : {}) as Record<string, unknown>;
  const name = m["name"];
  const description = m["description"];
  if (typeof name !== "string" || name.length > 64 || !SKILL_NAME.test(name)) {
    sink.warn(
      "skill_invalid",
      where,
      `${path} needs front matter with name: 1-64 lowercase letters, digits and single hyphens (found ${JSON.stringify(name ?? null)}); the skill is not loaded`,
    );
    return null;
  }
  if (typeof description !== "string" || description.length < 1 || description.length > 1024) {
    sink.warn(
      "skill_invalid",
      where,
      `${path} needs front matter with description: 1-1024 characters; the skill is not loaded`,
    );
    return null;
  }
  const files: string[] = [];
  const collect = async (d: string) => {
    for (const e of (await entries(d)) ?? []) {
      if (files.length >= SKILL_RESOURCE_LIMIT || e.name.startsWith(".")) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) await collect(p);
      else if (p !== path) files.push(p);
    }
  };
  await collect(dir);
  return {
    name,
    description,
    source,
    dir,
    path,
    instructions: null,
    resources: files.map((p) => ({
      name: relative(dir, p).split(sep).join("/"),
      path: p,
      description: "",
      content: null,
    })),
    scripts: files.filter((p) => extensions.includes(extname(p).toLowerCase())),
    projectProvided,
  };
}
