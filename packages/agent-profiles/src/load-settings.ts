import { join } from "node:path";
import type { ConfigLocations, LoadAgentConfigOptions } from "./config";
import { readConfigFile } from "./files";
import { readSettingsFile } from "./read/settings";
import type { Report } from "./report";
import { resolveSettings } from "./settings";

/** Reads the user settings, and the project settings when the user settings enable them, then merges. */
export async function loadSettings(
  options: LoadAgentConfigOptions,
  locations: ConfigLocations,
  report: Report,
) {
  const read = async (path: string, scope: "user" | "project") => {
    const file = await readConfigFile(path, "these settings are not used");
    if (!file.ok) {
      if (file.errno === "ENOENT") return null;
      report.problems.push({ ...file.problem, severity: "warning" });
      return null;
    }
    const r = readSettingsFile(file.text, path, scope);
    report.problems.push(...r.problems);
    report.lineIndex(path, r.lineOf);
    return { file: path, values: r.values, lineOf: r.lineOf };
  };
  const user = await read(locations.userSettings, "user");
  const projectEnabled =
    (user?.values["project"] as { config_enabled?: unknown } | undefined)?.config_enabled === true;
  if (projectEnabled) locations.projectSettings = join(options.cwd, ".chrys", "settings.yaml");
  const project =
    locations.projectSettings === null ? null : await read(locations.projectSettings, "project");
  const resolved = resolveSettings({ explicit: options.explicit, env: options.env, user, project });
  report.problems.push(...resolved.problems);
  return resolved;
}
