import { canonicalJson } from "@icode/canonical-json";
import { nodeCrypto } from "./crypto";
import { compareCodePoints } from "./options";

/** Lowercase hex SHA-256 of bytes, or of a string's UTF-8 encoding. */
export function sha256Hex(data: string | Uint8Array): string {
  return nodeCrypto().createHash("sha256").update(data).digest("hex");
}

/** Canonical JSON (clarification 23): the digests below cover it. */
export { canonicalJson };

/** SHA-256 of a value's canonical JSON: the definition digest and the environment fingerprint use it. */
export function jsonDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * The digest of a workflow folder (clarification 23): SHA-256 of the canonical JSON of the
 * `[relative path with "/", sha256 of content]` pairs, sorted by path in code point order. The caller
 * leaves out names starting with `.` and `__pycache__` bytecode, as `readTarget` does.
 *
 * @example folderDigest([{ relPath: "a.py", sha256: "…" }]) // → sha256Hex('[["a.py","…"]]')
 */
export function folderDigest(files: ReadonlyArray<{ relPath: string; sha256: string }>): string {
  const pairs = files
    .map((file): [string, string] => [file.relPath, file.sha256])
    .sort((a, b) => compareCodePoints(a[0], b[0]));
  return sha256Hex(canonicalJson(pairs));
}
