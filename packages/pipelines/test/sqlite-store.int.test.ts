import { rm } from "node:fs/promises";
import { join } from "node:path";
import { openSqlitePipelineStore } from "../src/index";
import { pipelineStoreConformance } from "./conformance/index";
import { tempDir } from "./helpers";

// The embedded store passes the conformance suite with a fresh configuration directory per test.
pipelineStoreConformance("sqlite", async ({ now, limits }) => {
  const chrysHome = join(tempDir(), "chrys");
  const open = () => openSqlitePipelineStore({ chrysHome, now, ...(limits === undefined ? {} : { limits }) });
  const store = open();
  return {
    store,
    openAnother: async () => open(),
    cleanup: async () => {
      await store.close();
      await rm(chrysHome, { recursive: true, force: true });
    },
  };
});
