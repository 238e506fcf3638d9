import { basename, extname } from "node:path";
import { compareCodeUnits, compareFolded, type ModelProfile } from "./config";
import { listProfileFiles, readConfigFile } from "./files";
import { readModelProfile } from "./read/model-profile";
import { byLine, type Report } from "./report";
import { isProvider, type ModelProfileSettings, PROVIDERS } from "./schema/model-profile";

/** Reads `<config>/models/`: every loadable model profile, sorted by name ignoring case, then id. */
export async function loadModels(dir: string, report: Report): Promise<ModelProfile[]> {
  const listed = await listProfileFiles(dir, "model profiles");
  report.problems.push(...listed.problems);
  const models: ModelProfile[] = [];
  for (const path of listed.files) {
    const file = await readConfigFile(path, "the model profile is not loaded");
    if (!file.ok) {
      report.problems.push(file.problem);
      continue;
    }
    const read = readModelProfile(file.text, path, basename(path, extname(path)));
    report.problems.push(...read.problems.sort(byLine));
    report.lineIndex(path, read.lineOf);
    if (read.settings === null) continue;
    const reason = unusableReason(read.settings);
    models.push({
      ...read.settings,
      file: path,
      digest: file.digest,
      usable: reason === null,
      unusableReason: reason,
    });
  }
  models.sort((a, b) => compareFolded(a.name, b.name) || compareCodeUnits(a.id, b.id));
  const seenIds = new Map<string, ModelProfile>();
  const seenNames = new Map<string, ModelProfile>();
  for (const m of models) {
    const sameId = seenIds.get(m.id);
    if (sameId !== undefined)
      report.add(
        m.file,
        "model_duplicate_id",
        "warning",
        `the id "${m.id}" is also the id of ${sameId.file}; selecting it is ambiguous. Give one of them a new id.`,
        "id",
      );
    else seenIds.set(m.id, m);
    const key = m.name.toLowerCase();
    const sameName = seenNames.get(key);
    if (sameName !== undefined)
      report.add(
        m.file,
        "model_duplicate_name",
        "warning",
        `the name "${m.name}" is also used by ${sameName.file} (names are compared ignoring case); selecting it by name is ambiguous. Rename one of them.`,
        "name",
      );
    else seenNames.set(key, m);
  }
  return models;
}

/** Why a model profile cannot be selected (agent-profiles.md 4.2), or null when it is usable. */
export function unusableReason(m: ModelProfileSettings & { id: string }): string | null {
  if (m.id === "") return "its id is empty";
  if (m.name === "") return "its name is empty";
  if (!isProvider(m.provider))
    return `provider "${m.provider}" is not one of ${Object.keys(PROVIDERS).join(", ")}`;
  if (!(PROVIDERS[m.provider].styles as readonly string[]).includes(m.api_style))
    return `provider ${m.provider} does not support api_style ${m.api_style}`;
  if (m.model_id === "") return "model_id is not set";
  if (m.base_url !== "" && !/^https?:\/\//u.test(m.base_url))
    return `base_url "${m.base_url}" does not start with http:// or https://`;
  if (
    !(
      Number.isInteger(m.max_context_tokens) &&
      m.max_context_tokens > 0 &&
      Number.isInteger(m.max_output_tokens) &&
      m.max_output_tokens > 0
    )
  )
    return "its token limits are not positive integers";
  return null;
}
