/**
 * Collects streamed text deltas and hands them on at most about every `intervalMs`, so that a long reply
 * becomes tens of `text` activities rather than thousands. `flush()` hands on what is held at once (before
 * a tool call, at the end of a step) so the order of activities stays the order of the stream.
 */
export class TextCoalescer {
  #held = "";
  #timer: ReturnType<typeof setTimeout> | null = null;
  readonly #emit: (text: string) => void;
  readonly #intervalMs: number;

  constructor(emit: (text: string) => void, intervalMs = 50) {
    this.#emit = emit;
    this.#intervalMs = intervalMs;
  }

  push(delta: string): void {
    if (delta === "") return;
    this.#held += delta;
    if (this.#timer === null) this.#timer = setTimeout(() => this.flush(), this.#intervalMs);
  }

  flush(): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#held === "") return;
    const text = this.#held;
    this.#held = "";
    this.#emit(text);
  }
}
