import type { FetchLike } from "@modelcontextprotocol/client";
import { Agent, type Dispatcher, ProxyAgent, fetch as undiciFetch } from "undici";

/**
 * The proxy for a URL from proxy variables of `env` (not of the process): `https_proxy`/`HTTPS_PROXY` for
 * `https:` URLs, `http_proxy`/`HTTP_PROXY` for `http:` ones (lower case first, as curl), unless
 * `no_proxy`/`NO_PROXY` lists the host: `*`, a host name (`example.com` also covers its subdomains, as does
 * `.example.com`), optionally with `:port`. Null: connect directly.
 */
export function proxyFor(url: URL, env: Readonly<Record<string, string | undefined>>): string | null {
  const pick = (...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== "");
  const proxy =
    url.protocol === "https:" ? pick("https_proxy", "HTTPS_PROXY") : pick("http_proxy", "HTTP_PROXY");
  if (proxy === undefined) return null;
  const host = url.hostname.replace(/^\[|\]$/gu, "").toLowerCase();
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  for (const raw of (pick("no_proxy", "NO_PROXY") ?? "").split(/[,\s]+/u)) {
    if (raw === "") continue;
    if (raw === "*") return null;
    const m = /^(.+):(\d+)$/u.exec(raw);
    const entryHost = (m ? (m[1] as string) : raw)
      .replace(/^\*?\.?/u, "")
      .replace(/^\[|\]$/gu, "")
      .toLowerCase();
    if (m && Number(m[2]) !== port) continue;
    if (host === entryHost || host.endsWith(`.${entryHost}`)) return null;
  }
  return proxy;
}

/**
 * The fetch an HTTP MCP server's transport uses: undici with its own connection pool, certificates checked
 * unless `verify_ssl` is off, and the proxy of the engine's environment unless `bypass_proxy` is on.
 * `close()` lets its connections go.
 */
export function mcpHttpFetch(
  url: URL,
  options: { verifySsl: boolean; bypassProxy: boolean; env: Readonly<Record<string, string | undefined>> },
): { fetch: FetchLike; proxy: string | null; close(): Promise<void> } {
  const tls = { rejectUnauthorized: options.verifySsl };
  const proxy = options.bypassProxy ? null : proxyFor(url, options.env);
  const dispatcher: Dispatcher =
    proxy === null
      ? new Agent({ connect: tls })
      : new ProxyAgent({ uri: proxy, requestTls: tls, proxyTls: tls });
  const fetch: FetchLike = (input, init) =>
    undiciFetch(input, { ...(init as object), dispatcher } as Parameters<
      typeof undiciFetch
    >[1]) as unknown as Promise<Response>;
  return { fetch, proxy, close: () => dispatcher.close().catch(() => {}) };
}
