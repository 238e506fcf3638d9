import { blankStrings, findLargeStrings, type PathStep, placeString } from "@icode/workflow-graph";
import { frameJson, isRecord, LIMITS } from "./protocol";

/**
 * The large strings the engine and one worker hold in common, so that a large value crosses the pipe once
 * rather than once per node (docs/protocol.md, "Large strings").
 *
 * A string of `LIMITS.largeStringChars` or more in a value travels as a string frame: the line
 * `{"type":"string","ref":R,"bytes":B,"keep":K}`, its `B` bytes of UTF-8, a newline. The message that uses
 * it holds `""` in its place and lists it in `"strings": [{"ref": R, "at": [path…]}]`. With `keep: true`
 * both sides keep the string for the rest of the worker's life and later messages name it by `ref` alone.
 * Strings are immutable in both languages, so sharing them is safe. The sender keeps strings while the
 * tables hold at most `LIMITS.keptStringBytes`; past that its frames say `keep: false` and serve the next
 * message only. The engine numbers its strings with odd refs, the worker with even ones.
 */
export class SharedStrings {
  readonly #kept = new Map<number, Kept>();
  /** The same strings by content: see `ContentIndex`. */
  readonly #refs = new ContentIndex();
  readonly #transient = new Map<number, Kept>();
  #keptBytes = 0;
  #nextRef = 1;

  /** UTF-8 bytes of the strings kept in common. */
  get keptBytes(): number {
    return this.#keptBytes;
  }

  /** A string frame from the worker. */
  receive(ref: number, text: string, bytes: number, keep: boolean): void {
    if (!keep) {
      this.#transient.set(ref, { text, bytes });
      return;
    }
    const before = this.#kept.get(ref);
    if (before !== undefined) this.#keptBytes -= before.bytes;
    this.#kept.set(ref, { text, bytes });
    this.#refs.set(text, ref);
    this.#keptBytes += bytes;
  }

  /**
   * Puts the strings a parsed message names in their places and removes its `strings` field. Returns the
   * UTF-8 bytes of those strings (they count toward the message's size), or a problem to report. A frame
   * sent for one message alone (`keep: false`) is dropped once a message has used it.
   */
  resolve(message: Record<string, unknown>): { bytes: number } | { problem: string } {
    const refs = message.strings;
    if (refs === undefined) return NONE;
    delete message.strings;
    if (!Array.isArray(refs)) return { problem: "`strings` must be a list of {ref, at}" };
    const used: number[] = [];
    try {
      let bytes = 0;
      for (const entry of refs) {
        const ref = isRecord(entry) ? entry.ref : undefined;
        const at = isRecord(entry) ? entry.at : undefined;
        let found: Kept | undefined;
        if (typeof ref === "number") {
          found = this.#kept.get(ref);
          if (found === undefined) {
            found = this.#transient.get(ref);
            used.push(ref);
          }
        }
        if (found === undefined) return { problem: `the message names an unknown string ${short(entry)}` };
        if (!Array.isArray(at) || !placeString(message, at, found.text)) {
          return { problem: `the string ${ref} has no place ${short(at)} holding "" in the message` };
        }
        bytes += found.bytes;
      }
      return { bytes };
    } finally {
      for (const ref of used) this.#transient.delete(ref);
    }
  }

  /**
   * The framed text of a message whose values (at `paths` from the message) may hold large strings: string
   * frames for the strings the worker does not have yet, then the message with `""` in their places and
   * `strings` naming them. Returns `null` when the message, with all its strings, is over
   * `LIMITS.messageBytes`; nothing is kept then.
   */
  frame(message: Record<string, unknown>, paths: readonly (readonly PathStep[])[]): string | null {
    const found = findLargeStrings(message, paths);
    if (found.length === 0) return frameJson(message);
    const blanked = blankStrings(
      message,
      found.map((string) => string.path),
    );
    const entries: { ref: number; at: PathStep[] }[] = [];
    const frames: string[] = [];
    const added: number[] = [];
    const here = new Map<string, number>();
    let stringBytes = 0;
    for (const { path, text } of found) {
      let ref = this.#refs.get(text) ?? here.get(text);
      let bytes: number;
      if (ref !== undefined) {
        bytes = (this.#kept.get(ref) ?? { bytes: Buffer.byteLength(text, "utf8") }).bytes;
      } else {
        bytes = Buffer.byteLength(text, "utf8");
        ref = this.#nextRef;
        this.#nextRef += 2;
        here.set(text, ref);
        const keep = this.#keptBytes + bytes <= LIMITS.keptStringBytes;
        frames.push(`{"type":"string","ref":${ref},"bytes":${bytes},"keep":${keep}}\n`, text, "\n");
        if (keep) {
          this.#kept.set(ref, { text, bytes });
          this.#refs.set(text, ref);
          this.#keptBytes += bytes;
          added.push(ref);
        }
      }
      stringBytes += bytes;
      entries.push({ ref, at: path });
    }
    blanked.strings = entries;
    const line = `${JSON.stringify(blanked)}\n`;
    if (Buffer.byteLength(line, "utf8") + stringBytes > LIMITS.messageBytes) {
      for (const ref of added) {
        const kept = this.#kept.get(ref)!;
        this.#kept.delete(ref);
        this.#refs.delete(kept.text);
        this.#keptBytes -= kept.bytes;
      }
      return null;
    }
    frames.push(line);
    return frames.join("");
  }
}

const NONE = Object.freeze({ bytes: 0 });

/**
 * Large strings → refs, by content. A `Map` keyed by the strings themselves would do, but V8 hashes a long
 * string by its length alone, so strings of one length would all land in one bucket and a lookup would
 * compare against each. Here the bucket key is the length plus 64 characters sampled across the string:
 * strings that differ there never meet, and equal ones compare by identity first, then content.
 */
class ContentIndex {
  readonly #buckets = new Map<string, { text: string; ref: number }[]>();

  get(text: string): number | undefined {
    const bucket = this.#buckets.get(sampleKey(text));
    return bucket?.find((entry) => entry.text === text)?.ref;
  }

  set(text: string, ref: number): void {
    const key = sampleKey(text);
    const bucket = this.#buckets.get(key);
    const entry = bucket?.find((e) => e.text === text);
    if (entry !== undefined) entry.ref = ref;
    else if (bucket !== undefined) bucket.push({ text, ref });
    else this.#buckets.set(key, [{ text, ref }]);
  }

  delete(text: string): void {
    const key = sampleKey(text);
    const bucket = this.#buckets.get(key);
    if (bucket === undefined) return;
    const kept = bucket.filter((entry) => entry.text !== text);
    if (kept.length > 0) this.#buckets.set(key, kept);
    else this.#buckets.delete(key);
  }
}

const SAMPLES = 64;

function sampleKey(text: string): string {
  let key = `${text.length}:`;
  const step = text.length / SAMPLES;
  for (let i = 0; i < SAMPLES; i++) key += text[Math.floor(i * step)];
  return key;
}

interface Kept {
  text: string;
  bytes: number;
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
