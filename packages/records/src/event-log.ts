import { isUtf8 } from "node:buffer";
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { canonicalJson } from "@icode/canonical-json";
import { blankStrings, findLargeStrings, placeString } from "@icode/workflow-graph";
import { describeCause, recordsError, storageFailed } from "./codes";
import { type EngineEvent, EngineEventSchema } from "./engine-events";
import { FILES } from "./layout";
import { readQuestions } from "./questions";

/**
 * The field of an `events.jsonl` line that names the large strings (65,536 characters or more) cut out of
 * it: `[{ "at": [path from the event], "offset": O, "bytes": B }]`, the string being bytes `O` to `O + B` of
 * `large-strings.utf8` beside the log. A value that passes through many nodes is stored once, not in every
 * event that carries it.
 */
const LARGE_STRINGS_FIELD = "large_strings";
/** Strings remembered as stored, so that the same one is not stored again (bounded: they stay in memory). */
const REMEMBERED_STRINGS = 64;
const REMEMBERED_CHARS = 64 * 1024 * 1024;

/**
 * `large-strings.utf8`: the large strings of a log's events, each stored once, one after the other, appended
 * before the line that names them. It is synced with the log (`sync`, `close`): one file and one `fsync` per
 * run, however many strings. A failed write is cut back, so the strings named by lines stay readable.
 */
class StringPack {
  readonly path: string;
  #fd: number | null = null;
  #size = 0;
  /** Strings already stored, by content (a few: a long string's hash is its length). */
  #stored = new Map<string, { offset: number; bytes: number }>();
  #storedChars = 0;

  constructor(path: string) {
    this.path = path;
  }

  /** Where `text` is in the pack; stores it first when it is not there yet. Throws `storage_failed`. */
  place(text: string): { offset: number; bytes: number } {
    const known = this.#stored.get(text);
    if (known !== undefined) return known;
    const data = Buffer.from(text, "utf8");
    const fd = this.#open();
    let written = 0;
    try {
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
    } catch (cause) {
      if (written > 0) {
        try {
          ftruncateSync(fd, this.#size);
        } catch {
          this.#size = fstatSync(fd).size; // later strings go after the torn one; no line names it
        }
      }
      throw storageFailed("a large string of an event", this.path, cause);
    }
    const place = { offset: this.#size, bytes: data.length };
    this.#size += data.length;
    if (this.#stored.size >= REMEMBERED_STRINGS || this.#storedChars + text.length > REMEMBERED_CHARS) {
      this.#stored.clear();
      this.#storedChars = 0;
    }
    this.#stored.set(text, place);
    this.#storedChars += text.length;
    return place;
  }

  #open(): number {
    if (this.#fd !== null) return this.#fd;
    try {
      const fd = openSync(this.path, "a", 0o644);
      this.#size = fstatSync(fd).size;
      this.#fd = fd;
      return fd;
    } catch (cause) {
      throw storageFailed("the large strings of the event log", this.path, cause);
    }
  }

  sync(): void {
    if (this.#fd === null) return;
    try {
      fsyncSync(this.#fd);
    } catch (cause) {
      throw storageFailed("the large strings of the event log", this.path, cause);
    }
  }

  close(): void {
    const fd = this.#fd;
    this.#fd = null;
    this.#stored.clear();
    if (fd === null) return;
    try {
      fsyncSync(fd);
    } catch (cause) {
      throw storageFailed("the large strings of the event log", this.path, cause);
    } finally {
      try {
        closeSync(fd);
      } catch {}
    }
  }
}

/**
 * `events.jsonl`, written: one canonical JSON event per line, appended with one `write` per line on a file
 * opened for appending, so lines land in order and a crash can tear at most the last one. When a write
 * fails part-way, the file is cut back to its last whole line (or, if even that fails, the next line starts
 * on a fresh line), so earlier events stay readable.
 */
export class EventLog {
  readonly path: string;
  #fd: number | null;
  /** Bytes known to end with a whole line. */
  #size: number;
  /** A failed write may have left a partial line that could not be cut off. */
  #torn = false;
  /** Events given to `appendSoon`, not written yet (one `write` for all of them, in order). */
  #pending: unknown[] = [];
  #scheduled = false;
  /** A failed deferred write: every later append throws it. */
  #failure: unknown = null;
  /** Where the large strings of the events go. */
  readonly #strings: StringPack;

  private constructor(path: string, fd: number, size: number, torn: boolean) {
    this.path = path;
    this.#fd = fd;
    this.#size = size;
    this.#torn = torn;
    this.#strings = new StringPack(join(dirname(path), FILES.strings));
  }

  /** Creates a new, empty log; fails if the file exists. */
  static create(path: string): EventLog {
    try {
      return new EventLog(path, openSync(path, "ax", 0o644), 0, false);
    } catch (cause) {
      throw storageFailed("the event log", path, cause);
    }
  }

  /** Opens an existing log (or creates it) to append more events, e.g. a recovered run's end. */
  static open(path: string): EventLog {
    let fd: number;
    try {
      fd = openSync(path, "a", 0o644);
    } catch (cause) {
      throw storageFailed("the event log", path, cause);
    }
    try {
      const size = fstatSync(fd).size;
      return new EventLog(path, fd, size, size > 0 && !endsWithNewline(path, size));
    } catch (cause) {
      closeSync(fd);
      throw storageFailed("the event log", path, cause);
    }
  }

  get closed(): boolean {
    return this.#fd === null;
  }

  /** Appends one line of canonical JSON. Throws `storage_failed`; the log stays usable afterwards. */
  append(value: unknown): void {
    this.flushPending();
    this.#writeLines(this.#line(value));
  }

  /**
   * Appends one event with the next write of the log: at the end of this turn of the event loop, or on
   * `flushPending`, `sync` and `close` (or at once when 4,096 are waiting). Events keep their order. The
   * value is turned into its line only then, so the caller can send work to the Python worker first and
   * the encoding overlaps with it; the value must not change in between (events are never changed after
   * they are emitted). A deferred write that fails, or a value that is not JSON, is thrown by the next
   * append (and by `flushPending`/`sync`).
   */
  appendSoon(value: unknown): void {
    if (this.#failure !== null) throw this.#failure;
    if (this.#fd === null) {
      throw recordsError("storage_failed", `Cannot append to ${this.path}: the event log is closed.`);
    }
    this.#pending.push(value);
    if (this.#pending.length >= 4096) {
      this.flushPending();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        try {
          this.flushPending();
        } catch {
          // Kept in #failure and thrown by the next append.
        }
      });
    }
  }

  /**
   * The last line of a run whose records have already failed: one more try to write what is queued and
   * `value` (the run's end), even though an earlier write failed; a disk that was full may have room again,
   * and a failed node record does not stop the log. Throws `storage_failed` when that fails too.
   */
  appendLast(value: unknown): void {
    this.#failure = null;
    const values = [...this.#pending, value];
    this.#pending = [];
    let text = "";
    for (const item of values) text += text === "" ? this.#line(item) : `\n${this.#line(item)}`;
    this.#writeLines(text);
  }

  /** Writes the events `appendSoon` holds. Throws `storage_failed` (also on every later call). */
  flushPending(): void {
    if (this.#failure !== null) throw this.#failure;
    if (this.#pending.length === 0) return;
    const values = this.#pending;
    this.#pending = [];
    try {
      let text = this.#line(values[0]);
      for (let i = 1; i < values.length; i++) text += `\n${this.#line(values[i])}`;
      this.#writeLines(text);
    } catch (error) {
      this.#failure = error;
      throw error;
    }
  }

  #line(value: unknown): string {
    if (this.#fd === null) {
      throw recordsError("storage_failed", `Cannot append to ${this.path}: the event log is closed.`);
    }
    const found = findLargeStrings(value);
    if (found.length > 0) value = this.#withoutLargeStrings(value, found);
    try {
      return canonicalJson(value);
    } catch (cause) {
      throw storageFailed("an event", this.path, cause);
    }
  }

  /** The event with its large strings stored in the pack and named in `large_strings`. */
  #withoutLargeStrings(value: unknown, found: ReturnType<typeof findLargeStrings>): unknown {
    const line = blankStrings(
      value,
      found.map((string) => string.path),
    ) as Record<string, unknown>;
    line[LARGE_STRINGS_FIELD] = found.map(({ path, text }) => ({ at: path, ...this.#strings.place(text) }));
    return line;
  }

  /** Writes whole lines (joined with newlines, without the last one). */
  #writeLines(line: string): void {
    const fd = this.#fd;
    if (fd === null) {
      throw recordsError("storage_failed", `Cannot append to ${this.path}: the event log is closed.`);
    }
    const bytes = Buffer.from(this.#torn ? `\n${line}\n` : `${line}\n`, "utf8");
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    } catch (cause) {
      if (written > 0) this.#cutBack(fd);
      throw storageFailed("an event", this.path, cause);
    }
    this.#size += bytes.length;
    this.#torn = false;
  }

  /** Forces written events (and their large strings) to disk. */
  sync(): void {
    if (this.#fd === null) return;
    this.flushPending();
    this.#strings.sync();
    try {
      fsyncSync(this.#fd);
    } catch (cause) {
      throw storageFailed("the event log", this.path, cause);
    }
  }

  /** Syncs and closes; idempotent. A failed sync still closes, then throws. */
  close(): void {
    const fd = this.#fd;
    if (fd === null) return;
    let failure: unknown = null;
    try {
      this.flushPending();
    } catch (error) {
      failure = error;
    }
    this.#fd = null;
    try {
      this.#strings.close();
    } catch (error) {
      failure ??= error;
    }
    try {
      fsyncSync(fd);
    } catch (cause) {
      failure ??= storageFailed("the event log", this.path, cause);
    }
    try {
      closeSync(fd);
    } catch {}
    if (failure !== null) throw failure;
  }

  #cutBack(fd: number): void {
    try {
      ftruncateSync(fd, this.#size);
    } catch {
      this.#torn = true;
    }
  }
}

function endsWithNewline(path: string, size: number): boolean {
  const fd = openSync(path, "r");
  try {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    closeSync(fd);
  }
}

/** One problem met while reading a log: the line is skipped. */
interface EventLogWarning {
  line: number;
  message: string;
}

export interface ReadEventsResult {
  /** Events in file order (the order they were written). */
  events: EngineEvent[];
  /** The same events as written, before schema parsing (keeps fields a newer engine may add). */
  raw: Record<string, unknown>[];
  warnings: EventLogWarning[];
}

/**
 * Reads `events.jsonl` line by line. A torn last line (a crash mid-write) and any line that is not a valid
 * event are skipped with a warning; everything else is returned. A missing file reads as empty.
 */
export function readEventLog(path: string): ReadEventsResult {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return { events: [], raw: [], warnings: [] };
    throw recordsError("record_invalid", `Could not read the event log ${path}: ${describeCause(cause)}.`, {
      cause,
    });
  }
  const lines = text.split("\n");
  const last = lines.length - 1;
  // The large strings' pack, read when a line names one; a string says why it cannot be read.
  let packData: Buffer | string | null = null;
  const pack = (): Buffer | string => {
    if (packData === null) {
      const packPath = join(dirname(path), FILES.strings);
      try {
        packData = readFileSync(packPath);
      } catch (cause) {
        packData = `the large strings in ${packPath} cannot be read (${describeCause(cause)})`;
      }
    }
    return packData;
  };
  const events: EngineEvent[] = [];
  const raw: Record<string, unknown>[] = [];
  const warnings: EventLogWarning[] = [];
  // The full questions of each ask, read when a question event needs them (see ./questions).
  let questions: ReturnType<typeof readQuestions> | null = null;
  const questionsOf = (askId: unknown): unknown => {
    questions ??= readQuestions(join(dirname(path), FILES.questions));
    return (typeof askId === "string" ? questions.byAsk.get(askId) : undefined) ?? [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const unterminated = i === last;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      warnings.push({
        line: i + 1,
        message: unterminated
          ? `${path}:${i + 1}: the last line is incomplete (the writer stopped mid-line); skipped.`
          : `${path}:${i + 1}: not valid JSON; skipped.`,
      });
      continue;
    }
    const missing = restoreLargeStrings(value, pack);
    if (missing !== null) {
      warnings.push({ line: i + 1, message: `${path}:${i + 1}: ${missing}; skipped.` });
      continue;
    }
    if (isQuestionLine(value)) (value as Record<string, unknown>).questions = questionsOf(value.ask_id);
    const parsed = EngineEventSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      warnings.push({
        line: i + 1,
        message: `${path}:${i + 1}: not a known event (${issue?.path.join(".") || "type"}: ${issue?.message}); skipped.`,
      });
      continue;
    }
    events.push(parsed.data);
    raw.push(value as Record<string, unknown>);
  }
  return { events, raw, warnings };
}

function isQuestionLine(value: unknown): value is { type: "question"; ask_id?: unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { type?: unknown }).type === "question" &&
    !Object.hasOwn(value, "questions")
  );
}

/** Puts the strings a line's `large_strings` names back in their places; a problem, or `null` when done. */
function restoreLargeStrings(line: unknown, pack: () => Buffer | string): string | null {
  if (typeof line !== "object" || line === null || !Object.hasOwn(line, LARGE_STRINGS_FIELD)) return null;
  const record = line as Record<string, unknown>;
  const entries = record[LARGE_STRINGS_FIELD];
  delete record[LARGE_STRINGS_FIELD];
  if (!Array.isArray(entries)) return `"${LARGE_STRINGS_FIELD}" is not a list`;
  for (const entry of entries) {
    const { at, offset, bytes } = (typeof entry === "object" && entry !== null ? entry : {}) as Record<
      string,
      unknown
    >;
    if (!Array.isArray(at) || !Number.isSafeInteger(offset) || !Number.isSafeInteger(bytes)) {
      return `"${LARGE_STRINGS_FIELD}" holds an entry that is not {at, offset, bytes}`;
    }
    const data = pack();
    if (typeof data === "string") return data;
    const start = offset as number;
    const end = start + (bytes as number);
    if (start < 0 || end < start || end > data.length || !isUtf8(data.subarray(start, end))) {
      return `the large string at bytes ${start}–${end} of ${FILES.strings} is missing or not UTF-8`;
    }
    if (!placeString(record, at, data.toString("utf8", start, end))) {
      return `the large string at bytes ${start}–${end} of ${FILES.strings} has no place ${JSON.stringify(at)} in the event`;
    }
  }
  return null;
}
