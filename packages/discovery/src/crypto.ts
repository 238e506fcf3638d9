/**
 * `node:crypto`, loaded when first used rather than when this package is. Every module of discovery can be
 * reached from `icode workflow list`, which hashes nothing unless the trust folder holds records, and Node
 * loads `node:crypto` on demand (~4 ms of a ~110 ms cold `list`).
 */
export function nodeCrypto(): typeof import("node:crypto") {
  return process.getBuiltinModule("node:crypto");
}
