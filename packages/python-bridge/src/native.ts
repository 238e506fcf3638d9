/**
 * The last `limit` bytes written to the worker's file descriptors 1 and 2 (output that belongs to no
 * call: `os.write(1, …)`, C code, child processes), with the number of bytes dropped before them.
 */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    if (chunk.length >= this.limit) {
      this.dropped += this.size + chunk.length - this.limit;
      this.chunks = [Buffer.from(chunk.subarray(chunk.length - this.limit))];
      this.size = this.limit;
      return;
    }
    this.chunks.push(Buffer.from(chunk));
    this.size += chunk.length;
    while (this.size > this.limit) {
      const first = this.chunks[0]!;
      const excess = this.size - this.limit;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }

  /** The kept text (a character cut at the start is dropped) and the count of bytes dropped. */
  read(): { text: string; dropped_bytes: number } {
    let data = Buffer.concat(this.chunks, this.size);
    let skipped = 0;
    if (this.dropped > 0) {
      // Skip UTF-8 continuation bytes of a character whose start was dropped.
      while (skipped < data.length && skipped < 3 && (data[skipped]! & 0xc0) === 0x80) skipped++;
      data = data.subarray(skipped);
    }
    return { text: data.toString("utf8"), dropped_bytes: this.dropped + skipped };
  }
}
