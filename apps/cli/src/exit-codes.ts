/** Every exit code the CLI uses, in one table. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  timeout: 124,
  /** Ctrl-C (SIGINT): 128 + 2. */
  interrupted: 130,
  /** SIGTERM (CI cancels, `timeout`, `docker stop`): 128 + 15. */
  terminated: 143,
  /** SIGHUP (the terminal went away): 128 + 1. */
  hungUp: 129,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The signals that stop a command cleanly, as the run's cancellation and the exit code know them. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The exit code of a command stopped by `signal`, as a shell reports a process killed by it. */
export function exitCodeOfSignal(signal: StopSignal): ExitCode {
  return signal === "SIGTERM" ? EXIT.terminated : signal === "SIGHUP" ? EXIT.hungUp : EXIT.interrupted;
}

/** The signal an aborted command signal names (`AbortSignal.reason`), `SIGINT` when it names none. */
export function stopSignalOf(signal: AbortSignal): StopSignal {
  const reason: unknown = signal.reason;
  return STOP_SIGNALS.find((s) => s === reason) ?? "SIGINT";
}
