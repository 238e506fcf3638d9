/** The limits of the spec's "File discovery" section, in one place. */
export const LIMITS = {
  /** A workflow's entry file (single file or a folder's entry): 4 MiB. */
  sourceBytes: 4 * 1024 * 1024,
  /** Files and folders inside a workflow folder, the folder itself not included. */
  packageEntries: 1000,
  /** Total size of the files inside a workflow folder: 512 MiB. */
  packageBytes: 512 * 1024 * 1024,
  /** Folder nesting inside a workflow folder: its direct subfolders are level 1. */
  packageDepth: 16,
} as const;
