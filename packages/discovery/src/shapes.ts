// Plain values shared by the schemas of ./schema (zod) and ./trust/record (zod/mini), so each is written once.

/** `file`: a single `.py` file; `package`: a workflow folder with an entry file of the folder's name. */
export const LAYOUTS = ["file", "package"] as const;

/** A lowercase hex SHA-256 digest. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;
export const SHA256_HEX_DESCRIPTION = "a lowercase hex SHA-256 digest";
