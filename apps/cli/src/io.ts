export interface Writable {
  write(chunk: string): unknown;
}

/** Standard input as the CLI uses it: read whole (`--input-file -`) or key by key (`--interactive`). */
export interface Input extends AsyncIterable<Buffer | string> {
  on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  off(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  pause(): unknown;
  resume(): unknown;
  /** Present on a terminal: raw mode delivers each key as it is pressed. */
  setRawMode?(raw: boolean): unknown;
}

/** What the CLI takes from its process; `main()` receives it so tests can run the CLI in-process. */
export interface CliIo {
  cwd: string;
  env: Record<string, string | undefined>;
  stdin: Input;
  stdout: Writable;
  stderr: Writable;
  /** Whether standard input and standard error are terminals (`--interactive` needs both). */
  terminal: { stdin: boolean; stderr: boolean; columns?: number };
}
