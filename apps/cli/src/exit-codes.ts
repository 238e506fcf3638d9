/** Every exit code the CLI uses, in one table. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  timeout: 124,
  interrupted: 130,
} as const;
type ExitCode = (typeof EXIT)[keyof typeof EXIT];
