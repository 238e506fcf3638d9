import { describe, expect, it } from "vitest";
import { RunIdSchema } from "../../src/index";
import { DEFINITION, QUESTION_LENGTH, QUESTIONS, runInit, scriptedEvents, sessionInit } from "./fixtures";
import { errorCode, finish, useFixture } from "./harness";
import type { StoreFixture } from "./index";

const OUTPUT = { load: { text: "loaded\n", truncated: false }, native: { text: "", dropped_bytes: 0 } };

export function runConformance(name: string, init: () => Promise<StoreFixture>): void {
  describe(`${name}: runs`, () => {
    const fx = useFixture(init);

    it("creates a run with a 32-hex ID and records it in the session", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(session.session_id, runInit());
      await recorder.close();
      expect(RunIdSchema.safeParse(recorder.runId).success).toBe(true);
      expect(recorder.sessionId).toBe(session.session_id);
      expect((await store.loadSession(session.session_id)).runs).toEqual([recorder.runId]);
      expect(await store.listRuns(session.session_id)).toEqual([recorder.runId]);
    });

    it("keeps the header, definition, environment and input, and lists runs in start order", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const ids = ["0".repeat(31) + "f", "a".repeat(32), "1".repeat(32)];
      for (const run_id of ids)
        await (await store.createRun(session.session_id, runInit({ run_id }))).close();
      expect(await store.listRuns(session.session_id)).toEqual(ids);
      const record = await store.readRun(session.session_id, ids[1]!);
      expect(record.header).toMatchObject({
        run_id: ids[1],
        session_id: session.session_id,
        workflow_id: "demo",
        pid: process.pid,
        engine_version: "0.1.0-test",
      });
      expect(record.definition).toEqual(DEFINITION);
      expect(record.environment).toEqual(runInit().environment);
      expect(record.input).toEqual({ text: "hello", data: { lang: "en" } });
      expect(record.outputs).toBeNull();
      expect(record.output).toBeNull();
      expect(record.events).toEqual([]);
      expect(record.end).toBeNull();
    });

    it("rejects a run ID that exists, a malformed one and an unknown session", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const run_id = "b".repeat(32);
      await (await store.createRun(session.session_id, runInit({ run_id }))).close();
      expect(await errorCode(() => store.createRun(session.session_id, runInit({ run_id })))).toBe(
        "run_exists",
      );
      expect(
        await errorCode(() => store.createRun(session.session_id, runInit({ run_id: "B".repeat(32) }))),
      ).toBe("invalid_id");
      expect(await errorCode(() => store.createRun("3f2b8c1e-6d4a-4b7e-9c1f-0a2b3c4d5e6f", runInit()))).toBe(
        "session_not_found",
      );
      expect(await errorCode(() => store.readRun(session.session_id, "c".repeat(32)))).toBe("run_not_found");
    });

    it("appends events in order and reads them back, question and answer summaries cut to 512", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(session.session_id, runInit());
      const events = scriptedEvents(recorder.runId);
      for (const event of events) recorder.write(event);
      await recorder.flush?.();
      await finish(recorder, {
        outputs: [{ node_id: "b", activation_id: "b@iter#1", text: "B", data: null }],
        output: OUTPUT,
      });
      const record = await store.readRun(session.session_id, recorder.runId);
      expect(record.warnings).toEqual([]);
      expect(record.events.map((e) => e.seq)).toEqual(events.map((e) => e.seq));
      const question = record.events.find((e) => e.type === "question");
      expect(QUESTION_LENGTH).toBeGreaterThan(512);
      expect(question?.type === "question" && Array.from(question.summary).length).toBe(512);
      expect(question?.type === "question" && question.summary.endsWith("…")).toBe(true);
      expect(question?.type === "question" && question.questions).toEqual(QUESTIONS);
      const others = record.events.filter((e) => e.type !== "question");
      expect(others).toEqual(events.filter((e) => e.type !== "question"));
      expect(record.end).toMatchObject({ type: "workflow_run_end", outcome: "completed", reason: "" });
      expect(record.outputs).toEqual([{ node_id: "b", activation_id: "b@iter#1", text: "B", data: null }]);
      expect(record.output).toEqual(OUTPUT);
    });

    it("refuses events of another run and after finishing, with storage_failed", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(session.session_id, runInit());
      const [start] = scriptedEvents("d".repeat(32));
      expect(await errorCode(() => recorder.write(start!))).toBe("storage_failed");
      await finish(recorder, { outputs: [], output: { error: "collecting output failed: worker gone" } });
      expect(await errorCode(() => recorder.write(scriptedEvents(recorder.runId)[0]!))).toBe(
        "storage_failed",
      );
      const record = await store.readRun(session.session_id, recorder.runId);
      expect(record.events).toEqual([]);
      expect(record.output).toEqual({ error: "collecting output failed: worker gone" });
    });

    it("saves node diagnostics per attempt and nothing when nothing was captured", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(session.session_id, runInit());
      await recorder.writeNodeDiagnostics({
        node_id: "a",
        activation_id: "a@iter#1",
        attempt: 1,
        phases: [{ phase: "node", stdout: { text: "", truncated: false } }],
      });
      const saved = [
        {
          node_id: "a",
          activation_id: "a@iter#1",
          attempt: 1,
          phases: [{ phase: "node" as const, stdout: { text: "try 1\n", truncated: false } }],
        },
        {
          node_id: "a",
          activation_id: "a@iter#1",
          attempt: 2,
          phases: [{ phase: "node" as const, stdout: { text: "x".repeat(10), truncated: true } }],
        },
        {
          node_id: "w/x",
          activation_id: "w/x@iter#3",
          attempt: 1,
          phases: [{ phase: "conditions" as const, stdout: { text: "cond\n", truncated: false } }],
        },
      ];
      for (const record of saved) await recorder.writeNodeDiagnostics(record);
      await recorder.close();
      const record = await store.readRun(session.session_id, recorder.runId);
      expect(record.diagnostics).toEqual(saved);
    });
    it("stores queued events on flushPending and reads them back from any sequence number", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(session.session_id, runInit());
      const events = scriptedEvents(recorder.runId);
      for (const event of events.slice(0, 4)) recorder.write(event);
      await recorder.flushPending();
      expect((await recorder.readEvents()).map((e) => e.seq)).toEqual([0, 1, 2, 3]);
      expect((await store.readEvents(session.session_id, recorder.runId, 2)).map((e) => e.seq)).toEqual([
        2, 3,
      ]);
      for (const event of events.slice(4)) recorder.write(event);
      await recorder.flushPending();
      const replay = await recorder.readEvents(6);
      expect(replay[0]).toMatchObject({ type: "question", seq: 6, questions: QUESTIONS });
      expect(replay.map((e) => e.seq)).toEqual(events.slice(6).map((e) => e.seq));
      await recorder.close();
      expect(await errorCode(() => store.readEvents(session.session_id, "e".repeat(32)))).toBe(
        "run_not_found",
      );
    });

    it("writeLast stores what is queued and the run's end at once (the last try after a failure)", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(session.session_id, runInit());
      const events = scriptedEvents(recorder.runId);
      recorder.write(events[0]!);
      await recorder.writeLast(events[events.length - 1]!);
      await recorder.close();
      const record = await store.readRun(session.session_id, recorder.runId);
      expect(record.events.map((e) => e.type)).toEqual(["workflow_run_start", "workflow_run_end"]);
      expect(record.end?.outcome).toBe("completed");
    });

    it("finds the session of a run by its ID alone", async () => {
      const { store, workspace } = fx();
      const first = await store.createSession(sessionInit(workspace));
      const second = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(second.session_id, runInit());
      await recorder.close();
      expect(await store.findRun(recorder.runId)).toBe(second.session_id);
      expect(await store.findRun("f".repeat(32))).toBeNull();
      expect(await store.findRun("not-a-run")).toBeNull();
      expect(first.session_id).not.toBe(second.session_id);
    });
    it("keeps each agent attempt's transcript, whole, by activation and attempt", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(session.session_id, runInit());
      const transcript = (attempt: number) => ({
        node_id: "review",
        activation_id: "review@iter#1",
        attempt,
        transcript: {
          runtime: "native",
          messages: [{ role: "user", content: `try ${attempt}` }],
          usage: null,
        },
      });
      await recorder.writeTranscript(transcript(2));
      await recorder.writeTranscript(transcript(1));
      await recorder.close();
      const record = await store.readRun(session.session_id, recorder.runId);
      expect(record.transcripts).toEqual([transcript(1), transcript(2)]);
    });

    it("has every transcript write started before close() stored once close() resolves", async () => {
      const { store, workspace } = fx();
      const session = await store.createSession(sessionInit(workspace));
      const recorder = await store.createRun(session.session_id, runInit());
      const attempts = Array.from({ length: 20 }, (_, i) => i + 1);
      for (const attempt of attempts) {
        // Not awaited, as the engine does: the next node goes on while the disk syncs.
        void recorder.writeTranscript({
          node_id: "review",
          activation_id: "review@iter#1",
          attempt,
          transcript: { runtime: "acp", messages: [], usage: null },
        });
      }
      await recorder.close();
      const record = await store.readRun(session.session_id, recorder.runId);
      expect(record.transcripts.map((t) => t.attempt)).toEqual(attempts);
    });
  });
}
