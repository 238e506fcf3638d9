/*
 * The HTTP settings of a model profile against real servers: `verify_ssl` with a self-signed HTTPS server
 * (its certificate made by openssl for the test), and proxies from the engine's environment with and
 * without `bypass_proxy` through a CONNECT proxy that counts the tunnels it opened.
 */

import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, connect } from "node:net";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble, text } from "@icode/model-provider-double";
import { tmpDir } from "@icode/test-utils";
import { execa } from "execa";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createNativeRunner } from "../src/native/runner";
import { attempt, modelYaml, noWait, profileYaml, setup, toolsetOf } from "./native-harness";

let provider: ProviderDouble;
let https: Server;
let httpsUrl: string;
let proxy: Server;
let proxyUrl: string;
const tunnels: string[] = [];

const COMPLETION = JSON.stringify({
  id: "chatcmpl-tls",
  object: "chat.completion",
  created: 0,
  model: "tls",
  choices: [{ index: 0, message: { role: "assistant", content: "secure hello" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
});

beforeAll(async () => {
  provider = await startProviderDouble();
  const dir = tmpDir("icode-tls-");
  await execa("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    join(dir, "key.pem"),
    "-out",
    join(dir, "cert.pem"),
  ]);
  https = createHttpsServer(
    { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
    (req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(COMPLETION));
    },
  );
  await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve));
  httpsUrl = `https://127.0.0.1:${(https.address() as AddressInfo).port}/v1`;

  proxy = createHttpServer((_req, res) => res.writeHead(405).end());
  proxy.on("connect", (req, client, head) => {
    tunnels.push(req.url ?? "");
    const [host, port] = (req.url ?? "").split(":");
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  https.closeAllConnections();
  proxy.closeAllConnections();
  await Promise.all([
    provider.close(),
    new Promise((r) => https.close(r)),
    new Promise((r) => proxy.close(r)),
  ]);
});

it("refuses a self-signed certificate, not retried, unless verify_ssl is false", async () => {
  const runner = createNativeRunner({ buildToolset: toolsetOf([]).build, sleep: noWait });
  const yaml = (verify: boolean) =>
    `name: tls ${verify}\nprovider: openai\nmodel_id: tls\nbase_url: ${httpsUrl}\napi_key: k\nstream: false\nverify_ssl: ${verify}\n`;
  const s = await setup({
    models: { strict: yaml(true), lax: yaml(false) },
    agents: { Tester: profileYaml("Tester") },
  });
  const strict = await attempt(runner, s, { model: "strict" });
  expect(strict.result).toMatchObject({
    status: "failed",
    error: { class: "model_tls_failed", retryable: false },
  });
  expect(strict.io.of("request_retry")).toEqual([]);
  const lax = await attempt(runner, s, { model: "lax" });
  expect(lax.result).toEqual({ status: "completed", value: { text: "secure hello", data: null } });
  await runner.close();
});

it("goes through the environment's proxy, and around it with bypass_proxy", async () => {
  const runner = createNativeRunner({ buildToolset: toolsetOf([]).build, sleep: noWait });
  const s = await setup({
    models: {
      via: modelYaml(provider, "openai", "via-proxy", { stream: false }),
      around: modelYaml(provider, "openai", "around-proxy", { stream: false, bypass_proxy: true }),
    },
    agents: { Tester: profileYaml("Tester") },
  });
  provider.script("via-proxy", [text("through the proxy")]);
  provider.script("around-proxy", [text("direct")]);
  const env = { HTTP_PROXY: proxyUrl };
  const host = new URL(provider.url).host;

  const via = await attempt(runner, s, { model: "via", env });
  expect(via.result).toMatchObject({ status: "completed", value: { text: "through the proxy" } });
  expect(tunnels).toEqual([host]);

  const around = await attempt(runner, s, { model: "around", env });
  expect(around.result).toMatchObject({ status: "completed", value: { text: "direct" } });
  expect(tunnels).toEqual([host]);
  expect(provider.requestsFor("around-proxy")).toHaveLength(1);
  await runner.close();
});
