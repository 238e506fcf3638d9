import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { CorkedWriter } from "./writer";

/** A real stream that records each write the system would get (one entry per `_write`/`_writev`). */
function recording(): { stream: Writable; writes: string[][] } {
  const writes: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push([chunk.toString()]);
      done();
    },
    writev(chunks, done) {
      writes.push(chunks.map(({ chunk }) => String(chunk)));
      done();
    },
  });
  return { stream, writes };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("CorkedWriter", () => {
  it("sends the messages of one tick in one write", async () => {
    const { stream, writes } = recording();
    const writer = new CorkedWriter(stream);
    writer.write("a\n");
    writer.write("b\n");
    writer.write("c\n");
    expect(writes).toEqual([]); // held until the end of the tick
    await tick();
    expect(writes).toEqual([["a\n", "b\n", "c\n"]]);
    writer.write("d\n");
    await tick();
    expect(writes).toEqual([["a\n", "b\n", "c\n"], ["d\n"]]);
  });

  it("lets a burst over 64 KiB out within the tick, so the worker can start on it", () => {
    const { stream, writes } = recording();
    const writer = new CorkedWriter(stream);
    const big = "x".repeat(40 * 1024);
    writer.write(big);
    expect(writes).toEqual([]);
    writer.write(big); // 80 KiB corked: flushed now
    expect(writes).toEqual([[big, big]]);
  });

  it("swallows a write error (the worker is gone; its exit says so)", async () => {
    const stream = new Writable({
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error("EPIPE"), { code: "EPIPE" }));
      },
    });
    const writer = new CorkedWriter(stream);
    writer.write("a\n");
    await tick();
    await tick();
    expect(stream.errored).toBeTruthy();
  });
});
