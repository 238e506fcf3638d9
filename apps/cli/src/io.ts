export interface Writable {
  write(chunk: string): unknown;
}

/** What the CLI takes from its process; `main()` receives it so tests can run the CLI in-process. */
export interface CliIo {
  cwd: string;
  env: Record<string, string | undefined>;
  stdout: Writable;
  stderr: Writable;
}
