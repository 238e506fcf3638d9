import type { Writable } from "node:stream";

/** Corked output past this many characters (a pipe's buffer) is written at once, within the tick. */
const CORK_FLUSH_CHARS = 64 * 1024;

/**
 * Writes framed messages to the worker's request pipe. The messages of one tick (a fan-out) go out in one
 * write: the first corks the stream and the end of the tick uncorks it. A burst goes out every
 * `CORK_FLUSH_CHARS`, so that the worker starts on the first calls of a large fan-out while the engine is
 * still starting the others.
 */
export class CorkedWriter {
  private corked = false;
  /** Characters written since the stream was corked. */
  private corkedChars = 0;

  constructor(private readonly output: Writable) {
    output.on("error", () => {}); // EPIPE when the worker is gone: the worker notices through "exit"
  }

  write(data: string): void {
    const output = this.output;
    if (!this.corked) {
      this.corked = true;
      output.cork();
      process.nextTick(this.uncork);
    }
    output.write(data);
    this.corkedChars += data.length;
    if (this.corkedChars >= CORK_FLUSH_CHARS) {
      this.corkedChars = 0;
      output.uncork();
      output.cork();
    }
  }

  private readonly uncork = (): void => {
    this.corked = false;
    this.corkedChars = 0;
    this.output.uncork();
  };
}
