import type { z } from "zod";
import {
  KEYLESS_WEB_SEARCH_TYPES,
  type WebFetchSchema,
  type WebSearchProviderSchema,
  type WebSearchSchema,
} from "./schema/web-tools";

type WebSearchSection = z.output<typeof WebSearchSchema>;
type WebFetchSection = z.output<typeof WebFetchSchema>;
export type WebSearchProvider = z.output<typeof WebSearchProviderSchema>;

export interface WebSearchSettings {
  mode: "auto" | "provider";
  /** Providers to try, in order: one in `provider` mode, the fallback chain in `auto` mode. */
  chain: { id: string; provider: WebSearchProvider }[];
  num_results: number;
  timeout_seconds: number;
}

export interface WebFetchSettings {
  max_tokens: number;
  timeout_seconds: number;
}

export const WEB_SEARCH_DEFAULTS = { mode: "auto", num_results: 8, timeout_seconds: 30 } as const;
export const WEB_FETCH_DEFAULTS = { mode: "on", max_tokens: 16000, timeout_seconds: 60 } as const;

export type WebTool<T> =
  | { ok: true; settings: T }
  | { ok: false; off: true }
  | { ok: false; off: false; reason: string };

/**
 * The `web_search` settings a profile runs with: the defaults, then the user settings `tools.web_search.*`,
 * then the profile's `tools.web_search`, field by field. `off` means the mode is off; a `reason` means the
 * combination does not fit the mode, and the tool is left out.
 */
export function effectiveWebSearch(
  user: WebSearchSection,
  profile: WebSearchSection | undefined,
): WebTool<WebSearchSettings> {
  const m = { ...stripUndefined(user), ...stripUndefined(profile ?? {}) };
  const mode = m.mode ?? WEB_SEARCH_DEFAULTS.mode;
  if (mode === "off") return { ok: false, off: true };
  const providers = m.providers ?? {};
  const lookup = (id: string): WebSearchProvider | null =>
    providers[id] ??
    ((KEYLESS_WEB_SEARCH_TYPES as readonly string[]).includes(id)
      ? ({ type: id } as WebSearchProvider)
      : null);
  let ids: string[];
  if (mode === "provider") {
    if (m.provider === undefined)
      return { ok: false, off: false, reason: "mode provider needs provider, the id of the provider to use" };
    ids = [m.provider];
  } else {
    ids = m.fallback_chain ?? [
      ...Object.keys(providers),
      ...KEYLESS_WEB_SEARCH_TYPES.filter((t) => !(t in providers)),
    ];
  }
  const chain: WebSearchSettings["chain"] = [];
  for (const id of ids) {
    const provider = lookup(id);
    if (provider === null) {
      return {
        ok: false,
        off: false,
        reason: `"${id}" is neither an id in providers nor a provider that needs no settings (${KEYLESS_WEB_SEARCH_TYPES.join(", ")})`,
      };
    }
    chain.push({ id, provider });
  }
  if (chain.length === 0)
    return { ok: false, off: false, reason: "the fallback chain is empty, so there is no provider to try" };
  return {
    ok: true,
    settings: {
      mode,
      chain,
      num_results: m.num_results ?? WEB_SEARCH_DEFAULTS.num_results,
      timeout_seconds: m.timeout_seconds ?? WEB_SEARCH_DEFAULTS.timeout_seconds,
    },
  };
}

/** The `web_fetch` settings: defaults, then user settings, then the profile, field by field. */
export function effectiveWebFetch(
  user: WebFetchSection,
  profile: WebFetchSection | undefined,
): WebTool<WebFetchSettings> {
  const m = { ...stripUndefined(user), ...stripUndefined(profile ?? {}) };
  if ((m.mode ?? WEB_FETCH_DEFAULTS.mode) === "off") return { ok: false, off: true };
  return {
    ok: true,
    settings: {
      max_tokens: m.max_tokens ?? WEB_FETCH_DEFAULTS.max_tokens,
      timeout_seconds: m.timeout_seconds ?? WEB_FETCH_DEFAULTS.timeout_seconds,
    },
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
