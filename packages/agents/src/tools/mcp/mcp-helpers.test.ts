import { describe, expect, it } from "vitest";
import { nodeEncoding, stdioEnvironment } from "./connect";
import { proxyFor } from "./http-fetch";
import { limitResult, toolResultOutcome } from "./tool-result";

describe("proxyFor", () => {
  const env = {
    http_proxy: "http://p:1",
    HTTPS_PROXY: "http://ps:2",
    no_proxy: "internal.example, .corp, 10.0.0.1:8080",
  };
  it.each([
    ["http://api.example/mcp", "http://p:1"],
    ["https://api.example/mcp", "http://ps:2"],
    ["http://internal.example/mcp", null],
    ["http://a.internal.example/mcp", null],
    ["http://x.corp/mcp", null],
    ["http://10.0.0.1:8080/mcp", null],
    ["http://10.0.0.1:9090/mcp", "http://p:1"],
  ])("%s goes through %s", (url, proxy) => {
    expect(proxyFor(new URL(url), env)).toBe(proxy);
  });

  it("uses nothing without proxy variables, and nothing with no_proxy=*", () => {
    expect(proxyFor(new URL("http://a/"), {})).toBeNull();
    expect(proxyFor(new URL("http://a/"), { HTTP_PROXY: "http://p:1", NO_PROXY: "*" })).toBeNull();
    expect(
      proxyFor(new URL("http://a/"), { HTTP_PROXY: "http://upper:1", http_proxy: "http://lower:1" }),
    ).toBe("http://lower:1");
  });
});

describe("tool results", () => {
  const options = { maxTokens: 8000, serverName: "s", vision: false };
  it("joins text blocks and embedded text resources, falls back to structuredContent", () => {
    expect(
      toolResultOutcome(
        {
          content: [
            { type: "text", text: "a" },
            { type: "resource", resource: { uri: "file:///x", text: "b" } },
            { type: "resource_link", uri: "file:///y", name: "y" },
          ],
        },
        options,
      ),
    ).toEqual({ ok: true, output: "a\nb\n[resource y file:///y]" });
    expect(toolResultOutcome({ content: [], structuredContent: { sum: 3 } }, options)).toEqual({
      ok: true,
      output: '{"sum":3}',
    });
    expect(toolResultOutcome({ content: [], isError: true }, options)).toEqual({
      ok: false,
      error: "the MCP tool reported an error without a message",
    });
  });

  it("hands images to a model with vision as media, and leaves them out otherwise", () => {
    const result = { content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] };
    expect(toolResultOutcome(result, { ...options, vision: true })).toEqual({
      ok: true,
      output: "[image image/png]",
      media: [{ mediaType: "image/png", data: "AAAA" }],
    });
    expect(toolResultOutcome(result, options)).toEqual({
      ok: true,
      output: "[image image/png left out: this model cannot take it]",
    });
  });

  it("cuts at the token limit with a note, and not at all with 0", () => {
    expect(limitResult("x".repeat(1000), 100, "s")).toBe(
      `${"x".repeat(400)}\n[result truncated: about 250 tokens, more than the 100-token limit of MCP server "s" (max_tool_result_tokens)]`,
    );
    expect(limitResult("x".repeat(1000), 0, "s")).toHaveLength(1000);
    expect(limitResult("x".repeat(400), 100, "s")).toHaveLength(400);
  });
});

describe("stdio servers", () => {
  it("inherit only the safe variables of the engine's environment, plus their own", () => {
    expect(
      stdioEnvironment(
        { TOKEN: "t" },
        { PATH: "/bin", HOME: "/h", SECRET: "no", BASH_FUNC: "() { :; }", TERM: "() x" },
      ),
    ).toEqual({ PATH: "/bin", HOME: "/h", TOKEN: "t" });
  });

  it("take a Node encoding, or none that Node cannot write", () => {
    expect(nodeEncoding(null)).toBe("utf8");
    expect(nodeEncoding("UTF-8")).toBe("utf8");
    expect(nodeEncoding("utf-16le")).toBe("utf16le");
    expect(nodeEncoding("latin1")).toBe("latin1");
    expect(nodeEncoding("cp1252")).toBeNull();
  });
});
