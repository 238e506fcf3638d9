import { describe, expect, it } from "vitest";
import { proxyFor } from "./http";

describe("proxyFor", () => {
  const url = (u: string) => new URL(u);
  it("takes the proxy of the URL's scheme from the engine's environment, either case", () => {
    expect(proxyFor({ HTTPS_PROXY: "http://p:3128" }, url("https://api.openai.com/v1"))).toBe(
      "http://p:3128",
    );
    expect(proxyFor({ https_proxy: "http://lower:1" }, url("https://x.test"))).toBe("http://lower:1");
    expect(proxyFor({ HTTP_PROXY: "http://p:1" }, url("https://x.test"))).toBe("http://p:1");
    expect(proxyFor({ HTTPS_PROXY: "http://p:1" }, url("http://x.test"))).toBeNull();
    expect(proxyFor({}, url("https://x.test"))).toBeNull();
  });

  it("connects directly to hosts NO_PROXY lists", () => {
    const env = { HTTP_PROXY: "http://p:1", NO_PROXY: "localhost, .internal.test,127.0.0.1:8080" };
    expect(proxyFor(env, url("http://localhost:9/v1"))).toBeNull();
    expect(proxyFor(env, url("http://llm.internal.test/v1"))).toBeNull();
    expect(proxyFor(env, url("http://127.0.0.1:8080/v1"))).toBeNull();
    expect(proxyFor(env, url("http://127.0.0.1:8081/v1"))).toBe("http://p:1");
    expect(proxyFor({ ...env, NO_PROXY: "*" }, url("http://anything.test"))).toBeNull();
  });
});
