import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { diagnostic, WorkflowError } from "@icode/workflow-errors";
import type { z } from "zod";
import { type Frame, LineSplitter } from "./framing";
import { TailBuffer } from "./native";
import {
  type Answer,
  type CallError,
  type CallPhase,
  type CapturedOutput,
  callIdOf,
  decodeParsed,
  type FromWorkerMessage,
  frameToWorker,
  type Hello,
  type InvokeMessageSchema,
  isCallId,
  isRecord,
  LIMITS,
  type LoadResultMessageSchema,
  PROTOCOL_VERSION,
  placeSites,
  type Question,
  type ResultOutcome,
  successOutcome,
  type ToWorkerMessage,
} from "./protocol";
import { type SpawnedWorker, type SpawnWorkerOptions, spawnWorker } from "./spawn";
import { SharedStrings } from "./strings";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What `invoke` sends: an `invoke` message without `type` and `id`. */
export type InvokeRequest = DistributiveOmit<z.infer<typeof InvokeMessageSchema>, "type" | "id">;
/** How a call ended: a `result` message without `type` and `id`. Call failures are results, not rejections. */
export type InvokeOutcome = ResultOutcome;
/** What `load` resolves to: a `load_result` message without `type` and `id`. */
export type LoadResult = DistributiveOmit<z.infer<typeof LoadResultMessageSchema>, "type" | "id" | "sites">;

export interface StartWorkerOptions extends SpawnWorkerOptions {
  /** How long to wait for `hello` (default 30 s). */
  startTimeoutMs?: number;
}

export interface InvokeOptions {
  /**
   * Aborting sends `cancel` and settles the call with `error.code: "cancelled"`: within 2 ms while the
   * call is younger than 50 ms (its signal is polled), at once after that (it is listened to).
   */
  signal?: AbortSignal;
  /**
   * For a caller that already knows when to abort (a scheduler calls back once per attempt) and would rather
   * not make an `AbortController` per call: called once, before the call is sent, with a function that
   * cancels it as aborting `signal` does. Called at once, the call is not sent and settles "cancelled before
   * it started"; later it sends `cancel` and settles the call with `error.code: "cancelled"`; after the call
   * settled it does nothing.
   */
  registerCancel?: (cancel: () => void) => void;
  /** `ctx.emit(text)` of this call, in order. Not called after the call settled. */
  onEmit?: (text: string) => void;
  /**
   * `await ctx.ask(...)` of this call: resolve the answers (one per question, in order), or `null` when the
   * user cannot be asked. Without `onAsk` every question is answered `ask_unavailable`. `signal` aborts when
   * the call settles first.
   */
  onAsk?: (questions: Question[], signal: AbortSignal) => Promise<Answer[] | null>;
}

/** How the worker process ended. */
export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export type PythonWorkerEvents = {
  /** Text the worker wrote to file descriptor 1 or 2 (kept, bounded, in `native()`). */
  native: [text: string, stream: "stdout" | "stderr"];
  /** A message from the worker that breaks the protocol, or the worker refused one of ours. */
  protocol_error: [message: string];
  exit: [exit: WorkerExit];
};

/** Where an invocation's value is (a combine's are under `sources`). */
const INPUT_PATH = [["input"]] as const;
/** Extra time the engine gives a worker to report a timeout itself before settling the call on its own. */
const BACKSTOP_GRACE_MS = 2_000;
/** How often pending calls are checked against their backstop (one timer for all calls, not one per call). */
const BACKSTOP_SWEEP_MS = 100;
/** How often the abort signals of young calls are looked at, and from what age a call gets a listener. */
const SIGNAL_POLL_MS = 2;
const SIGNAL_LISTEN_MS = 50;
const CLOSE_GRACE_MS = 2_000;
/** Corked output past this many characters (a pipe's buffer) is written at once, within the tick. */
const CORK_FLUSH_CHARS = 64 * 1024;
const EXIT_DRAIN_MS = 100;
const STDERR_TAIL_BYTES = 16 * 1024;
/** How long a timed-out load gets to dump its stacks before it is killed. */
const DUMP_WAIT_MS = 500;
const ASK_UNAVAILABLE =
  "ctx.ask() is not available here: this run cannot ask the user (the CLI does not support interaction)";

class PendingCall {
  /** Settled (or rejected): off `calls`. */
  done = false;
  emits = 0;
  emitBytes = 0;
  /** Questions being asked, by `ask_id`: aborted when the call settles. */
  asks: Map<number, AbortController> | null = null;

  constructor(
    readonly id: number,
    readonly kind: InvokeRequest["kind"],
    readonly resolve: (outcome: InvokeOutcome) => void,
    readonly reject: (error: WorkflowError) => void,
    readonly options: InvokeOptions,
    /** `performance.now()` when it was sent. */
    readonly startedAt: number,
    /** When the engine settles the call itself if the worker has not (`performance.now()`), or `null`. */
    readonly backstopAt: number | null,
    readonly backstopMs: number,
  ) {}
}

interface PendingLoad {
  id: number;
  /** The time limit passed: the worker is being asked where it is, then killed. */
  timedOut: boolean;
  entry: string;
  packageDir: string | null;
  resolve: (result: LoadResult) => void;
  timer: NodeJS.Timeout | null;
  output: string;
  outputBytes: number;
  truncated: boolean;
}

/**
 * Starts a Python worker and resolves once it said `hello`. Rejects with `WorkflowError` code
 * `worker_failed` (carrying the stderr text) when the binary cannot be spawned, exits early, does not answer
 * within `startTimeoutMs`, speaks another protocol, or ignores `PYTHONPYCACHEPREFIX` (`-E`/`-I`).
 */
export function startWorker(options: StartWorkerOptions): Promise<PythonWorker> {
  return adoptWorker(spawnWorker(options), options.startTimeoutMs);
}

/**
 * Takes over a process from `spawnWorker` (started earlier, possibly by code that loaded nothing else) and
 * resolves once it said `hello`, as `startWorker` does; its messages so far are waiting in the pipes. Rejects
 * as `startWorker` does, also when the process already ended.
 */
export async function adoptWorker(spawned: SpawnedWorker, startTimeoutMs = 30_000): Promise<PythonWorker> {
  const worker = new PythonWorker(spawned);
  const hello = await worker.started(startTimeoutMs);
  const { cwd, cacheDir } = spawned.options;
  if (hello.pycache_prefix === null || resolve(cwd, hello.pycache_prefix) !== cacheDir) {
    await worker.close();
    throw new WorkflowError(
      "worker_failed",
      `the Python interpreter ${spawned.python} ignores PYTHONPYCACHEPREFIX (sys.pycache_prefix is ` +
        `${JSON.stringify(hello.pycache_prefix)}), so it would write __pycache__ folders beside the workflow's files`,
      {
        hint: "do not start Python with -E or -I (for example in a wrapper script); point at the interpreter itself",
      },
    );
  }
  return worker;
}

/**
 * One running Python worker: one `load`, then any number of concurrent `invoke` calls. Created by
 * `startWorker`. When the process dies every pending call rejects at once with code `worker_lost`.
 */
export class PythonWorker extends EventEmitter<PythonWorkerEvents> {
  /** The worker's `hello`: protocol and SDK version, pid and interpreter facts. Set once started. */
  hello!: Hello;
  /** Resolves when the process has exited (for any reason). */
  readonly exited: Promise<WorkerExit>;
  /** Threads of abandoned calls still running in the worker, as of the latest result. */
  leakedThreads = 0;

  private readonly child: ChildProcess;
  private readonly python: string;
  private readonly input: Writable;
  private readonly splitter = new LineSplitter(LIMITS.messageBytes);
  /** Large strings this worker and the engine hold in common (values cross the pipe once). */
  private readonly strings = new SharedStrings();
  private readonly nativeTail = new TailBuffer(LIMITS.nativeBytes);
  private readonly stderrTail = new TailBuffer(STDERR_TAIL_BYTES);
  private readonly calls = new Map<number, PendingCall>();
  /** The pending calls of each watched abort signal (one call, or several sharing a signal). */
  private readonly bySignal = new Map<AbortSignal, PendingCall | Set<PendingCall>>();
  /** Calls with a signal younger than `SIGNAL_LISTEN_MS`, polled (see `pollSignals`). */
  private young: PendingCall[] = [];
  private pollTimer: NodeJS.Timeout | null = null;
  private backstopTimer: NodeJS.Timeout | null = null;
  private corked = false;
  /** Characters written since the stream was corked (see `write`). */
  private corkedChars = 0;
  private nextId = 1;
  private load_: PendingLoad | null = null;
  private state: "starting" | "ready" | "loading" | "loaded" | "load_failed" | "exited" = "starting";
  private exit: WorkerExit | null = null;
  private exitReason: string | null = null;
  private onHello: ((hello: Hello) => void) | null = null;
  private onEarlyExit: ((reason: string) => void) | null = null;
  private resolveExited!: (exit: WorkerExit) => void;
  private streamsOpen = 0;
  private streamsClosed: (() => void) | null = null;
  private spawnError: Error | null = null;
  /** Collects stderr while a timed-out load dumps its stacks. */
  private dump: string[] | null = null;

  /** @internal use `startWorker` or `adoptWorker` */
  constructor(spawned: SpawnedWorker) {
    super();
    const child = spawned.claim();
    this.child = child;
    this.python = spawned.python;
    this.exited = new Promise((done) => {
      this.resolveExited = done;
    });
    const stdio = child.stdio as unknown as [null, Readable, Readable, Writable, Readable];
    this.input = stdio[3];
    this.input.on("error", () => {}); // EPIPE when the worker is gone: noticed through "exit"
    this.watchNative(stdio[1], "stdout");
    this.watchNative(stdio[2], "stderr");
    const output = stdio[4];
    this.streamsOpen++;
    output.on("data", (chunk: Buffer) => this.receive(chunk));
    output.on("error", () => {});
    output.on("close", () => this.streamClosed());
    child.on("error", (error) => {
      this.spawnError = error;
      this.exited_({ code: null, signal: null });
    });
    child.on("exit", (code, signal) => this.exited_({ code, signal }));
    // Adopted after it ended: its events came before these listeners.
    if (spawned.error !== null) {
      this.spawnError = spawned.error;
      this.exited_({ code: null, signal: null });
    } else if (child.exitCode !== null || child.signalCode !== null) {
      this.exited_({ code: child.exitCode, signal: child.signalCode });
    }
  }

  /** The worker's process ID. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** @internal resolves with `hello`, or rejects with `worker_failed`. */
  started(timeoutMs: number): Promise<Hello> {
    return new Promise<Hello>((resolveHello, reject) => {
      const timer = setTimeout(() => {
        this.child.kill("SIGKILL");
        reject(this.failure(`did not say hello within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.onHello = (hello) => {
        clearTimeout(timer);
        resolveHello(hello);
      };
      this.onEarlyExit = (reason) => {
        clearTimeout(timer);
        reject(this.failure(reason));
      };
    });
  }

  /** The last 64 KiB written to file descriptors 1 and 2, and how many bytes were dropped before them. */
  native(): { text: string; dropped_bytes: number } {
    return this.nativeTail.read();
  }

  /** The tail of what the worker wrote to stderr (for error messages). */
  stderr(): string {
    return this.stderrTail.read().text;
  }

  /** Whether the process is still running. */
  get alive(): boolean {
    return this.exit === null;
  }

  /**
   * Loads the workflow: compiles its files, runs the entry file and returns the built definition, or the
   * load diagnostics. A load that takes longer than `timeoutMs` (default 60 s) kills the worker and gives a
   * `load_timeout` diagnostic; a worker that dies gives `worker_failed`. A worker loads one workflow.
   */
  load(
    target: { entry: string; packageDir: string | null },
    options: { timeoutMs?: number } = {},
  ): Promise<LoadResult> {
    const entry = resolve(target.entry);
    if (this.state === "exited") return Promise.resolve(this.workerFailedLoad(entry, ""));
    if (this.state !== "ready") {
      return Promise.reject(
        new WorkflowError("protocol_error", "a worker loads one workflow; start a new worker"),
      );
    }
    this.state = "loading";
    const id = this.nextId++;
    const timeoutMs = options.timeoutMs ?? LIMITS.loadTimeoutMs;
    return new Promise<LoadResult>((done) => {
      const pending: PendingLoad = {
        id,
        timedOut: false,
        entry,
        packageDir: target.packageDir === null ? null : resolve(target.packageDir),
        resolve: done,
        timer: null,
        output: "",
        outputBytes: 0,
        truncated: false,
      };
      pending.timer = setTimeout(() => this.loadTimedOut(pending, timeoutMs), timeoutMs);
      this.load_ = pending;
      this.send({
        type: "load",
        id,
        entry,
        package_dir: target.packageDir === null ? null : resolve(target.packageDir),
      });
    });
  }

  /**
   * Invokes a callable of the loaded workflow: a python node's function (with its outgoing conditions in
   * the same round trip), a loop's `until` or a join's `combine`. Resolves with the worker's result; every
   * call failure (exception, timeout, bad value, limits, cancel) is a result with `ok: false`. Rejects with
   * `worker_lost` when the worker dies, `worker_closed` after `close()`, `protocol_error` before a load.
   */
  invoke(request: InvokeRequest, options: InvokeOptions = {}): Promise<InvokeOutcome> {
    if (this.state === "exited") return Promise.reject(this.lostError());
    if (this.state !== "loaded") {
      return Promise.reject(
        new WorkflowError("protocol_error", "invoke() needs a workflow that loaded successfully"),
      );
    }
    const phase: CallPhase = request.kind;
    let sent: PendingCall | null = null;
    let cancelledFirst = false;
    options.registerCancel?.(() => {
      if (sent === null) cancelledFirst = true;
      else this.cancelCall(sent, callError("cancelled", "the call was cancelled", phase));
    });
    if (options.signal?.aborted || cancelledFirst)
      return Promise.resolve(
        failed(callError("cancelled", "the call was cancelled before it started", phase)),
      );
    const id = this.nextId++;
    if (request.kind === "combine") {
      const sources = JSON.stringify(request.sources);
      const bytes = Buffer.byteLength(sources, "utf8");
      if (bytes > LIMITS.combineInputBytes) {
        return Promise.resolve(
          failed(
            callError(
              "value_too_large",
              `the sources of ${request.join} are ${bytes.toLocaleString("en-US")} bytes of JSON, over the limit of ` +
                `${LIMITS.combineInputBytes.toLocaleString("en-US")} bytes for a custom combine`,
              "combine",
            ),
          ),
        );
      }
    }
    const data = this.strings.frame(
      { type: "invoke", id, ...request },
      request.kind === "combine" ? request.sources.map((_, i) => ["sources", i, "value"]) : INPUT_PATH,
    );
    if (data === null) {
      return Promise.resolve(
        failed(callError("value_too_large", "the call's input makes a message over the 16 MiB limit", phase)),
      );
    }
    const budget = backstopMs(request);
    const now = performance.now();
    return new Promise<InvokeOutcome>((done, fail) => {
      const call = new PendingCall(
        id,
        request.kind,
        done,
        fail,
        options,
        now,
        budget === null ? null : now + budget + BACKSTOP_GRACE_MS,
        budget ?? 0,
      );
      this.calls.set(id, call);
      if (call.backstopAt !== null && this.backstopTimer === null) this.armBackstop();
      if (options.signal) {
        this.young.push(call);
        this.pollTimer ??= setTimeout(this.pollSignals, SIGNAL_POLL_MS);
      }
      sent = call;
      this.write(data);
    });
  }

  /**
   * Writes a framed message. The calls started in one tick (a fan-out) go out together: the first corks the
   * stream and the end of the tick uncorks it. A burst goes out every `CORK_FLUSH_CHARS`, so that the worker
   * starts on the first calls of a large fan-out while the engine is still starting the others.
   */
  private write(data: string): void {
    if (!this.corked) {
      this.corked = true;
      this.input.cork();
      process.nextTick(this.uncork);
    }
    this.input.write(data);
    this.corkedChars += data.length;
    if (this.corkedChars >= CORK_FLUSH_CHARS) {
      this.corkedChars = 0;
      this.input.uncork();
      this.input.cork();
    }
  }

  private readonly uncork = (): void => {
    this.corked = false;
    this.corkedChars = 0;
    this.input.uncork();
  };

  /** Ends the worker: `shutdown`, then a kill if it has not exited within 2 s. Pending calls reject (`worker_closed`). */
  async close(): Promise<void> {
    if (this.exit !== null) return;
    if (this.exitReason === null) this.exitReason = "closed";
    this.send({ type: "shutdown" });
    const timer = setTimeout(() => this.child.kill("SIGKILL"), CLOSE_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  // --- internals ---------------------------------------------------------------------------------------

  private send(message: ToWorkerMessage): void {
    if (this.exit !== null) return;
    const data = frameToWorker(message);
    if (data !== null) this.write(data);
  }

  /**
   * Looks at the signals of young calls. Adding a listener to an `AbortSignal` costs more than the rest of
   * a call, and most calls are over within milliseconds, so a call's signal is read every `SIGNAL_POLL_MS`
   * until it is `SIGNAL_LISTEN_MS` old, and only then gets a listener (from then on an abort cancels it at
   * once). One timer for all calls, running while young calls with a signal are pending.
   */
  private readonly pollSignals = (): void => {
    this.pollTimer = null;
    const now = performance.now();
    const young = this.young;
    let kept = 0;
    for (const call of young) {
      if (call.done) continue;
      const signal = call.options.signal!;
      if (signal.aborted) this.cancelCall(call, callError("cancelled", "the call was cancelled", call.kind));
      else if (now - call.startedAt >= SIGNAL_LISTEN_MS) this.watchSignal(call, signal);
      else young[kept++] = call;
    }
    young.length = kept;
    if (kept > 0 && this.exit === null) this.pollTimer = setTimeout(this.pollSignals, SIGNAL_POLL_MS);
  };

  /**
   * One listener per signal, shared by every call (an `AbortSignal` ignores a listener added twice), and
   * never removed (that would cost as much again). A signal that outlives its calls keeps one idle
   * listener; when it aborts, the calls still pending on it cancel.
   */
  private watchSignal(call: PendingCall, signal: AbortSignal): void {
    const others = this.bySignal.get(signal);
    if (others === undefined) this.bySignal.set(signal, call);
    else if (others instanceof Set) others.add(call);
    else this.bySignal.set(signal, new Set([others, call]));
    signal.addEventListener("abort", this.onAbort);
  }

  private unwatchSignal(call: PendingCall): void {
    const signal = call.options.signal;
    if (signal === undefined) return;
    const calls = this.bySignal.get(signal);
    if (calls === call) this.bySignal.delete(signal);
    else if (calls instanceof Set) {
      calls.delete(call);
      if (calls.size === 0) this.bySignal.delete(signal);
    }
  }

  private readonly onAbort = (event: Event): void => {
    const calls = this.bySignal.get(event.target as AbortSignal);
    if (calls === undefined) return;
    for (const call of calls instanceof Set ? [...calls] : [calls]) {
      this.cancelCall(call, callError("cancelled", "the call was cancelled", call.kind));
    }
  };

  /** One timer for every call's backstop, running while some pending call has one. */
  private armBackstop(): void {
    this.backstopTimer = setTimeout(() => {
      this.backstopTimer = null;
      const now = performance.now();
      let waiting = false;
      for (const call of [...this.calls.values()]) {
        if (call.backstopAt === null) continue;
        if (now < call.backstopAt) {
          waiting = true;
          continue;
        }
        this.cancelCall(
          call,
          callError(
            "timeout",
            `the worker did not answer within ${call.backstopMs / 1000} s: its event loop is blocked ` +
              "(an async def node calling blocking code?)",
            call.kind,
          ),
        );
      }
      if (waiting && this.exit === null) this.armBackstop();
    }, BACKSTOP_SWEEP_MS);
  }

  private watchNative(stream: Readable, name: "stdout" | "stderr"): void {
    const decoder = new StringDecoder("utf8");
    this.streamsOpen++;
    stream.on("data", (chunk: Buffer) => {
      this.nativeTail.push(chunk);
      if (name === "stderr") {
        this.stderrTail.push(chunk);
        this.dump?.push(chunk.toString("utf8"));
      }
      if (this.listenerCount("native") > 0) {
        const text = decoder.write(chunk);
        if (text) this.emit("native", text, name);
      }
    });
    stream.on("error", () => {});
    stream.on("close", () => this.streamClosed());
  }

  private streamClosed(): void {
    this.streamsOpen--;
    if (this.streamsOpen <= 0) this.streamsClosed?.();
  }

  private receive(chunk: Buffer): void {
    for (const frame of this.splitter.push(chunk)) this.handleFrame(frame);
  }

  private handleFrame(frame: Frame): void {
    if ("string" in frame) {
      const { ref, text, bytes, keep } = frame.string;
      this.strings.receive(ref, text, bytes, keep);
      return;
    }
    if ("badString" in frame) {
      this.protocolError(null, frame.badString);
      return;
    }
    if ("oversized" in frame) {
      const id = callIdOf(frame.oversized);
      this.protocolError(id, "the worker sent a message over the 16 MiB limit");
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(frame.line);
    } catch (error) {
      this.protocolError(callIdOf(frame.line), `not JSON: ${(error as Error).message}`);
      return;
    }
    if (isRecord(raw)) {
      const strings = this.strings.resolve(raw);
      if ("problem" in strings) {
        this.protocolError(callIdOf(frame.line), strings.problem);
        return;
      }
      if (
        strings.bytes > 0 &&
        strings.bytes + Buffer.byteLength(frame.line, "utf8") + 1 > LIMITS.messageBytes
      ) {
        this.protocolError(
          callIdOf(frame.line),
          "the worker sent a message over the 16 MiB limit (with its strings)",
        );
        return;
      }
    }
    // The hot path: a successful result goes straight to its call (see successOutcome); anything else
    // is read through the protocol's schemas.
    if (isRecord(raw) && raw.type === "result" && isCallId(raw.id)) {
      const outcome = successOutcome(raw);
      if (outcome !== null) {
        this.result(raw.id, outcome);
        return;
      }
    }
    const decoded = decodeParsed(raw);
    if (!decoded.ok) {
      this.protocolError(decoded.id, decoded.error);
      return;
    }
    this.handle(decoded.message);
  }

  private result(id: number, outcome: InvokeOutcome): void {
    this.leakedThreads = outcome.leaked_threads;
    const call = this.calls.get(id);
    if (call === undefined) return; // settled already (cancelled, backstop): a late answer
    if (outcome.ok && outcome.kind !== call.kind) {
      this.settle(
        call,
        failed(
          callError(
            "protocol_error",
            `the worker answered a ${call.kind} call with a result of kind ${outcome.kind}`,
            call.kind,
          ),
        ),
      );
      return;
    }
    this.settle(call, outcome);
  }

  private handle(message: FromWorkerMessage): void {
    switch (message.type) {
      case "result": {
        const { type: _type, id, ...outcome } = message;
        this.result(id, outcome);
        return;
      }
      case "emit": {
        const call = this.calls.get(message.id);
        if (call === undefined) return;
        call.emits++;
        call.emitBytes += Buffer.byteLength(message.text, "utf8");
        if (call.emits > LIMITS.emitCount || call.emitBytes > LIMITS.emitBytes) {
          this.cancelCall(
            call,
            callError(
              "protocol_limit",
              "the node sent more ctx.emit() messages than an attempt allows",
              "node",
            ),
          );
          return;
        }
        call.options.onEmit?.(message.text);
        return;
      }
      case "ask":
        this.ask(message.id, message.ask_id, message.questions);
        return;
      case "load_output": {
        const load = this.load_;
        if (load === null || load.id !== message.id || load.truncated) return;
        const bytes = Buffer.byteLength(message.text, "utf8");
        if (load.outputBytes + bytes > LIMITS.captureBytes) {
          load.truncated = true;
          return;
        }
        load.output += message.text;
        load.outputBytes += bytes;
        return;
      }
      case "load_result": {
        const load = this.load_;
        if (load === null || load.id !== message.id || load.timedOut) return;
        const { type: _type, id: _id, ...result } = message;
        if (result.ok) {
          const { sites, ...loaded } = result;
          const problem = placeSites(loaded.definition, sites);
          if (problem !== null) this.protocolError(message.id, problem);
          else this.finishLoad(load, loaded);
          return;
        }
        this.finishLoad(load, result);
        return;
      }
      case "hello":
        if (this.state === "starting") {
          this.hello = message;
          this.state = "ready";
          this.onHello?.(message);
          this.onHello = null;
        }
        return;
      case "protocol_error":
        this.protocolError(message.id, `the worker refused a message: ${message.message}`);
        return;
    }
  }

  private ask(callId: number, askId: number, questions: Question[]): void {
    const call = this.calls.get(callId);
    if (call === undefined) return;
    const reply = (answers: Answer[] | null, why: string = ASK_UNAVAILABLE) => {
      call.asks?.delete(askId);
      if (!this.calls.has(callId)) return;
      if (answers === null) {
        this.send({
          type: "answer",
          id: callId,
          ask_id: askId,
          ok: false,
          error: "ask_unavailable",
          message: why,
        });
      } else {
        this.send({ type: "answer", id: callId, ask_id: askId, ok: true, answers });
      }
    };
    const onAsk = call.options.onAsk;
    if (onAsk === undefined) {
      reply(null);
      return;
    }
    const controller = new AbortController();
    call.asks ??= new Map();
    call.asks.set(askId, controller);
    let asked: Promise<Answer[] | null>;
    try {
      asked = onAsk(questions, controller.signal);
    } catch (error) {
      reply(null, `asking the user failed: ${describe(error)}`);
      return;
    }
    asked.then(
      (answers) => reply(answers),
      (error) => reply(null, `asking the user failed: ${describe(error)}`),
    );
  }

  private settle(call: PendingCall, outcome: InvokeOutcome): void {
    if (!this.calls.delete(call.id)) return;
    call.done = true;
    this.release(call);
    call.resolve(outcome);
  }

  /** What a call holds besides its entry in `calls`: its signal's entry, its questions. */
  private release(call: PendingCall): void {
    if (call.options.signal !== undefined) this.unwatchSignal(call);
    if (call.asks !== null) {
      for (const controller of call.asks.values()) controller.abort();
      call.asks = null;
    }
  }

  private cancelCall(call: PendingCall, error: CallError): void {
    if (!this.calls.has(call.id)) return;
    this.send({ type: "cancel", id: call.id });
    this.settle(call, failed(error));
  }

  private protocolError(id: number | null, message: string): void {
    if (this.state === "starting") {
      // Not our worker (another SDK version, or not the worker at all): stop waiting for its hello.
      this.onEarlyExit?.(`does not speak protocol ${PROTOCOL_VERSION} (${message})`);
      this.onEarlyExit = null;
      this.child.kill("SIGKILL");
      return;
    }
    const call = id === null ? undefined : this.calls.get(id);
    if (call !== undefined) {
      this.cancelCall(call, callError("protocol_error", message, call.kind));
    } else if (id !== null && this.load_ !== null && this.load_.id === id) {
      this.finishLoad(this.load_, {
        ok: false,
        diagnostics: [
          diagnostic({
            code: "worker_failed",
            stage: "load",
            message: `the worker broke the protocol while loading: ${message}`,
            file: this.load_.entry,
          }),
        ],
        diagnostics_truncated: false,
        output: this.loadOutput(this.load_),
      });
    }
    if (this.listenerCount("protocol_error") > 0) this.emit("protocol_error", message);
  }

  private finishLoad(load: PendingLoad, result: LoadResult): void {
    if (this.load_ !== load) return;
    this.load_ = null;
    if (load.timer !== null) clearTimeout(load.timer);
    if (this.state === "loading") this.state = result.ok ? "loaded" : "load_failed";
    load.resolve(result);
  }

  private loadOutput(load: PendingLoad): CapturedOutput {
    return { text: load.output, truncated: load.truncated };
  }

  private loadTimedOut(load: PendingLoad, timeoutMs: number): void {
    if (this.load_ !== load) return;
    this.exitReason = "load_timeout";
    load.timer = null;
    load.timedOut = true;
    // Ask the worker where it is (faulthandler dumps every thread's stack to fd 2), then kill it.
    const dump: string[] = [];
    this.dump = dump;
    const canDump = process.platform !== "win32" && this.child.kill("SIGUSR1");
    const settle = () => {
      this.dump = null;
      this.child.kill("SIGKILL");
      const seconds = timeoutMs / 1000;
      const root = load.packageDir ?? dirname(load.entry);
      const where = stuckAt(dump.join(""), root);
      this.finishLoad(load, {
        ok: false,
        diagnostics: [
          diagnostic({
            code: "load_timeout",
            stage: "load",
            message: `loading the workflow did not finish within ${seconds} seconds${where ? " (stopped here)" : ""}`,
            file: where?.file ?? load.entry,
            line: where?.line ?? null,
            source_line: where ? sourceLine(where.file, where.line) : null,
            notes: where?.notes ?? [],
            hint:
              "Top-level code runs while loading: keep it to imports, definitions and building the workflow, " +
              "and move slow work (network, large files, waiting) into node functions.",
          }),
        ],
        diagnostics_truncated: false,
        output: this.loadOutput(load),
      });
    };
    if (!canDump) {
      settle();
      return;
    }
    const started = Date.now();
    const poll = setInterval(() => {
      // The dump is complete once the loading thread's stack (it runs _loader.py) is in.
      if (
        /_loader\.py", line \d+ in load_workflow/.test(dump.join("")) ||
        Date.now() - started > DUMP_WAIT_MS
      ) {
        clearInterval(poll);
        setTimeout(settle, 20);
      }
    }, 10);
  }

  private workerFailedLoad(entry: string, output: string, truncated = false): LoadResult {
    const stderr = this.stderr();
    const lastLine = stderr.trimEnd().split("\n").pop() ?? "";
    return {
      ok: false,
      diagnostics: [
        diagnostic({
          code: "worker_failed",
          stage: "load",
          message: `the Python worker ${this.exitText()} while loading the workflow${lastLine ? `: ${lastLine}` : ""}`,
          file: entry,
          traceback: stderr === "" ? null : stderr,
          hint: "Top-level code must not end the process (os._exit, os.kill, a crash in a C extension).",
        }),
      ],
      diagnostics_truncated: false,
      output: { text: output, truncated },
    };
  }

  private exitText(): string {
    if (this.spawnError !== null) return `could not be started (${this.spawnError.message})`;
    const exit = this.exit;
    if (exit === null) return "stopped";
    if (exit.signal !== null) return `was killed by ${exit.signal}`;
    return `exited with code ${exit.code}`;
  }

  private failure(reason: string): WorkflowError {
    const stderr = this.stderr().trim();
    return new WorkflowError(
      "worker_failed",
      `the Python worker ${this.python} ${reason}${stderr ? `:\n${stderr}` : ""}`,
      this.spawnError ? { cause: this.spawnError } : {},
    );
  }

  private lostError(): WorkflowError {
    if (this.exitReason === "closed")
      return new WorkflowError("worker_closed", "the Python worker was closed");
    const stderr = this.stderr().trim();
    return new WorkflowError(
      "worker_lost",
      `the Python worker ${this.exitText()}${stderr ? `; its last output on stderr:\n${stderr}` : ""}`,
    );
  }

  private exited_(exit: WorkerExit): void {
    if (this.exit !== null) return;
    this.exit = exit;
    // Give the pipes a moment to deliver the worker's last messages and stderr, then fail what is left.
    const drained = new Promise<void>((done) => {
      if (this.streamsOpen <= 0) done();
      else this.streamsClosed = done;
    });
    const wait = this.spawnError ? Promise.resolve() : Promise.race([drained, delay(EXIT_DRAIN_MS)]);
    void wait.then(() => this.lost(exit));
  }

  private lost(exit: WorkerExit): void {
    const previous = this.state;
    this.state = "exited";
    if (previous === "starting") {
      this.onEarlyExit?.(
        this.spawnError
          ? `could not be started: ${this.spawnError.message}`
          : `${this.exitText()} before saying hello`,
      );
      this.onEarlyExit = null;
    }
    const load = this.load_;
    if (load !== null && !load.timedOut) {
      this.finishLoad(load, this.workerFailedLoad(load.entry, load.output, load.truncated));
    }
    const error = this.lostError();
    for (const call of [...this.calls.values()]) {
      this.calls.delete(call.id);
      call.done = true;
      this.release(call);
      call.reject(error);
    }
    if (this.backstopTimer !== null) clearTimeout(this.backstopTimer);
    this.backstopTimer = null;
    if (this.pollTimer !== null) clearTimeout(this.pollTimer);
    this.pollTimer = null;
    this.young = [];
    this.resolveExited(exit);
    this.emit("exit", exit);
  }
}

function backstopMs(request: InvokeRequest): number | null {
  if (request.kind === "node") {
    if (request.timeout_ms === null) return null;
    const conditions =
      request.conditions === null ? 0 : (request.conditions_timeout_ms ?? LIMITS.callableTimeoutMs);
    return request.timeout_ms + conditions;
  }
  return request.timeout_ms ?? LIMITS.callableTimeoutMs;
}

function callError(code: CallError["code"], message: string, phase: CallPhase): CallError {
  return { code, message, phase, edge: null, traceback: null, file: null, line: null };
}

function failed(error: CallError): InvokeOutcome {
  return { ok: false, error, output: { text: "", truncated: false }, leaked_threads: 0 };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function delay(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms).unref());
}

interface StuckAt {
  file: string;
  line: number;
  notes: { message: string; file: string | null; line: number | null }[];
}

/**
 * Where a timed-out load was: from the faulthandler dump of the worker's threads, the stack of the thread
 * running the load (the one in `_loader.py`), its innermost frame in the workflow's folder, and how that
 * frame was reached (innermost first), as in the worker's own load diagnostics.
 */
function stuckAt(dump: string, root: string): StuckAt | null {
  const blocks = dump.split(/^(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):$/m);
  const loading = blocks.find((block) => /_loader\.py", line \d+ in load_workflow/.test(block));
  if (loading === undefined) return null;
  const frames = [...loading.matchAll(/^\s*File "(.+)", line (\d+) in (.+)$/gm)]
    .map((m) => ({ file: m[1]!, line: Number(m[2]), name: m[3]!.trim() }))
    .filter((frame) => frame.file === root || frame.file.startsWith(root.endsWith(sep) ? root : root + sep));
  const [inner, ...outer] = frames;
  if (inner === undefined) return null;
  const notes: StuckAt["notes"] = [];
  let below = inner;
  for (const frame of outer) {
    notes.push({
      message: frame.name === "<module>" && below.name === "<module>" ? "imported from" : "called from",
      file: frame.file,
      line: frame.line,
    });
    below = frame;
  }
  return { file: inner.file, line: inner.line, notes };
}

function sourceLine(file: string, line: number): string | null {
  try {
    const text = readFileSync(file, "utf8").split(/\r?\n/)[line - 1];
    return text === undefined ? null : text;
  } catch {
    return null;
  }
}
