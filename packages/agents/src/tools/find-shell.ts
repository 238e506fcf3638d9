import { accessSync, constants, statSync } from "node:fs";
import { basename, delimiter, extname, isAbsolute, join } from "node:path";

/** The shell the `shell` kind runs commands with: its tool name, its executable and how to pass a command. */
export interface FoundShell {
  /** The tool's name: the shell's name (`bash`, `zsh`, `sh`, `pwsh`, `powershell`, `cmd`). */
  name: string;
  path: string;
  args(command: string): string[];
}

const POSIX_SHELLS = ["bash", "zsh", "sh"] as const;

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first `name` on `PATH` of `env` (with `PATHEXT` on Windows), or null. */
export function findOnPath(
  name: string,
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): string | null {
  const exts =
    platform === "win32"
      ? ["", ...(env["PATHEXT"] ?? ".COM;.EXE;.BAT;.CMD").split(";").filter((e) => e !== "")]
      : [""];
  const pathVar = env["PATH"] ?? env["Path"] ?? "";
  for (const dir of pathVar.split(platform === "win32" ? ";" : delimiter)) {
    if (dir === "") continue;
    for (const ext of exts) {
      const candidate = join(dir, name + ext);
      if (executable(candidate)) return candidate;
    }
  }
  return null;
}

/**
 * Finds the shell for the `shell` tool. POSIX: `$SHELL` when it is bash, zsh or sh and exists, else `bash`
 * on `PATH`, else `sh` on `PATH`, else `/bin/sh`; commands run as `<shell> -c <command>`. Windows: `pwsh`,
 * then `powershell` (`-NoProfile -NonInteractive -Command`), else `cmd` (`%ComSpec%`, `/d /s /c`).
 */
export function findShell(
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): FoundShell {
  if (platform === "win32") {
    for (const name of ["pwsh", "powershell"]) {
      const path = findOnPath(name, env, platform);
      if (path !== null) {
        return { name, path, args: (command) => ["-NoProfile", "-NonInteractive", "-Command", command] };
      }
    }
    const comspec = env["ComSpec"] ?? env["COMSPEC"] ?? "cmd.exe";
    return { name: "cmd", path: comspec, args: (command) => ["/d", "/s", "/c", command] };
  }
  const posix = (name: string, path: string): FoundShell => ({
    name,
    path,
    args: (command) => ["-c", command],
  });
  const shellVar = env["SHELL"];
  if (shellVar !== undefined && isAbsolute(shellVar) && executable(shellVar)) {
    const name = basename(shellVar, extname(shellVar));
    if ((POSIX_SHELLS as readonly string[]).includes(name)) return posix(name, shellVar);
  }
  for (const name of ["bash", "sh"]) {
    const path = findOnPath(name, env, platform);
    if (path !== null) return posix(name, path);
  }
  return posix("sh", "/bin/sh");
}
