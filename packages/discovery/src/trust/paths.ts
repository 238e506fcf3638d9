import path from "node:path";
import { nodeCrypto } from "../crypto";

/** The folder of the trust store. */
export function trustDir(chrysHome: string): string {
  return path.join(chrysHome, "trust");
}

/** The file name of the record for a workflow: the SHA-256 of its absolute entry path. */
export function trustRecordName(entryPath: string): string {
  // `sha256Hex` of ../digest, written out: that module brings canonical JSON and its error types with it, and
  // `icode workflow list` reaches this file.
  return `${nodeCrypto().createHash("sha256").update(path.resolve(entryPath)).digest("hex")}.json`;
}

/** Where the record for a workflow lives: named by the SHA-256 of its absolute entry path. */
export function trustRecordPath(chrysHome: string, entryPath: string): string {
  return path.join(trustDir(chrysHome), trustRecordName(entryPath));
}
