import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createFsRecordStore } from "../src/index";
import { recordStoreConformance } from "./conformance/index";
import { removeDir, tempDir } from "./helpers";

// The file-system store passes the records conformance suite with a fresh CHRYS_HOME per test.
recordStoreConformance("fs store", async () => {
  const root = tempDir();
  const chrysHome = join(root, "home");
  const workspace = join(root, "project");
  mkdirSync(workspace);
  return { store: createFsRecordStore({ chrysHome }), workspace, cleanup: async () => removeDir(root) };
});
