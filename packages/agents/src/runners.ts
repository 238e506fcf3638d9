import type { AcpAttempt, NativeAttempt } from "./attempt";

/** The runtimes an engine runs agent nodes on. (The native loop and the ACP adapter are wired in here.) */
export function defaultRunners(): { native: NativeAttempt; acp: AcpAttempt } {
  const missing = (runtime: string) => async () => ({
    status: "failed" as const,
    error: {
      class: "internal_error",
      message: `the ${runtime} agent runtime is not part of this build`,
      retryable: false,
      traceback: null,
    },
  });
  return { native: missing("native"), acp: missing("ACP") };
}
