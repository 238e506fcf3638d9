import type { CapturedText } from "@icode/workflow-graph";

/** How much of an ACP agent's stderr an attempt keeps: the last 64 KiB. */
export const STDERR_LIMIT_BYTES = 64 * 1024;

/**
 * Keeps the last `limit` bytes a process wrote to stderr, so an agent that logs without end costs bounded
 * memory, and the end of its output (where a crash says why) survives.
 */
export class StderrTail {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private dropped = false;

  constructor(private readonly limit: number = STDERR_LIMIT_BYTES) {}

  push(chunk: Buffer | string): void {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    this.chunks.push(buffer);
    this.bytes += buffer.length;
    if (this.bytes > this.limit * 2) this.compact();
  }

  private compact(): void {
    const all = Buffer.concat(this.chunks);
    if (all.length > this.limit) {
      this.chunks = [all.subarray(all.length - this.limit)];
      this.dropped = true;
    } else {
      this.chunks = [all];
    }
    this.bytes = this.chunks[0]!.length;
  }

  /** The text kept; `truncated` when earlier output was dropped. A character cut at the start is skipped. */
  captured(): CapturedText {
    this.compact();
    let tail = this.chunks[0] ?? Buffer.alloc(0);
    if (this.dropped) {
      let start = 0;
      // Skip UTF-8 continuation bytes (10xxxxxx) of a character cut in half.
      while (start < tail.length && start < 4 && (tail[start]! & 0xc0) === 0x80) start += 1;
      tail = tail.subarray(start);
    }
    return { text: tail.toString("utf8"), truncated: this.dropped };
  }
}
