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
