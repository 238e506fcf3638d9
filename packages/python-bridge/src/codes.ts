import { z } from "zod";

/** Codes of the diagnostics `PythonWorker.load` returns (stage `load`, plus `internal_error`). */
export const LOAD_CODES = [
  "syntax_error",
  "load_error",
  "sdk_validation_error",
  "missing_workflow",
  "load_timeout",
  "worker_failed",
  "internal_error",
] as const;
export const LoadCodeSchema = z.enum(LOAD_CODES);
export type LoadCode = z.infer<typeof LoadCodeSchema>;

/**
 * Codes of the `WorkflowError`s this package throws: `worker_failed` (the worker could not start),
 * `worker_lost` (it died with calls pending), `worker_closed` (calls pending at `close()`), `protocol_error`
 * (the API was used out of order: `invoke` before a successful `load`, a second `load`).
 */
export const BRIDGE_ERROR_CODES = [
  "worker_failed",
  "worker_lost",
  "worker_closed",
  "protocol_error",
] as const;
export const BridgeErrorCodeSchema = z.enum(BRIDGE_ERROR_CODES);
export type BridgeErrorCode = z.infer<typeof BridgeErrorCodeSchema>;

/**
 * Codes of the warnings a worker's start reports through `onWarning`: `bytecode_cache_reset` (Python could
 * not start because a compiled file in the engine's bytecode folder was damaged; the folder's compiled files
 * were removed and the worker started again).
 */
export const BRIDGE_WARNING_CODES = ["bytecode_cache_reset"] as const;
export const BridgeWarningCodeSchema = z.enum(BRIDGE_WARNING_CODES);
export type BridgeWarningCode = z.infer<typeof BridgeWarningCodeSchema>;

/** Something the bridge recovered from and a person should hear about (the CLI prints it on stderr). */
export const WorkerWarningSchema = z.object({ code: BridgeWarningCodeSchema, message: z.string() });
export type WorkerWarning = z.infer<typeof WorkerWarningSchema>;
