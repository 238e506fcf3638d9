import path from "node:path";

/**
 * The iCode configuration directory: `CHRYS_HOME` when set (and not empty), else `%APPDATA%\chrys` on
 * Windows (`<home>\AppData\Roaming\chrys` when `APPDATA` is unset) and `~/.chrys` elsewhere.
 *
 * @example configDir(process.env, os.homedir(), process.platform) // → "/home/ada/.chrys"
 */
export function configDir(
  env: Readonly<Record<string, string | undefined>>,
  homedir: string,
  platform: NodeJS.Platform,
): string {
  const explicit = env["CHRYS_HOME"];
  if (explicit !== undefined && explicit !== "") return explicit;
  if (platform === "win32") {
    const appData = env["APPDATA"];
    return appData !== undefined && appData !== ""
      ? path.win32.join(appData, "chrys")
      : path.win32.join(homedir, "AppData", "Roaming", "chrys");
  }
  return path.posix.join(homedir, ".chrys");
}
