/**
 * Splits the worker's byte stream into lines without ever buffering more than `limit` bytes of one line:
 * a longer line is skipped and reported with its first bytes, so the channel stays usable.
 */
export type Frame = { line: string } | { oversized: string };

const NEWLINE = 0x0a;
const PREFIX = 120;

export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;
  private skippedPrefix = "";

  constructor(private readonly limit: number) {}

  /** The frames completed by `chunk`, in order. */
  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(NEWLINE, start);
      if (end < 0) {
        if (start < chunk.length) this.add(chunk.subarray(start));
        return frames;
      }
      const from = start;
      start = end + 1;
      if (this.skipping) {
        frames.push({ oversized: this.skippedPrefix });
        this.skipping = false;
        this.skippedPrefix = "";
        continue;
      }
      if (this.size + (end - from) + 1 > this.limit) {
        frames.push({ oversized: this.prefixWith(chunk.subarray(from, end)) });
        this.parts = [];
        this.size = 0;
        continue;
      }
      if (this.parts.length === 0) {
        // The common case, a whole line within one chunk: decoded in place, no copy.
        frames.push({ line: chunk.toString("utf8", from, end) });
        continue;
      }
      this.parts.push(chunk.subarray(from, end));
      const line = Buffer.concat(this.parts, this.size + (end - from));
      this.parts = [];
      this.size = 0;
      frames.push({ line: line.toString("utf8") });
    }
  }

  private add(rest: Buffer): void {
    if (this.skipping) return;
    if (this.size + rest.length + 1 > this.limit) {
      this.skippedPrefix = this.prefixWith(rest);
      this.parts = [];
      this.size = 0;
      this.skipping = true;
      return;
    }
    // Copy: the chunk's memory may be reused by the stream.
    this.parts.push(Buffer.from(rest));
    this.size += rest.length;
  }

  private prefixWith(piece: Buffer): string {
    const head = this.parts.length > 0 ? Buffer.concat([...this.parts, piece.subarray(0, PREFIX)]) : piece;
    return head.subarray(0, PREFIX).toString("utf8");
  }
}
