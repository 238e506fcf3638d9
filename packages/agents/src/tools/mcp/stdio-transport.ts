import { StringDecoder } from "node:string_decoder";
import {
  deserializeMessage,
  type JSONRPCMessage,
  serializeMessage,
  type Transport,
} from "@modelcontextprotocol/client";
import { execa, type ResultPromise } from "execa";

/** A line longer than this (a message the server never ends) closes the connection. */
export const STDIO_MAX_LINE_CHARS = 16 * 1024 * 1024;
/** How long `close()` waits after closing stdin, and again after SIGTERM, before the next step. */
export const STDIO_CLOSE_GRACE_MS = 2000;
/** The last characters of the server's stderr kept for error messages. */
const STDERR_TAIL_CHARS = 4000;

export interface StdioServerProcess {
  command: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the server (nothing else is inherited). */
  env: Readonly<Record<string, string>>;
  /** How stdin and stdout are encoded (a Node encoding name, `utf8` by default). */
  encoding: BufferEncoding;
}

/**
 * The MCP stdio transport on an execa-spawned process: newline-delimited JSON-RPC on stdin/stdout, in the
 * server's encoding, with exactly the environment given. The server runs in its own process group (POSIX),
 * and `close()` ends all of it: stdin closed, then SIGTERM, then SIGKILL to the group, each after a grace
 * period, and it resolves only once the process has exited.
 */
export class ExecaStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ResultPromise | undefined;
  private exited: Promise<void> = Promise.resolve();
  private hasExited = false;
  private pending = "";
  private stderrText = "";

  constructor(private readonly params: StdioServerProcess) {}

  /** The server's process id once started. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** The last part of what the server wrote to stderr. */
  get stderrTail(): string {
    return this.stderrText.trim();
  }

  start(): Promise<void> {
    if (this.child !== undefined) throw new Error("the MCP stdio transport is already started");
    const posix = process.platform !== "win32";
    const child = execa(this.params.command, [...this.params.args], {
      cwd: this.params.cwd,
      env: this.params.env,
      extendEnv: false,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      buffer: false,
      reject: false,
      detached: posix,
      windowsHide: true,
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once("exit", () => resolve());
      void child.then(() => resolve());
    });
    const out = new StringDecoder(this.params.encoding);
    child.stdout?.on("data", (chunk: Buffer) => this.receive(out.write(chunk)));
    const err = new StringDecoder(this.params.encoding);
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderrText = (this.stderrText + err.write(chunk)).slice(-STDERR_TAIL_CHARS);
    });
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.on("error", () => {});
    child.once("close", () => {
      this.hasExited = true;
      this.onclose?.();
    });
    return new Promise((resolve, reject) => {
      child.once("spawn", () => resolve());
      void child.then((result) => {
        if (child.pid === undefined || result.failed) {
          this.hasExited = true;
          reject(
            new Error(
              result.originalMessage ?? result.shortMessage ?? `could not start ${this.params.command}`,
            ),
          );
        }
      });
    });
  }

  private receive(text: string): void {
    this.pending += text;
    for (let nl = this.pending.indexOf("\n"); nl !== -1; nl = this.pending.indexOf("\n")) {
      const line = this.pending.slice(0, nl).replace(/\r$/u, "");
      this.pending = this.pending.slice(nl + 1);
      if (line.trim() === "") continue;
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line);
      } catch (error) {
        this.onerror?.(
          new Error(
            `the MCP server wrote a line that is not a JSON-RPC message: ${(error as Error).message}`,
          ),
        );
        continue;
      }
      this.onmessage?.(message);
    }
    if (this.pending.length > STDIO_MAX_LINE_CHARS) {
      this.pending = "";
      this.onerror?.(
        new Error(`the MCP server wrote a message longer than ${STDIO_MAX_LINE_CHARS} characters`),
      );
      void this.close();
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin === undefined || stdin === null || this.hasExited || stdin.destroyed) {
      return Promise.reject(new Error("the MCP server process is not running"));
    }
    const bytes = Buffer.from(serializeMessage(message), this.params.encoding);
    return new Promise((resolve, reject) => {
      stdin.write(bytes, (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    const posix = process.platform !== "win32";
    const signalAll = (signal: NodeJS.Signals) => {
      try {
        if (posix && child.pid !== undefined) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {}
    };
    const waitExit = (ms: number) =>
      Promise.race([
        this.exited.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
      ]);
    if (!this.hasExited) {
      try {
        child.stdin?.end();
      } catch {}
      if (!(await waitExit(STDIO_CLOSE_GRACE_MS))) {
        signalAll("SIGTERM");
        if (!(await waitExit(STDIO_CLOSE_GRACE_MS))) signalAll("SIGKILL");
      }
      await this.exited;
    }
    signalAll("SIGKILL"); // anything the server left behind in its group
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
}
