import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventLog, readEventLog } from "./event-log";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "log-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ev = (seq: number) => ({ type: "workflow_run_paused", run_id: "r", seq, ts: 1000 + seq });

describe("EventLog", () => {
  it("appends one canonical line per event and refuses an existing file on create", () => {
    const path = join(dir, "events.jsonl");
    const log = EventLog.create(path);
    log.append({ ts: 1, type: "workflow_run_paused", seq: 0, run_id: "r" });
    log.close();
    expect(readFileSync(path, "utf8")).toBe('{"run_id":"r","seq":0,"ts":1,"type":"workflow_run_paused"}\n');
    expect(() => EventLog.create(path)).toThrow(expect.objectContaining({ code: "storage_failed" }));
  });

  it("skips torn last lines and invalid lines with warnings, keeping the rest in order", () => {
    const path = join(dir, "events.jsonl");
    writeFileSync(
      path,
      [
        JSON.stringify(ev(0)),
        "garbage",
        JSON.stringify({ type: "no_such_event", run_id: "r", seq: 2, ts: 0 }),
        JSON.stringify(ev(3)),
      ].join("\n") +
        "\n" +
        JSON.stringify(ev(4)).slice(0, 10),
    );
    const { events, warnings } = readEventLog(path);
    expect(events.map((e) => e.seq)).toEqual([0, 3]);
    expect(warnings.map((w) => w.line)).toEqual([2, 3, 5]);
    expect(warnings[2]?.message).toMatch(/last line is incomplete/);
  });

  it("accepts a complete last event that only lacks its newline", () => {
    const path = join(dir, "events.jsonl");
    writeFileSync(path, `${JSON.stringify(ev(0))}\n${JSON.stringify(ev(1))}`);
    expect(readEventLog(path).events.map((e) => e.seq)).toEqual([0, 1]);
    // Reopening starts the next event on a line of its own.
    const log = EventLog.open(path);
    log.append(ev(2));
    log.close();
    expect(readEventLog(path)).toMatchObject({ warnings: [] });
    expect(readEventLog(path).events.map((e) => e.seq)).toEqual([0, 1, 2]);
  });

  it("reopens after a torn line so that the fragment stays alone on its line", () => {
    const path = join(dir, "events.jsonl");
    writeFileSync(path, `${JSON.stringify(ev(0))}\n`);
    appendFileSync(path, '{"type":"workf');
    const log = EventLog.open(path);
    log.append(ev(1));
    log.close();
    const { events, warnings } = readEventLog(path);
    expect(events.map((e) => e.seq)).toEqual([0, 1]);
    expect(warnings.map((w) => w.line)).toEqual([2]);
  });

  it.skipIf(process.platform !== "linux")(
    "reports a full disk (/dev/full) as storage_failed, repeatedly, without crashing",
    () => {
      const log = EventLog.open("/dev/full");
      for (let i = 0; i < 2; i++) {
        expect(() => log.append(ev(i))).toThrow(expect.objectContaining({ code: "storage_failed" }));
        expect(() => log.append(ev(i))).toThrow(/ENOSPC/);
      }
      // Closing syncs; a device that cannot sync reports storage_failed too, never anything else.
      try {
        log.close();
      } catch (error) {
        expect(error).toMatchObject({ code: "storage_failed" });
      }
      expect(log.closed).toBe(true);
    },
  );

  it("appendSoon writes the lines of one event-loop turn together, in order with append", async () => {
    const path = join(dir, "events.jsonl");
    const log = EventLog.create(path);
    log.appendSoon(ev(0));
    log.appendSoon(ev(1));
    expect(readFileSync(path, "utf8")).toBe("");
    log.append(ev(2)); // flushes what waits first, so order holds
    log.appendSoon(ev(3));
    await new Promise((r) => setImmediate(r));
    expect(readEventLog(path).events.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    log.appendSoon(ev(4));
    log.close(); // close writes what waits
    expect(readEventLog(path).events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it.skipIf(process.platform !== "linux")(
    "a failed deferred write is thrown by the next append",
    async () => {
      const log = EventLog.open("/dev/full");
      log.appendSoon(ev(0));
      await new Promise((r) => setImmediate(r));
      expect(() => log.appendSoon(ev(1))).toThrow(expect.objectContaining({ code: "storage_failed" }));
      expect(() => log.flushPending()).toThrow(/ENOSPC/);
      expect(() => log.close()).toThrow(expect.objectContaining({ code: "storage_failed" }));
    },
  );

  it("reads a missing log as empty", () => {
    expect(readEventLog(join(dir, "none.jsonl"))).toEqual({ events: [], raw: [], warnings: [] });
  });
});

describe("large strings", () => {
  const big = (char: string) => char.repeat(70_000);
  const completed = (seq: number, value: { text: string; data: unknown }) => ({
    type: "node_completed",
    run_id: "r",
    seq,
    ts: 1000 + seq,
    node_id: `n${seq}`,
    activation_id: `n${seq}@iter#1`,
    iteration: 1,
    loop_id: null,
    kind: "python",
    attempt: 1,
    value,
  });

  it("are stored once each in large-strings.utf8, named from the line, and read back in place", () => {
    const path = join(dir, "events.jsonl");
    const a = big("a");
    const b = big("é€😀");
    const value = { text: a, data: { list: ["small", b, { deep: a }], other: 1 } };
    const log = EventLog.create(path);
    log.append(completed(0, value));
    log.appendSoon(completed(1, { text: "small", data: [b] }));
    log.close();

    const lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines.every((line) => line.length < 1_000)).toBe(true);
    const first = JSON.parse(lines[0]!);
    expect(first.value).toEqual({ text: "", data: { list: ["small", "", { deep: "" }], other: 1 } });
    const aBytes = Buffer.byteLength(a);
    const bBytes = Buffer.byteLength(b);
    expect(first.large_strings).toEqual([
      { at: ["value", "text"], offset: 0, bytes: aBytes },
      { at: ["value", "data", "list", 1], offset: aBytes, bytes: bBytes },
      { at: ["value", "data", "list", 2, "deep"], offset: 0, bytes: aBytes },
    ]);
    expect(JSON.parse(lines[1]!).large_strings).toEqual([
      { at: ["value", "data", 0], offset: aBytes, bytes: bBytes },
    ]);
    // Two distinct strings, each stored once, whatever the number of places that hold them.
    expect(readFileSync(join(dir, "large-strings.utf8"), "utf8")).toBe(a + b);
    expect(value.text).toBe(a); // the caller's value is not changed

    const { events, warnings } = readEventLog(path);
    expect(warnings).toEqual([]);
    expect(events[0]).toMatchObject({ value });
    expect(events[1]).toMatchObject({ value: { text: "small", data: [b] } });
  });

  it("a log opened again appends its strings after the ones already stored", () => {
    const path = join(dir, "events.jsonl");
    const first = EventLog.create(path);
    first.append(completed(0, { text: big("a"), data: null }));
    first.close();
    const again = EventLog.open(path);
    again.append(completed(1, { text: big("b"), data: null }));
    again.close();
    const { events, warnings } = readEventLog(path);
    expect(warnings).toEqual([]);
    expect(events.map((e) => (e as { value: { text: string } }).value.text[0])).toEqual(["a", "b"]);
  });

  it("a line whose strings are missing is skipped with a warning", () => {
    const path = join(dir, "events.jsonl");
    const log = EventLog.create(path);
    log.append(completed(0, { text: big("x"), data: null }));
    log.append(ev(1));
    log.close();
    writeFileSync(join(dir, "large-strings.utf8"), "x".repeat(10)); // cut short
    const { events, warnings } = readEventLog(path);
    expect(events.map((e) => e.seq)).toEqual([1]);
    expect(warnings[0]?.message).toMatch(
      /the large string at bytes 0–70000 of large-strings\.utf8 is missing/,
    );
    rmSync(join(dir, "large-strings.utf8"));
    expect(readEventLog(path).warnings[0]?.message).toMatch(/large-strings\.utf8 cannot be read/);
  });

  it("a large_strings entry that is not {at, offset, bytes} is refused", () => {
    const path = join(dir, "events.jsonl");
    const line = {
      ...completed(0, { text: "", data: null }),
      large_strings: [{ at: ["value", "text"], file: "../x" }],
    };
    writeFileSync(path, `${JSON.stringify(line)}\n`);
    const { events, warnings } = readEventLog(path);
    expect(events).toEqual([]);
    expect(warnings[0]?.message).toMatch(/not \{at, offset, bytes\}/);
  });
});
