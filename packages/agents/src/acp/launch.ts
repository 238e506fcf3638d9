import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { AcpSettings } from "@icode/agent-profiles";
import { resolveTemplates } from "@icode/agent-profiles/policy";
import { AcpFailure } from "./failure";
import { isInside } from "./paths";

/** What a child agent inherits from the engine's environment (agent-profiles.md 2.8), per platform. */
export const ACP_BASE_ENV = {
  posix: ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"],
  win32: [
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
  ],
} as const;

/** Set by the engine for every ACP child: its own depth plus one (`1` for a workflow node). */
export const ACP_DEPTH_ENV = "CHRYS_ACP_SUBAGENT_DEPTH";

/** How to start one ACP agent: everything resolved, nothing read from the engine's process. */
export interface AcpLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The child's whole environment (it inherits nothing else). */
  readonly env: Readonly<Record<string, string>>;
}

export interface LaunchOptions {
  readonly acp: AcpSettings;
  /** The session's working directory (absolute). */
  readonly workspace: string;
  /** The engine process's environment: templates and the inherited variables come from it. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly platform: NodeJS.Platform;
}

/** Looks a variable up as the platform does: exactly on POSIX, ignoring case on Windows. */
function lookup(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  platform: NodeJS.Platform,
): string | undefined {
  if (platform !== "win32") return env[name];
  const key = Object.keys(env).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

/** The child's environment: the platform's base variables that are set, the profile's `env`, the depth. */
export function childEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  extra: Readonly<Record<string, string>>,
  platform: NodeJS.Platform,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of platform === "win32" ? ACP_BASE_ENV.win32 : ACP_BASE_ENV.posix) {
    const value = lookup(env, name, platform);
    if (value !== undefined) out[name] = value;
  }
  Object.assign(out, extra);
  const parent = Number.parseInt(lookup(env, ACP_DEPTH_ENV, platform) ?? "", 10);
  out[ACP_DEPTH_ENV] = String((Number.isInteger(parent) && parent >= 0 ? parent : 0) + 1);
  return out;
}

function templated<T extends string | readonly string[] | Readonly<Record<string, string>>>(
  field: string,
  value: T,
  env: Readonly<Record<string, string | undefined>>,
): T {
  const resolved = resolveTemplates(value, env);
  if (resolved.ok) return resolved.value;
  throw new AcpFailure(
    "acp_start_failed",
    `acp.${field} uses {{${resolved.missing}}}, but the environment variable ${resolved.missing} is not set or empty`,
    { hint: `set ${resolved.missing} in the environment that runs the engine, or change acp.${field}` },
  );
}

function realDirectory(path: string, field: string): string {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch {
    throw new AcpFailure("acp_start_failed", `the agent's working directory ${path} does not exist`, {
      hint: `create it, or change ${field}`,
    });
  }
  if (!stat.isDirectory()) {
    throw new AcpFailure("acp_start_failed", `the agent's working directory ${path} is not a directory`, {
      hint: `change ${field}`,
    });
  }
  return realpathSync(path);
}

/**
 * Resolves an ACP profile's start: `{{NAME}}` templates in `command`, `args`, `env` values and `cwd` (a
 * missing or empty variable is a start error), the working directory (empty: the workspace; relative:
 * against it; outside it only with `allow_external_cwd`; it must exist), and the clean environment.
 * Throws `AcpFailure("acp_start_failed")` with what to change.
 */
export function resolveLaunch(options: LaunchOptions): AcpLaunch {
  const { acp, workspace, env, platform } = options;
  const command = templated("command", acp.command, env).trim();
  if (command === "") {
    throw new AcpFailure("acp_start_failed", "the profile's acp.command is empty", {
      hint: "set acp.command to the agent's executable (for example `codex-acp`)",
    });
  }
  const args = templated("args", acp.args, env);
  const extra = templated("env", acp.env, env);
  const cwdField = "acp.cwd";
  const written = templated("cwd", acp.cwd, env);
  const root = realDirectory(workspace, "the session's working directory");
  const cwd = realDirectory(written === "" ? workspace : resolve(workspace, written), cwdField);
  if (!acp.allow_external_cwd && !isInside(root, cwd)) {
    throw new AcpFailure(
      "acp_start_failed",
      `acp.cwd ${JSON.stringify(acp.cwd)} resolves to ${cwd}, outside the session's working directory ${root}`,
      { hint: "use a directory inside the working directory, or set acp.allow_external_cwd: true" },
    );
  }
  return { command, args, cwd, env: childEnvironment(env, extra, platform) };
}
