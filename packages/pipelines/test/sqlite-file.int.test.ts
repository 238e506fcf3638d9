import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openSqlitePipelineStore, pipelineStorePath } from "../src/index";
import { MIGRATIONS, SCHEMA_VERSION } from "../src/store/sqlite/migrations";
import { chain, codeOf } from "./conformance/harness";
import { tempDir } from "./helpers";

describe("the SQLite store's file", () => {
  it("is <chrysHome>/pipelines.db, created with the folder, in WAL mode at the latest schema version", async () => {
    const chrysHome = join(tempDir(), "nested", "chrys");
    const store = openSqlitePipelineStore({ chrysHome });
    await store.createDefinition(chain());
    const file = pipelineStorePath(chrysHome);
    expect(file).toBe(join(chrysHome, "pipelines.db"));
    const db = new Database(file, { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
    expect(db.prepare("SELECT id, status, revision FROM definitions").all()).toEqual([
      { id: "chain", status: "draft", revision: 1 },
    ]);
    db.close();
    await store.close();
    // Opening again migrates nothing and keeps the data.
    const again = openSqlitePipelineStore({ chrysHome });
    expect((await again.listDefinitions()).map((d) => d.id)).toEqual(["chain"]);
    await again.close();
  });

  it("refuses a database written by a newer iCode", () => {
    const chrysHome = tempDir();
    const db = new Database(pipelineStorePath(chrysHome));
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openSqlitePipelineStore({ chrysHome })).toThrow(
      expect.objectContaining({ code: "pipeline_store_too_new" }),
    );
  });

  it("fails with pipeline_store_failed when the configuration directory cannot hold it", async () => {
    const parent = tempDir();
    const chrysHome = join(parent, "file");
    writeFileSync(chrysHome, "not a folder");
    expect(() => openSqlitePipelineStore({ chrysHome })).toThrow(
      expect.objectContaining({ code: "pipeline_store_failed" }),
    );
    const notDb = tempDir();
    writeFileSync(
      pipelineStorePath(notDb),
      "this is not a database, just text that is long enough to be read",
    );
    expect(() => openSqlitePipelineStore({ chrysHome: notDb })).toThrow(
      expect.objectContaining({ code: "pipeline_store_failed" }),
    );
  });

  it("reports a closed store's operations as pipeline_store_failed", async () => {
    const store = openSqlitePipelineStore({ chrysHome: tempDir() });
    await store.close();
    expect(await codeOf(() => store.listDefinitions())).toBe("pipeline_store_failed");
  });
});
