import { Agent, type Dispatcher, ProxyAgent, fetch as undiciFetch } from "undici";

/**
 * The HTTP side of a model profile (agent-profiles.md 4.1): `http_connect_timeout`, `http_read_timeout` (the
 * wait for the response headers, then for each piece of the body, so with streaming it applies only while
 * the provider sends nothing), `verify_ssl`, and proxies from the engine's environment unless
 * `bypass_proxy`. Built on undici's own `fetch` and dispatchers, which give exactly these timers; the
 * dispatchers are kept per setting so that connections are reused from request to request.
 */
export interface HttpSettings {
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly verifySsl: boolean;
  readonly bypassProxy: boolean;
}

/** What is merged into every request: extra headers, extra body fields, extra query parameters. */
export interface RequestExtras {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, unknown>>;
  readonly query: Readonly<Record<string, string>>;
}

type FetchFunction = typeof globalThis.fetch;

export class DispatcherPool {
  readonly #dispatchers = new Map<string, Dispatcher>();
  readonly #limit: number;

  constructor(limit = 32) {
    this.#limit = limit;
  }

  /**
   * The dispatcher for a request to `url` with these settings: through the proxy that `env` names for the
   * URL's scheme (`HTTPS_PROXY`, `HTTP_PROXY`, either case; not for hosts in `NO_PROXY`) unless
   * `bypassProxy`, else direct.
   */
  get(settings: HttpSettings, env: Readonly<Record<string, string | undefined>>, url: URL): Dispatcher {
    const proxy = settings.bypassProxy ? null : proxyFor(env, url);
    const key = JSON.stringify([settings, proxy]);
    const found = this.#dispatchers.get(key);
    if (found !== undefined) return found;
    const options = {
      connect: { timeout: settings.connectTimeoutMs, rejectUnauthorized: settings.verifySsl },
      headersTimeout: settings.readTimeoutMs,
      bodyTimeout: settings.readTimeoutMs,
    };
    const dispatcher: Dispatcher =
      proxy === null
        ? new Agent(options)
        : new ProxyAgent({ ...options, uri: proxy, requestTls: { rejectUnauthorized: settings.verifySsl } });
    if (this.#dispatchers.size >= this.#limit) {
      const [oldestKey, oldest] = this.#dispatchers.entries().next().value as [string, Dispatcher];
      this.#dispatchers.delete(oldestKey);
      void oldest.close().catch(() => undefined);
    }
    this.#dispatchers.set(key, dispatcher);
    return dispatcher;
  }

  async close(): Promise<void> {
    const all = [...this.#dispatchers.values()];
    this.#dispatchers.clear();
    await Promise.all(all.map((d) => d.close().catch(() => undefined)));
  }
}

/** The proxy URL for a request to `url`, from the engine's environment, or null to connect directly. */
export function proxyFor(env: Readonly<Record<string, string | undefined>>, url: URL): string | null {
  const pick = (name: string): string | undefined => {
    const value = env[name.toLowerCase()] ?? env[name];
    return value === undefined || value.trim() === "" ? undefined : value.trim();
  };
  const proxy = url.protocol === "https:" ? (pick("HTTPS_PROXY") ?? pick("HTTP_PROXY")) : pick("HTTP_PROXY");
  if (proxy === undefined) return null;
  const noProxy = pick("NO_PROXY");
  if (noProxy !== undefined && matchesNoProxy(noProxy, url)) return null;
  return proxy;
}

/** `NO_PROXY`: `*`, or entries `host`, `.domain`, `host:port`, matched against the host and its parents. */
function matchesNoProxy(list: string, url: URL): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/gu, "");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return list
    .split(/[\s,]+/u)
    .filter((entry) => entry !== "")
    .some((entry) => {
      if (entry === "*") return true;
      const [name = "", entryPort] = entry.toLowerCase().split(/:(?=\d+$)/u);
      if (entryPort !== undefined && entryPort !== port) return false;
      const bare = name.replace(/^\*?\./u, "");
      return host === bare || host.endsWith(`.${bare}`);
    });
}

/**
 * A `fetch` for the AI SDK providers: through `dispatcher`, with `extras` merged in. A JSON body is
 * rewritten only when there are body fields to add (the profile's fields win over the SDK's).
 */
export function providerFetch(dispatcherFor: (url: URL) => Dispatcher, extras: RequestExtras): FetchFunction {
  const addBody = Object.keys(extras.body).length > 0;
  const addQuery = Object.keys(extras.query).length > 0;
  const addHeaders = Object.keys(extras.headers).length > 0;
  const fetchWith = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    if (addQuery) for (const [k, v] of Object.entries(extras.query)) url.searchParams.set(k, v);
    let body = init?.body;
    if (addBody && typeof body === "string") {
      const parsed: unknown = JSON.parse(body);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        body = JSON.stringify({ ...parsed, ...extras.body });
      }
    }
    let headers = init?.headers;
    if (addHeaders) {
      const merged = new Headers(headers);
      for (const [k, v] of Object.entries(extras.headers)) merged.set(k, v);
      headers = merged;
    }
    // undici's Response is the web Response the SDK reads (Node's global fetch is this same undici).
    const response = await undiciFetch(url.href, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      ...(body === undefined ? {} : { body: body as string }),
      ...(headers === undefined ? {} : { headers: headers as Record<string, string> }),
      dispatcher: dispatcherFor(url),
    });
    return response as unknown as Response;
  };
  return fetchWith as FetchFunction;
}
