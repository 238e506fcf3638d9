import { describe, expect, it } from "vitest";
import { ORPHAN_ERROR_CLASS } from "../../src/index";
import { runInit, scriptedEvents, sessionInit } from "./fixtures";
import { finish, useFixture } from "./harness";
import type { StoreFixture } from "./index";

export function recoveryConformance(name: string, init: () => Promise<StoreFixture>): void {
  describe(`${name}: orphan recovery`, () => {
    const fx = useFixture(init);

    async function sessionWithRuns() {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const finished = await store.createRun(session.session_id, runInit());
      for (const event of scriptedEvents(finished.runId)) finished.write(event);
      await finish(finished, { outputs: [], output: {} });
      const cut = await store.createRun(session.session_id, runInit());
      for (const event of scriptedEvents(cut.runId, { end: false })) cut.write(event);
      await cut.close(); // the process "dies": no end event
      return { store, session, finished: finished.runId, cut: cut.runId };
    }

    it("leaves runs of a live process (same start marker) alone", async () => {
      const { store, session, cut } = await sessionWithRuns();
      expect(await store.recoverOrphans(session.session_id)).toEqual([]);
      expect((await store.readRun(session.session_id, cut)).end).toBeNull();
    });

    it("ends runs whose process is gone with outcome orphaned, once", async () => {
      const { store, session, finished, cut } = await sessionWithRuns();
      const recovered = await store.recoverOrphans(session.session_id, { isAlive: () => false });
      expect(recovered.map((r) => r.run_id)).toEqual([cut]);
      const record = await store.readRun(session.session_id, cut);
      expect(record.warnings).toEqual([]);
      expect(record.end).toMatchObject({
        type: "workflow_run_end",
        run_id: cut,
        seq: 9,
        outcome: "orphaned",
        reason: "",
        error_class: ORPHAN_ERROR_CLASS,
        outputs: [],
      });
      expect(record.end?.error).toContain(`pid ${process.pid}`);
      expect(record.events.at(-1)).toEqual(record.end);
      // The finished run keeps its own end; a second recovery finds nothing.
      expect((await store.readRun(session.session_id, finished)).end?.outcome).toBe("completed");
      expect(await store.recoverOrphans(session.session_id, { isAlive: () => false })).toEqual([]);
    });

    it("treats a live pid with another start marker as a different process (pid reuse)", async () => {
      const { store, session, cut } = await sessionWithRuns();
      const recovered = await store.recoverOrphans(session.session_id, {
        isAlive: () => true,
        startMarker: () => "another-boot:1",
      });
      expect(recovered.map((r) => r.run_id)).toEqual([cut]);
    });

    it("keeps outputs that had completed before the process died", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(session.session_id, runInit());
      const events = scriptedEvents(recorder.runId).slice(0, 12); // b completed, no end
      for (const event of events) recorder.write(event);
      await recorder.close();
      const [recovered] = await store.recoverOrphans(session.session_id, { isAlive: () => false });
      expect(recovered?.event.outputs).toEqual([
        { node_id: "b", activation_id: "b@iter#1", text: "B", data: null },
      ]);
    });
  });
}
