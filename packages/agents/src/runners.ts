import { runAcpAttempt } from "./acp/run-attempt";
import type { AcpAttempt, NativeAttempt } from "./attempt";

/** The runtimes an engine runs agent nodes on: the native loop and the ACP adapter. */
export function defaultRunners(): { native: NativeAttempt; acp: AcpAttempt } {
  const native: NativeAttempt = async () => ({
    status: "failed",
    error: {
      class: "internal_error",
      message: "the native agent runtime is not part of this build",
      retryable: false,
      traceback: null,
    },
  });
  return { native, acp: runAcpAttempt };
}
