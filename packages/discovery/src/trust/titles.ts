import { readdirSync } from "node:fs";
import { trustDir, trustRecordName } from "./paths";
import { readTrust } from "./store";

/**
 * The titles of the saved confirmations of these workflows, by entry path as given; a path is missing when
 * it has no record that `readTrust` accepts. `icode workflow list` asks this for every workflow it shows,
 * and most have no record: the trust folder is listed once, and only the records that exist are read, so a
 * project of 1,000 untrusted workflows costs one `readdir` instead of 1,000 failed opens.
 */
export async function readTrustTitles(
  chrysHome: string,
  entryPaths: readonly string[],
  options: { uid?: number | null; gid?: number | null } = {},
): Promise<Map<string, string>> {
  const titles = new Map<string, string>();
  let names: Set<string>;
  try {
    // One synchronous listing: `list` has nothing else to do meanwhile, and it spares starting libuv's
    // thread pool when there is no record to read.
    names = new Set(readdirSync(trustDir(chrysHome)));
  } catch {
    return titles; // no trust folder (or an unreadable one): no usable record, as readTrust would find
  }
  if (names.size === 0) return titles;
  const saved = entryPaths.filter((entry) => names.has(trustRecordName(entry)));
  if (saved.length === 0) return titles;
  await Promise.all(
    saved.map(async (entry) => {
      const record = await readTrust(chrysHome, entry, options);
      if (record !== null) titles.set(entry, record.title);
    }),
  );
  return titles;
}
