import { describe, expect, it } from "vitest";
import { SessionIdSchema } from "../../src/index";
import { runInit, sessionInit } from "./fixtures";
import { errorCode, useFixture } from "./harness";
import type { StoreFixture } from "./index";

export function sessionConformance(name: string, init: () => Promise<StoreFixture>): void {
  describe(`${name}: sessions`, () => {
    const fx = useFixture(init);

    it("creates a workflow session with a lowercase UUID v4 and the given fields", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace, { settings: { model: "fast" } }));
      expect(SessionIdSchema.safeParse(session.session_id).success).toBe(true);
      expect(session).toMatchObject({
        kind: "workflow",
        workflow_id: "demo",
        workflow_path: `${workspace}/.chrys/workflows/demo.py`,
        source: "global",
        workspace,
        settings: { model: "fast" },
        runs: [],
      });
      expect(Number.isNaN(Date.parse(session.created_at))).toBe(false);
      expect(session.updated_at).toBe(session.created_at);
    });

    it("loads what it created and lists sessions most recently updated first", async () => {
      const { store, workspace } = fx();
      const first = await store.createSession(sessionInit(workspace));
      const second = await store.createSession(sessionInit(workspace, { workflow_id: "other" }));
      expect(await store.loadSession(first.session_id)).toEqual(first);
      await new Promise((r) => setTimeout(r, 5));
      await store.updateSession(first.session_id, { settings: { model: "m2" } });
      const { sessions, warnings } = await store.listSessions();
      expect(warnings).toEqual([]);
      expect(sessions.map((s) => s.session_id)).toEqual([first.session_id, second.session_id]);
      const only = await store.listSessions({ workflow_id: "other" });
      expect(only.sessions.map((s) => s.session_id)).toEqual([second.session_id]);
    });

    it("rejects unknown and malformed session IDs with codes", async () => {
      const { store } = fx();
      expect(await errorCode(() => store.loadSession("3f2b8c1e-6d4a-4b7e-9c1f-0a2b3c4d5e6f"))).toBe(
        "session_not_found",
      );
      expect(await errorCode(() => store.loadSession("../../etc"))).toBe("invalid_id");
      expect(await errorCode(() => store.loadSession("3F2B8C1E-6D4A-4B7E-9C1F-0A2B3C4D5E6F"))).toBe(
        "invalid_id",
      );
    });

    it("rejects relative paths at creation", async () => {
      const { store, workspace } = fx();
      expect(
        await errorCode(() => store.createSession(sessionInit(workspace, { workspace: "rel/dir" }))),
      ).toBe("record_invalid");
    });

    it("merges settings and keeps keys it does not know", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(
        sessionInit(workspace, { settings: { model: "a", theme: "dark" } }),
      );
      const updated = await store.updateSession(session.session_id, { settings: { model: null } });
      expect(updated.settings).toEqual({ model: null, theme: "dark" });
      expect(await store.loadSession(session.session_id)).toEqual(updated);
    });

    it("lets the workspace change only while a non-project session has no runs", async () => {
      const { store, workspace } = fx();
      const global = await store.createSession(sessionInit(workspace));
      const moved = await store.updateSession(global.session_id, { workspace: `${workspace}/sub` });
      expect(moved.workspace).toBe(`${workspace}/sub`);
      await store.createRun(global.session_id, runInit()).then((r) => r.close());
      expect(await errorCode(() => store.updateSession(global.session_id, { workspace }))).toBe(
        "session_fixed",
      );
      const project = await store.createSession(sessionInit(workspace, { source: "project" }));
      expect(
        await errorCode(() => store.updateSession(project.session_id, { workspace: `${workspace}/x` })),
      ).toBe("session_fixed");
      // Naming the same workspace again is not a change.
      expect((await store.updateSession(project.session_id, { workspace })).workspace).toBe(workspace);
    });
  });
}
