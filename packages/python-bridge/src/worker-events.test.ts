import { EventEmitter } from "eventemitter3";
import { describe, expect, expectTypeOf, it } from "vitest";
import { PythonWorker, type PythonWorkerEvents, type WorkerExit } from "./worker";

describe("PythonWorker's events", () => {
  it("come from eventemitter3 (no Node built-in), so their types serve a browser front end too", () => {
    expect(Object.getPrototypeOf(PythonWorker.prototype)).toBe(EventEmitter.prototype);
    expectTypeOf<PythonWorker>().toExtend<EventEmitter<PythonWorkerEvents>>();
  });

  it("are typed by PythonWorkerEvents: names and listener arguments are checked", () => {
    const emitter = new EventEmitter<PythonWorkerEvents>();
    const seen: unknown[] = [];
    emitter.on("native", (text, stream) => {
      expectTypeOf(text).toEqualTypeOf<string>();
      expectTypeOf(stream).toEqualTypeOf<"stdout" | "stderr">();
      seen.push([text, stream]);
    });
    emitter.on("exit", (exit) => {
      expectTypeOf(exit).toEqualTypeOf<WorkerExit>();
      seen.push(exit);
    });
    // @ts-expect-error: not an event of the worker
    emitter.on("result", () => {});
    // @ts-expect-error: protocol_error carries a string
    emitter.emit("protocol_error", 1);
    emitter.emit("native", "hi", "stderr");
    emitter.emit("exit", { code: 0, signal: null });
    expect(seen).toEqual([["hi", "stderr"], { code: 0, signal: null }]);
  });
});
