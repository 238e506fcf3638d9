import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { z } from "zod";
import { anthropicWire } from "./anthropic-wire";
import { describeIssues, ProviderDoubleError } from "./errors";
import { openaiWire } from "./openai-wire";
import type { ParsedRequest, Wire } from "./parsed-request";
import {
  type ContentReply,
  type DataReply,
  DataReplySchema,
  type HttpErrorReply,
  type Reply,
  ReplySchema,
  type TextReply,
} from "./reply";
import type { RecordedRequest, ReplySource } from "./request";
import type { ProviderDoubleStats } from "./stats";
import { estimatePromptTokens, usageFor } from "./usage";
import {
  ERROR_REPLY_TYPES,
  type ErrorReply,
  type HttpAnswer,
  JSON_HEADERS,
  type RenderContext,
  SSE_HEADERS,
  type WireFormat,
} from "./wire";

/** What an unscripted request gets unless `defaultReply` says otherwise. */
export const DEFAULT_REPLY: TextReply = { type: "text", text: "Hello from the provider double." };

/** The content of a drop or finish-less reply that names none: several words, so several deltas. */
const CUT_SHORT_REPLY: TextReply = {
  type: "text",
  text: "This reply is cut short by the provider double before its end.",
};

export const ProviderDoubleOptionsSchema = z.object({
  /** The reply for a request whose route has nothing scripted; `DEFAULT_REPLY` when absent. */
  defaultReply: ReplySchema.optional(),
  /** Scripts to start with, route key → replies (as `script()` would enqueue them). */
  scripts: z.record(z.string(), z.array(ReplySchema)).optional(),
  /** 0 (the default) for a free port. The double always listens on 127.0.0.1. */
  port: z.number().int().min(0).max(65_535).optional(),
});
export type ProviderDoubleOptions = z.input<typeof ProviderDoubleOptionsSchema>;

const PATHS: Record<string, Wire> = {
  "/v1/chat/completions": "openai",
  "/chat/completions": "openai",
  "/v1/messages": "anthropic",
  "/messages": "anthropic",
};

const WIRE_FORMATS: Record<Wire, WireFormat> = { openai: openaiWire, anthropic: anthropicWire };

function now(): number {
  return performance.timeOrigin + performance.now();
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values !== undefined) headers[name] = values.join(", ");
  }
  return headers;
}

function parseReply(reply: unknown, where: string): Reply {
  const parsed = ReplySchema.safeParse(reply);
  if (!parsed.success) {
    throw new ProviderDoubleError(
      "invalid_reply",
      `${where} is not a reply: ${describeIssues(parsed.error)}`,
      {
        hint: 'build replies with the helpers (text("hi"), toolCalls([...]), rateLimited(), …) or see ReplySchema',
      },
    );
  }
  return parsed.data;
}

function isErrorReply(reply: DataReply): reply is ErrorReply {
  return ERROR_REPLY_TYPES.has(reply.type);
}

/** The double's own answer when it cannot use a scripted reply (unknown path, bad body, a reply function failed). */
function doubleError(status: number, message: string): HttpErrorReply {
  return { type: "http_error", status, message };
}

/**
 * A loopback HTTP server speaking the OpenAI Chat Completions and Anthropic Messages wire formats with
 * scripted replies. Start it with `startProviderDouble()`.
 */
export class ProviderDouble {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  /** What `createOpenAICompatible({ baseURL })` takes: it posts to `${baseURL}/chat/completions`. */
  readonly openaiBaseUrl: string;
  /** What `createAnthropic({ baseURL })` takes: it posts to `${baseURL}/messages`. */
  readonly anthropicBaseUrl: string;

  readonly #server: Server;
  readonly #initialDefault: Reply;
  #defaultReply: Reply;
  #scripts = new Map<string, Reply[]>();
  #records: RecordedRequest[] = [];
  #seq = 0;
  #inFlight = 0;
  #maxInFlight = 0;
  #idleWaiters: Array<() => void> = [];
  #readWaiters: Array<{ count: number; wake: () => void }> = [];
  #readCount = 0;
  #connections = new WeakMap<Socket, number>();
  #connectionCount = 0;
  #closing = false;
  #closed: Promise<void> | undefined;

  private constructor(server: Server, port: number, defaultReply: Reply) {
    this.#server = server;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.openaiBaseUrl = `${this.url}/v1`;
    this.anthropicBaseUrl = `${this.url}/v1`;
    this.#initialDefault = defaultReply;
    this.#defaultReply = defaultReply;
  }

  /** @internal Use `startProviderDouble()`. */
  static async start(options: ProviderDoubleOptions = {}): Promise<ProviderDouble> {
    const parsed = ProviderDoubleOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ProviderDoubleError(
        "invalid_options",
        `startProviderDouble() options are invalid: ${describeIssues(parsed.error)}`,
        { hint: "pass { defaultReply?, scripts?, port? }" },
      );
    }
    const { defaultReply = DEFAULT_REPLY, scripts = {}, port = 0 } = parsed.data;
    const server = createServer();
    server.keepAliveTimeout = 30_000;
    const bound = await new Promise<number>((resolve, reject) => {
      server.once("error", (cause) =>
        reject(
          new ProviderDoubleError(
            "listen_failed",
            `the provider double could not listen on 127.0.0.1:${port}`,
            {
              hint: "pass port 0 for a free port, or free the port",
              cause,
            },
          ),
        ),
      );
      server.listen({ host: "127.0.0.1", port, backlog: 511 }, () =>
        resolve((server.address() as AddressInfo).port),
      );
    });
    const double = new ProviderDouble(server, bound, defaultReply);
    server.on("connection", (socket) => {
      // Nagle's algorithm holds a small write back until the previous one is acknowledged, and the client's
      // delayed ACK waits up to ~40 ms before acknowledging: a request/response exchange made of more than one
      // small write then costs ~40 ms instead of ~0.1 ms. TCP_NODELAY on every socket, plus each non-streaming
      // reply written as one write (headers and body together, with a Content-Length so the connection stays
      // open for the next request), keeps the double near the ~3 ms-a-request floor the benchmarks measure.
      socket.setNoDelay(true);
      double.#connections.set(socket, ++double.#connectionCount);
    });
    server.on("request", (req, res) => double.#handle(req, res));
    for (const [route, replies] of Object.entries(scripts)) double.script(route, replies);
    return double;
  }

  /** Enqueues replies for a route key (a request's `model`), after any already queued; first in, first out. */
  script(route: string, replies: readonly Reply[]): this {
    const parsed = replies.map((reply, index) => parseReply(reply, `script("${route}") reply ${index}`));
    const queue = this.#scripts.get(route);
    if (queue === undefined) this.#scripts.set(route, parsed);
    else queue.push(...parsed);
    return this;
  }

  /** Replaces the reply of unscripted requests (until `reset()` restores the one given at start). */
  setDefaultReply(reply: Reply): this {
    this.#defaultReply = parseReply(reply, "setDefaultReply()");
    return this;
  }

  /** Scripted replies for the route not used yet. */
  remaining(route: string): number {
    return this.#scripts.get(route)?.length ?? 0;
  }

  /** Every request received since start or `reset()`, in order of arrival; records update as requests end. */
  get requests(): readonly RecordedRequest[] {
    return this.#records;
  }

  requestsFor(route: string): RecordedRequest[] {
    return this.#records.filter((record) => record.route === route);
  }

  /** Requests per route key. */
  get counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const record of this.#records) counts[record.route] = (counts[record.route] ?? 0) + 1;
    return counts;
  }

  /** Requests received and not yet ended. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The most requests in flight at once since start or `reset()`. */
  get maxInFlight(): number {
    return this.#maxInFlight;
  }

  stats(): ProviderDoubleStats {
    return {
      requests: this.#records.length,
      counts: this.counts,
      inFlight: this.#inFlight,
      maxInFlight: this.#maxInFlight,
    };
  }

  /** Resolves once no request is in flight (at once when none is). */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Resolves once `count` requests have been read in full since start or `reset()` (body parsed, route
   * known, reply chosen; at once if they have): for a test that must act while a request is open, e.g.
   * abort a `hang()`.
   */
  received(count: number): Promise<void> {
    if (this.#readCount >= count) return Promise.resolve();
    return new Promise((wake) => this.#readWaiters.push({ count, wake }));
  }

  #noteRead(): void {
    this.#readCount += 1;
    if (this.#readWaiters.length === 0) return;
    const read = this.#readCount;
    this.#readWaiters = this.#readWaiters.filter((waiter) => {
      if (waiter.count > read) return true;
      waiter.wake();
      return false;
    });
  }

  /** Forgets requests and scripts, restarts `seq` at 1, and restores the default reply given at start. */
  reset(): void {
    this.#records = [];
    this.#scripts.clear();
    this.#seq = 0;
    this.#readCount = 0;
    this.#maxInFlight = this.#inFlight;
    this.#defaultReply = this.#initialDefault;
  }

  /** Stops listening and ends every open connection (hanging requests end as `server_closed`). */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.#closing = true;
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closed;
  }

  #next(route: string): { reply: Reply; source: ReplySource } {
    const scripted = this.#scripts.get(route)?.shift();
    return scripted === undefined
      ? { reply: this.#defaultReply, source: "default" }
      : { reply: scripted, source: "script" };
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const path = query === -1 ? url : url.slice(0, query);
    if (path.startsWith("/_double/")) {
      this.#control(req, res, path);
      return;
    }
    const record: RecordedRequest = {
      seq: ++this.#seq,
      wire: PATHS[path] ?? null,
      method: req.method ?? "GET",
      path,
      headers: headersOf(req),
      route: "",
      stream: false,
      body: null,
      connection: this.#connections.get(req.socket)!,
      arrivedAt: now(),
      finishedAt: null,
      source: "double",
      reply: null,
      outcome: "pending",
      completed: false,
    };
    this.#records.push(record);
    this.#inFlight += 1;
    if (this.#inFlight > this.#maxInFlight) this.#maxInFlight = this.#inFlight;

    let cancelWait: (() => void) | undefined;
    res.on("finish", () => {
      if (record.outcome === "pending") {
        record.outcome = "completed";
        record.completed = true;
      }
    });
    res.on("close", () => {
      if (record.outcome === "pending") record.outcome = this.#closing ? "server_closed" : "client_closed";
      record.finishedAt = now();
      cancelWait?.();
      this.#inFlight -= 1;
      if (this.#inFlight === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    });
    const wait = (ms: number | undefined) =>
      ms === undefined || ms === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, ms);
            cancelWait = () => {
              clearTimeout(timer);
              resolve();
            };
          });

    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      this.#respond(record, res, Buffer.concat(chunks).toString("utf8"), wait).catch((cause: unknown) => {
        // Only a bug in the double gets here; answer it rather than leave the client waiting.
        if (!res.headersSent) {
          const message = `the provider double failed: ${cause instanceof Error ? cause.message : String(cause)}`;
          this.#sendWhole(res, openaiWire.error(doubleError(500, message), this.#errorContext(record)));
        } else res.destroy();
      });
    });
  }

  async #respond(
    record: RecordedRequest,
    res: ServerResponse,
    text: string,
    wait: (ms: number | undefined) => Promise<void>,
  ): Promise<void> {
    let body: unknown = null;
    let bodyError: string | undefined;
    try {
      body = text.length === 0 ? null : JSON.parse(text);
    } catch (cause) {
      bodyError = cause instanceof Error ? cause.message : String(cause);
    }
    const fields = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
    record.body = body;
    record.route = typeof fields["model"] === "string" ? fields["model"] : "";
    record.stream = fields["stream"] === true;

    const { wire, refusal } = this.#check(record, body, bodyError, text);
    if (refusal !== undefined) {
      this.#noteRead();
      this.#answer(record, res, wire, "double", refusal);
      return;
    }
    // Chosen before any wait, so that the record shows a delayed reply and `received()` can resolve.
    const { reply, source } = this.#next(record.route);
    record.source = source;
    if (reply.type !== "function") record.reply = reply;
    this.#noteRead();
    await wait(reply.delayMs);
    if (record.outcome !== "pending") return;
    if (reply.type !== "function") {
      this.#answer(record, res, wire, source, reply);
      return;
    }
    const request: ParsedRequest = {
      seq: record.seq,
      wire,
      method: record.method,
      path: record.path,
      headers: record.headers,
      route: record.route,
      stream: record.stream,
      body,
    };
    let computed: DataReply;
    try {
      const parsed = DataReplySchema.safeParse(await reply.respond(request));
      if (!parsed.success) {
        const message = `The reply function for route "${record.route}" returned an invalid reply: ${describeIssues(parsed.error)}`;
        if (record.outcome === "pending")
          this.#answer(record, res, wire, "double", doubleError(500, message));
        return;
      }
      computed = parsed.data;
    } catch (cause) {
      const message = `The reply function for route "${record.route}" threw: ${cause instanceof Error ? cause.message : String(cause)}`;
      if (record.outcome === "pending") this.#answer(record, res, wire, "double", doubleError(500, message));
      return;
    }
    record.reply = computed;
    await wait(computed.delayMs);
    if (record.outcome !== "pending") return;
    this.#answer(record, res, wire, source, computed);
  }

  /**
   * The wire format to answer in, and the double's own error for a request it will not script: an unknown
   * path (answered in the OpenAI shape), a method other than POST, a body that is not a JSON object.
   */
  #check(
    record: RecordedRequest,
    body: unknown,
    bodyError: string | undefined,
    text: string,
  ): { wire: Wire; refusal: HttpErrorReply | undefined } {
    const { wire, method, path } = record;
    if (wire === null) {
      const served = Object.keys(PATHS).join(", ");
      const message = `No route for ${method} ${path}; the provider double serves POST ${served}.`;
      return { wire: "openai", refusal: doubleError(404, message) };
    }
    if (method !== "POST") {
      return { wire, refusal: doubleError(405, `${method} ${path} is not served; send POST.`) };
    }
    if (bodyError !== undefined || typeof body !== "object" || body === null || Array.isArray(body)) {
      const found =
        bodyError ?? `found ${text.length === 0 ? "an empty body" : "JSON that is not an object"}`;
      return { wire, refusal: doubleError(400, `The request body must be a JSON object; ${found}.`) };
    }
    return { wire, refusal: undefined };
  }

  #errorContext(record: RecordedRequest) {
    return { seq: record.seq, promptTokens: estimatePromptTokens(record.body), headers: record.headers };
  }

  #renderContext(record: RecordedRequest, reply: ContentReply): RenderContext {
    const options = (record.body as { stream_options?: { include_usage?: unknown } } | null)?.stream_options;
    return {
      seq: record.seq,
      model: record.route,
      usage: usageFor(reply, record.body),
      includeUsage: options?.include_usage === true,
      created: Math.floor(Date.now() / 1000),
    };
  }

  #answer(
    record: RecordedRequest,
    res: ServerResponse,
    wire: Wire,
    source: ReplySource,
    reply: DataReply,
  ): void {
    record.source = source;
    record.reply = reply;
    const format = WIRE_FORMATS[wire];
    if (isErrorReply(reply)) {
      this.#sendWhole(res, format.error(reply, this.#errorContext(record)));
      return;
    }
    switch (reply.type) {
      case "text":
      case "tool_calls":
        this.#sendContent(record, res, format, reply, true);
        return;
      case "end_without_finish":
        this.#sendContent(record, res, format, reply.reply ?? CUT_SHORT_REPLY, false);
        return;
      case "drop_mid_stream":
        this.#drop(record, res, format, reply.reply ?? CUT_SHORT_REPLY, reply.afterEvents);
        return;
      case "hang":
        if (reply.sendHeaders === true) {
          res.writeHead(200, record.stream ? SSE_HEADERS : JSON_HEADERS);
          res.flushHeaders();
        }
        return;
    }
  }

  /** The whole answer in one write: status line, headers with Content-Length, body (see the note in `start`). */
  #sendWhole(res: ServerResponse, answer: HttpAnswer): void {
    res.writeHead(answer.status, { ...answer.headers, "content-length": Buffer.byteLength(answer.body) });
    res.end(answer.body);
  }

  #sendContent(
    record: RecordedRequest,
    res: ServerResponse,
    format: WireFormat,
    reply: ContentReply,
    finished: boolean,
  ): void {
    const context = this.#renderContext(record, reply);
    if (record.stream) {
      // The whole stream in one write too: a client parses SSE the same however the bytes are split.
      const body = format.events(reply, context, finished).join("");
      this.#sendWhole(res, { status: 200, headers: { ...SSE_HEADERS }, body });
    } else {
      this.#sendWhole(res, {
        status: 200,
        headers: { ...JSON_HEADERS },
        body: format.message(reply, context, finished),
      });
    }
  }

  /** Sends part of the answer, then destroys the connection once those bytes have left. */
  #drop(
    record: RecordedRequest,
    res: ServerResponse,
    format: WireFormat,
    reply: ContentReply,
    afterEvents: number,
  ): void {
    const context = this.#renderContext(record, reply);
    let part: string;
    if (record.stream) {
      // No Content-Length: chunked, as a real stream is, so the cut shows as a stream that never ended.
      res.writeHead(200, SSE_HEADERS);
      part = format.events(reply, context, true).slice(0, afterEvents).join("");
    } else {
      const body = format.message(reply, context, true);
      res.writeHead(200, { ...JSON_HEADERS, "content-length": Buffer.byteLength(body) });
      part = body.slice(0, Math.floor(body.length / 2));
    }
    record.outcome = "dropped";
    const socket = res.socket;
    if (part.length === 0) res.flushHeaders();
    else res.write(part);
    // A write callback runs once the bytes are handed to the kernel; destroying earlier could discard them.
    if (socket === null) return;
    socket.write("", () => socket.destroy());
  }

  #control(req: IncomingMessage, res: ServerResponse, path: string): void {
    req.resume();
    req.on("end", () => {
      if (req.method === "GET" && path === "/_double/stats") {
        this.#sendWhole(res, {
          status: 200,
          headers: { ...JSON_HEADERS },
          body: JSON.stringify(this.stats()),
        });
      } else if (req.method === "POST" && path === "/_double/reset") {
        this.reset();
        this.#sendWhole(res, {
          status: 200,
          headers: { ...JSON_HEADERS },
          body: JSON.stringify(this.stats()),
        });
      } else {
        const message = `No control route ${req.method} ${path}; try GET /_double/stats or POST /_double/reset.`;
        this.#sendWhole(res, {
          status: 404,
          headers: { ...JSON_HEADERS },
          body: JSON.stringify({ error: { message } }),
        });
      }
    });
  }
}

/**
 * Starts a provider double on 127.0.0.1 (a free port unless `port` is given) and resolves once it listens.
 *
 * @example
 * const provider = await startProviderDouble();
 * provider.script("model-a", [toolCalls([{ name: "lookup", arguments: { q: "x" } }]), text("done")]);
 * const openai = createOpenAICompatible({ name: "double", baseURL: provider.openaiBaseUrl });
 * await generateText({ model: openai("model-a"), prompt: "hi", tools, stopWhen: stepCountIs(3) });
 * provider.requestsFor("model-a").length; // 2
 * await provider.close();
 */
export function startProviderDouble(options: ProviderDoubleOptions = {}): Promise<ProviderDouble> {
  return ProviderDouble.start(options);
}
