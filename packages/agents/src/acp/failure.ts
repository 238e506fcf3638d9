import { WorkflowError } from "@icode/workflow-errors";
import type { AcpErrorClass } from "./codes";

/**
 * Ends an ACP attempt with a node error of `code`'s class. Thrown inside the adapter and caught by
 * `runAcpAttempt`, which turns it into a `failed` result; it never leaves the adapter.
 */
export class AcpFailure extends WorkflowError<AcpErrorClass> {
  constructor(code: AcpErrorClass, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(code, options.hint === undefined ? message : `${message}; ${options.hint}`, options);
    this.name = "AcpFailure";
  }
}

/** A JSON-RPC error the agent answered with (the SDK's `RequestError`, recognised by shape). */
export type RpcError = { code: number; message: string; data?: unknown };

export function rpcErrorOf(error: unknown): RpcError | null {
  if (typeof error !== "object" || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === "number" && typeof message === "string" ? (error as RpcError) : null;
}

/** JSON-RPC codes the adapter tells apart. */
export const RPC = {
  methodNotFound: -32601,
  invalidParams: -32602,
  authRequired: -32000,
} as const;

export function describeError(error: unknown): string {
  const rpc = rpcErrorOf(error);
  if (rpc !== null) return `${rpc.message} (JSON-RPC ${rpc.code})`;
  return error instanceof Error ? error.message : String(error);
}
