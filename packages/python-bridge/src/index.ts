/**
 * @module @icode/python-bridge
 * The Python worker of iCode workflows: starting it, loading a workflow in it, invoking its callables, and
 * the wire protocol between them. Ships the stdlib-only `chrys.workflows` SDK (`sdkRoot()`).
 *
 * @example
 * import { startWorker } from "@icode/python-bridge";
 * const worker = await startWorker({ python: "/usr/bin/python3", cwd: "/work", cacheDir: "/tmp/pyc" });
 * const loaded = await worker.load({ entry: "/work/.chrys/workflows/echo.py", packageDir: null });
 * // → { ok: true, definition: { format: 1, title: "Echo", … }, output: { text: "", truncated: false } }
 * const result = await worker.invoke({
 *   kind: "node", node: "echo", input: { text: "hi", data: null },
 *   timeout_ms: 300_000, conditions: null, conditions_timeout_ms: null,
 * });
 * // → { ok: true, kind: "node", value: { text: "hi", data: null }, passed: [], output: { text: "", … }, … }
 * await worker.close();
 */

export type { InvokeOptions, InvokeOutcome, InvokeRequest } from "./call";
export {
  BRIDGE_ERROR_CODES,
  BRIDGE_WARNING_CODES,
  type BridgeErrorCode,
  BridgeErrorCodeSchema,
  type BridgeWarningCode,
  BridgeWarningCodeSchema,
  LOAD_CODES,
  type LoadCode,
  LoadCodeSchema,
  type WorkerWarning,
  WorkerWarningSchema,
} from "./codes";
export {
  type Answer,
  AnswerSchema,
  CALL_ERROR_CODES,
  type CallError,
  type CallErrorCode,
  CallErrorCodeSchema,
  CallErrorSchema,
  type CallPhase,
  CallPhaseSchema,
  type CapturedOutput,
  CapturedOutputSchema,
  type Conditions,
  ConditionsSchema,
  decodeFromWorker,
  encodeToWorker,
  type FromWorkerMessage,
  FromWorkerMessageSchema,
  type Hello,
  HelloMessageSchema,
  type JsonValue,
  LIMITS,
  PROTOCOL_VERSION,
  type PythonInfo,
  PythonInfoSchema,
  type Question,
  QuestionSchema,
  RETRYABLE_CALL_ERRORS,
  type ResultMessage,
  type StringFrameHeader,
  StringFrameHeaderSchema,
  type StringRef,
  StringRefSchema,
  type ToWorkerMessage,
  ToWorkerMessageSchema,
  type WireSource,
  WireSourceSchema,
  type WireValue,
  WireValueSchema,
} from "./protocol";
export {
  type AttemptOutput,
  DEFAULT_MAX_LEAKED_THREADS,
  type PythonExecutorOptions,
  pythonExecutors,
  SEND_BATCH,
} from "./python-executor";
export { sdkDigest, sdkRoot, workerScript } from "./sdk";
export { SpawnedWorker, type SpawnWorkerOptions, spawnWorker } from "./spawn";
export {
  type AdoptWorkerOptions,
  adoptWorker,
  type LoadResult,
  PythonWorker,
  type PythonWorkerEvents,
  type StartWorkerOptions,
  startWorker,
  type WorkerExit,
} from "./worker";
