import type { Database } from "better-sqlite3";
import { PipelineError } from "../../codes";

/**
 * The schema, one migration per version (`PRAGMA user_version`). A migration is never edited once shipped:
 * a change is a new entry. Each runs in an immediate transaction that re-reads the version, so two
 * processes opening a new database at once apply it once.
 */
export const MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE definitions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('draft', 'published')),
        revision INTEGER NOT NULL CHECK (revision >= 1),
        source TEXT NOT NULL CHECK (source IN ('user', 'builtin', 'extension')),
        locked INTEGER NOT NULL CHECK (locked IN (0, 1)),
        definition TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        published_at INTEGER
      );
      CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        definition_id TEXT NOT NULL,
        definition_revision INTEGER NOT NULL,
        definition TEXT NOT NULL,
        task_input TEXT NOT NULL,
        state TEXT NOT NULL,
        failure_policy TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX runs_by_definition ON runs (definition_id, created_at);
      CREATE INDEX runs_by_state ON runs (state, created_at);
      CREATE TABLE run_nodes (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        node_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        handoff TEXT,
        session_ref TEXT,
        approval_granted INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, node_id)
      ) WITHOUT ROWID;
      CREATE TABLE leases (
        run_id TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
        owner TEXT,
        generation INTEGER NOT NULL,
        acquired_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE TABLE commands (
        command_id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        command TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('queued', 'taken', 'done')),
        enqueued_at INTEGER NOT NULL,
        taken_by TEXT,
        taken_at INTEGER,
        completed_at INTEGER,
        result TEXT
      );
      CREATE INDEX commands_by_run ON commands (run_id, state, command_id);
    `,
  },
  {
    version: 2,
    sql: `
      CREATE TABLE run_events (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        seq INTEGER NOT NULL CHECK (seq >= 1),
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        time INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq)
      ) WITHOUT ROWID;
      CREATE TABLE node_attempts (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        node_id TEXT NOT NULL,
        attempt INTEGER NOT NULL CHECK (attempt >= 1),
        prompt TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        session_ref TEXT,
        corrections INTEGER NOT NULL DEFAULT 0,
        transcript TEXT,
        usage TEXT,
        handoff TEXT,
        reason TEXT,
        error TEXT,
        PRIMARY KEY (run_id, node_id, attempt)
      ) WITHOUT ROWID;
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Brings the database to `SCHEMA_VERSION`; refuses one written by a newer iCode. */
export function migrate(db: Database, file: string): void {
  const version = () => db.pragma("user_version", { simple: true }) as number;
  const check = (found: number) => {
    if (found > SCHEMA_VERSION) {
      throw new PipelineError(
        "pipeline_store_too_new",
        `${file} has schema version ${found}; this iCode knows versions up to ${SCHEMA_VERSION}`,
        { hint: "upgrade iCode, or point CHRYS_HOME elsewhere" },
      );
    }
  };
  check(version());
  for (const migration of MIGRATIONS) {
    if (migration.version <= version()) continue;
    db.transaction(() => {
      const current = version();
      check(current);
      if (current >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}
