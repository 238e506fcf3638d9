import { isUtf8 } from "node:buffer";

/**
 * Splits the worker's byte stream into lines without ever buffering more than `limit` bytes of one line:
 * a longer line is skipped and reported with its first bytes, so the channel stays usable. String frames
 * (a header line, raw UTF-8, a newline; see `SharedStrings`) come out whole, or as `badString` with the
 * problem when their header or body is not right.
 */
export type Frame =
  | { line: string }
  | { oversized: string }
  | { string: StringFrame }
  | { badString: string };

interface StringFrame {
  ref: number;
  text: string;
  bytes: number;
  keep: boolean;
}

const NEWLINE = 0x0a;
const PREFIX = 120;
const STRING_HEADER = '{"type":"string",';

export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;
  private skippedPrefix = "";
  /** The string frame whose body is being read (into `parts`). */
  private raw: { ref: number; bytes: number; keep: boolean } | null = null;

  constructor(private readonly limit: number) {}

  /** The frames completed by `chunk`, in order. */
  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    for (;;) {
      if (this.raw !== null) {
        start = this.takeRaw(chunk, start, frames);
        if (this.raw !== null) return frames;
      }
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
      let line: string;
      if (this.parts.length === 0) {
        // The common case, a whole line within one chunk: decoded in place, no copy.
        line = chunk.toString("utf8", from, end);
      } else {
        this.parts.push(chunk.subarray(from, end));
        line = Buffer.concat(this.parts, this.size + (end - from)).toString("utf8");
        this.parts = [];
        this.size = 0;
      }
      if (line.startsWith(STRING_HEADER)) {
        const problem = this.startRaw(line);
        if (problem !== null) frames.push({ badString: problem });
        continue;
      }
      frames.push({ line });
    }
  }

  private startRaw(header: string): string | null {
    let fields: unknown;
    try {
      fields = JSON.parse(header);
    } catch (error) {
      return `a string frame header that is not JSON: ${(error as Error).message}`;
    }
    const { ref, bytes, keep } = fields as Record<string, unknown>;
    if (
      !Number.isSafeInteger(ref) ||
      (ref as number) <= 0 ||
      !Number.isSafeInteger(bytes) ||
      (bytes as number) < 0 ||
      (bytes as number) > this.limit ||
      typeof keep !== "boolean"
    ) {
      return `a string frame header needs a positive ref, bytes (at most ${this.limit}) and keep: ${header.slice(0, PREFIX)}`;
    }
    this.raw = { ref: ref as number, bytes: bytes as number, keep };
    this.size = 0;
    return null;
  }

  /** Reads a string frame's body (and its newline) from `chunk[start…]`; returns where the rest begins. */
  private takeRaw(chunk: Buffer, start: number, frames: Frame[]): number {
    const raw = this.raw!;
    const take = Math.min(raw.bytes + 1 - this.size, chunk.length - start);
    if (take > 0) {
      // Copied: the chunk's memory may be reused by the stream.
      this.parts.push(Buffer.from(chunk.subarray(start, start + take)));
      this.size += take;
    }
    if (this.size < raw.bytes + 1) return start + take;
    const body = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    this.raw = null;
    const text = body.subarray(0, raw.bytes);
    if (body[raw.bytes] !== NEWLINE) {
      frames.push({
        badString: `string frame ${raw.ref} is not followed by a newline after its ${raw.bytes} bytes`,
      });
    } else if (!isUtf8(text)) {
      frames.push({ badString: `string frame ${raw.ref} is not UTF-8` });
    } else {
      frames.push({
        string: { ref: raw.ref, text: text.toString("utf8"), bytes: raw.bytes, keep: raw.keep },
      });
    }
    return start + take;
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
