import type { ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { diagnostic, WorkflowError } from "@icode/workflow-errors";
import { EventEmitter } from "eventemitter3";
import type { z } from "zod";
import { abortAsks, forwardAsk } from "./ask-bridge";
import { BACKSTOP_GRACE_MS, Backstop, backstopMs } from "./backstop";
import { damagedBytecode, dropCompiledFiles } from "./bytecode-cache";
import {
  type CancelCall,
  callError,
  failed,
  type InvokeOptions,
  type InvokeOutcome,
  type InvokeRequest,
  PendingCall,
} from "./call";
import type { WorkerWarning } from "./codes";
import { type Frame, LineSplitter } from "./framing";
import { loadTimeoutDiagnostic, requestStackDump } from "./load-timeout";
import { TailBuffer } from "./native";
import {
  type CallPhase,
  type CapturedOutput,
  callIdOf,
  decodeParsed,
  type FromWorkerMessage,
  frameToWorker,
  type Hello,
  isCallId,
  isRecord,
  LIMITS,
  type LoadResultMessageSchema,
  PROTOCOL_VERSION,
  placeSites,
  successOutcome,
  type ToWorkerMessage,
} from "./protocol";
import { SignalWatch } from "./signal-watch";
import { type SpawnedWorker, type SpawnWorkerOptions, spawnWorker } from "./spawn";
import { SharedStrings } from "./strings";
import { CorkedWriter } from "./writer";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What `load` resolves to: a `load_result` message without `type` and `id`. */
export type LoadResult = DistributiveOmit<z.infer<typeof LoadResultMessageSchema>, "type" | "id" | "sites">;

export interface StartWorkerOptions extends SpawnWorkerOptions, AdoptWorkerOptions {
  /** How long to wait for `hello` (default 30 s). */
  startTimeoutMs?: number;
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
const CLOSE_GRACE_MS = 2_000;
const EXIT_DRAIN_MS = 100;
const STDERR_TAIL_BYTES = 16 * 1024;

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
 * within `startTimeoutMs`, speaks another protocol, or ignores `PYTHONPYCACHEPREFIX` (`-E`/`-I`). A worker
 * that could not start because a compiled file in `cacheDir` was damaged is started once more (see
 * `adoptWorker`).
 */
export function startWorker(options: StartWorkerOptions): Promise<PythonWorker> {
  return adoptWorker(spawnWorker(options), options.startTimeoutMs, { onWarning: options.onWarning });
}

export interface AdoptWorkerOptions {
  /** Told what the start recovered from (`bytecode_cache_reset`); the start still succeeds. */
  onWarning?: (warning: WorkerWarning) => void;
}

/**
 * Takes over a process from `spawnWorker` (started earlier, possibly by code that loaded nothing else) and
 * resolves once it said `hello`, as `startWorker` does; its messages so far are waiting in the pipes. Rejects
 * as `startWorker` does, also when the process already ended.
 *
 * When Python could not start because a compiled file in the bytecode folder is damaged (`marshal data too
 * short`: a file cut short by a full disk breaks every later start), the folder's compiled files are
 * removed, the worker is spawned again with the same options, once, and `onWarning` is told.
 */
export async function adoptWorker(
  spawned: SpawnedWorker,
  startTimeoutMs = 30_000,
  options: AdoptWorkerOptions = {},
): Promise<PythonWorker> {
  try {
    return await adoptOnce(spawned, startTimeoutMs);
  } catch (error) {
    const damage = error instanceof StartFailure ? damagedBytecode(error.stderr) : null;
    if (damage === null) throw error instanceof StartFailure ? error.error : error;
    const { cacheDir } = spawned.options;
    const removed = await dropCompiledFiles(cacheDir);
    options.onWarning?.({
      code: "bytecode_cache_reset",
      message:
        `Python could not start: a compiled file in iCode's bytecode cache ${cacheDir} is damaged (${damage}; ` +
        `a full disk can leave one cut short). Removed the ${removed} compiled files there and started again.`,
    });
    try {
      return await adoptOnce(spawnWorker(spawned.spawnOptions), startTimeoutMs);
    } catch (again) {
      throw again instanceof StartFailure ? again.error : again;
    }
  }
}

/** A start that failed, with the worker's stderr so far (to tell a damaged bytecode cache). */
class StartFailure {
  constructor(
    readonly error: unknown,
    readonly stderr: string,
  ) {}
}

async function adoptOnce(spawned: SpawnedWorker, startTimeoutMs: number): Promise<PythonWorker> {
  const worker = new PythonWorker(spawned);
  let hello: Hello;
  try {
    hello = await worker.started(startTimeoutMs);
  } catch (error) {
    throw new StartFailure(error, worker.stderr());
  }
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
  private readonly writer: CorkedWriter;
  /** The worker's stdout, stderr and protocol pipes. */
  private readonly pipes: readonly (Readable | Writable)[];
  private readonly splitter = new LineSplitter(LIMITS.messageBytes);
  /** Large strings this worker and the engine hold in common (values cross the pipe once). */
  private readonly strings = new SharedStrings();
  private readonly nativeTail = new TailBuffer(LIMITS.nativeBytes);
  private readonly stderrTail = new TailBuffer(STDERR_TAIL_BYTES);
  private readonly calls = new Map<number, PendingCall>();
  /** Settles a pending call with a failure of the engine's (sends `cancel`); handed to the watchers. */
  private readonly cancelCall: CancelCall = (call, error) => {
    if (!this.calls.has(call.id)) return;
    this.send({ type: "cancel", id: call.id });
    this.settle(call, failed(error));
  };
  private readonly signals = new SignalWatch(this.cancelCall);
  private readonly backstop = new Backstop(this.calls, this.cancelCall);
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
    this.pipes = [stdio[1], stdio[2], stdio[3], stdio[4]];
    this.writer = new CorkedWriter(stdio[3]);
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
      if (call.backstopAt !== null && !this.backstop.armed) this.backstop.arm();
      if (options.signal) this.signals.add(call);
      sent = call;
      this.writer.write(data);
    });
  }

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

  private readonly send = (message: ToWorkerMessage): void => {
    if (this.exit !== null) return;
    const data = frameToWorker(message);
    if (data !== null) this.writer.write(data);
  };

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
      case "ask": {
        const call = this.calls.get(message.id);
        if (call !== undefined) forwardAsk(call, message.ask_id, message.questions, this.send);
        return;
      }
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

  private settle(call: PendingCall, outcome: InvokeOutcome): void {
    if (!this.calls.delete(call.id)) return;
    call.done = true;
    this.release(call);
    call.resolve(outcome);
  }

  /** What a call holds besides its entry in `calls`: its signal's entry, its questions. */
  private release(call: PendingCall): void {
    if (call.options.signal !== undefined) this.signals.release(call);
    if (call.asks !== null) abortAsks(call);
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
    // Ask the worker where it is, then kill it and say where that was.
    const dump: string[] = [];
    this.dump = dump;
    requestStackDump(this.child, dump, () => {
      this.dump = null;
      this.child.kill("SIGKILL");
      this.finishLoad(load, {
        ok: false,
        diagnostics: [loadTimeoutDiagnostic(dump.join(""), load, timeoutMs)],
        diagnostics_truncated: false,
        output: this.loadOutput(load),
      });
    });
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
    this.backstop.stop();
    this.signals.stop();
    // A process the workflow started in the background inherited fd 1 and 2 and may hold them open for as
    // long as it runs: keep reading them, but do not let them keep this process alive (docs/protocol.md).
    for (const pipe of this.pipes) (pipe as { unref?: () => void }).unref?.();
    this.resolveExited(exit);
    this.emit("exit", exit);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms).unref());
}
