import { describe, expect, it } from "vitest";
import { WebFetchSchema, WebSearchSchema } from "./schema/web-tools";
import { effectiveWebFetch, effectiveWebSearch } from "./web-tools";

const ws = (v: unknown) => WebSearchSchema.parse(v);

describe("web_search and web_fetch settings (2.2)", () => {
  it("uses the defaults, then user settings, then the profile, field by field", () => {
    const r = effectiveWebSearch(ws({ num_results: 5, timeout_seconds: 10 }), ws({ num_results: 3 }));
    expect(r).toEqual({
      ok: true,
      settings: { mode: "auto", chain: expect.any(Array), num_results: 3, timeout_seconds: 10 },
    });
  });

  it.each<[string, unknown, unknown, unknown]>([
    ["mode off leaves the tool out", {}, { mode: false }, { ok: false, off: true }],
    ["provider mode without provider does not fit", {}, { mode: "provider" }, { ok: false, off: false }],
    [
      "provider mode with a keyless built-in",
      {},
      { mode: "provider", provider: "duckduckgo_html" },
      { ok: true },
    ],
    [
      "provider mode with a configured provider",
      { providers: { t: { type: "tavily", api_key_env: "TAVILY" } } },
      { mode: "provider", provider: "t" },
      { ok: true },
    ],
    [
      "an unknown id in the chain does not fit",
      {},
      { fallback_chain: ["exa_mcp", "nope"] },
      { ok: false, off: false },
    ],
    ["the profile overrides the user's mode", { mode: "provider" }, { mode: "auto" }, { ok: true }],
  ])("%s", (_t, user, profile, expected) => {
    expect(effectiveWebSearch(ws(user), ws(profile))).toMatchObject(expected as object);
  });

  it("tries configured providers, then the keyless built-ins, when no chain is given", () => {
    const r = effectiveWebSearch(
      ws({ providers: { b: { type: "brave", api_key_env: "BRAVE" } } }),
      undefined,
    );
    expect(r.ok && r.settings.chain.map((c) => c.id)).toEqual([
      "b",
      "exa_mcp",
      "duckduckgo_html",
      "bing_html",
    ]);
  });

  it("web_fetch: defaults and mode", () => {
    expect(effectiveWebFetch(WebFetchSchema.parse({}), undefined)).toEqual({
      ok: true,
      settings: { max_tokens: 16000, timeout_seconds: 60 },
    });
    expect(
      effectiveWebFetch(WebFetchSchema.parse({ max_tokens: 100 }), WebFetchSchema.parse({ mode: "off" })),
    ).toEqual({ ok: false, off: true });
  });
});
