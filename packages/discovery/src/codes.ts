import type { Stage } from "@icode/workflow-errors";

// Plain data without zod (the schema is in ./schema): `icode workflow list` loads this file and must not pay
// for loading zod and building schemas.

/**
 * The diagnostic codes this package emits: the `resolve` and `read` rows of the validate table, plus
 * `location_unreadable` for a discovery location that exists but cannot be listed (reported by
 * `icode workflow list`, never by validate).
 */
export const DISCOVERY_CODES = [
  "path_not_found",
  "path_is_link",
  "path_not_workflow",
  "name_ignored",
  "name_reserved",
  "entry_missing",
  "shadowed",
  "source_too_large",
  "package_too_large",
  "source_unreadable",
  "package_unreadable",
  "package_link",
  "package_unsupported_file",
  "source_not_utf8",
  "location_unreadable",
] as const;
/** One of `DISCOVERY_CODES` (`DiscoveryCodeSchema` in `./schema` checks it). */
export type DiscoveryCode = (typeof DISCOVERY_CODES)[number];

/** The validate stage each code belongs to. */
export const DISCOVERY_CODE_STAGES: Readonly<Record<DiscoveryCode, Stage>> = {
  path_not_found: "resolve",
  path_is_link: "resolve",
  path_not_workflow: "resolve",
  name_ignored: "resolve",
  name_reserved: "resolve",
  entry_missing: "resolve",
  shadowed: "resolve",
  source_too_large: "read",
  package_too_large: "read",
  source_unreadable: "read",
  package_unreadable: "read",
  package_link: "read",
  package_unsupported_file: "read",
  source_not_utf8: "read",
  location_unreadable: "resolve",
};
