import { expect, test } from "vitest";
import { startWorker } from "../src/index";
import { node, python, workspace } from "./helpers";

/**
 * The engine does not trust the worker for the protocol: a worker that sends bad JSON, wrong shapes,
 * over-size lines or floods of messages must fail only the calls concerned, never the engine or the
 * channel. A stand-in worker (a short Python script speaking the protocol on fds 3/4) misbehaves on demand.
 */
const FAKE_WORKER = String.raw`
import json, os, sys
rx, tx = os.fdopen(3, "rb", buffering=0), 4
def send(data):
    while data:
        data = data[os.write(tx, data):]
def message(obj):
    send(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
output = {"text": "", "truncated": False}
message({"type": "hello", "protocol": 3, "sdk_version": "fake", "pid": os.getpid(),
         "python": {"executable": sys.executable, "version": "3.0.0", "version_info": [3, 0, 0],
                    "implementation": "cpython", "platform": sys.platform, "machine": "x", "libc": ""},
         "pycache_prefix": os.environ["PYTHONPYCACHEPREFIX"]})
buffer = b""
while True:
    chunk = os.read(3, 1 << 20)
    if not chunk:
        break
    buffer += chunk
    while b"\n" in buffer:
        line, buffer = buffer.split(b"\n", 1)
        msg = json.loads(line)
        if msg["type"] == "load":
            bad_site = msg["entry"].endswith("bad_site.py")
            definition = {"nodes": [{"id": "a", "site": 1 if bad_site else 0}], "edges": []}
            sites = [{"file": msg["entry"], "line": 1, "column": 1, "end_line": 1, "end_column": 9}]
            message({"type": "load_result", "id": msg["id"], "ok": True, "definition": definition, "sites": sites,
                     "output": output})
        elif msg["type"] == "shutdown":
            os._exit(0)
        elif msg["type"] == "invoke":
            i, what = msg["id"], msg["node"]
            ok = {"type": "result", "id": i, "ok": True, "kind": "node", "passed": [], "output": output,
                  "leaked_threads": 0, "value": {"text": what, "data": None}}
            if what == "bad_json":
                send(b'{"type":"result","id":%d,"ok":tr\n' % i)
            elif what == "bad_shape":
                message({"type": "result", "id": i, "ok": True, "kind": "node"})
            elif what == "wrong_kind":
                message({"type": "result", "id": i, "ok": True, "kind": "until", "stop": True, "output": output, "leaked_threads": 0})
            elif what == "oversize":
                send(b'{"type":"result","id":%d,"ok":true,"value":"' % i + b"x" * (17 * 1024 * 1024) + b'"}\n')
            elif what == "flood":
                for n in range(10001):
                    message({"type": "emit", "id": i, "text": "e"})
                message(ok)
            elif what == "unknown_string":
                ok["value"]["text"] = ""
                ok["strings"] = [{"ref": 98, "at": ["value", "text"]}]
                message(ok)
            elif what == "misplaced_string":
                send(b'{"type":"string","ref":2,"bytes":3,"keep":true}\nabc\n')
                ok["strings"] = [{"ref": 2, "at": ["value", "data"]}]
                message(ok)
            elif what == "string_not_utf8":
                send(b'{"type":"string","ref":4,"bytes":2,"keep":true}\n\xff\xfe\n')
                message(ok)
            elif what == "string_without_newline":
                send(b'{"type":"string","ref":6,"bytes":2,"keep":true}\nabX')
                message(ok)
            elif what == "string_too_large":
                send(b'{"type":"string","ref":8,"bytes":%d,"keep":true}\n' % (17 * 1024 * 1024))
                message(ok)
            elif what == "oversize_with_strings":
                body = b"y" * (9 * 1024 * 1024)
                send(b'{"type":"string","ref":10,"bytes":%d,"keep":true}\n' % len(body) + body + b"\n")
                send(b'{"type":"string","ref":12,"bytes":%d,"keep":false}\n' % len(body) + body + b"\n")
                ok["value"] = {"text": "", "data": ["", ""]}
                ok["strings"] = [{"ref": 10, "at": ["value", "data", 0]}, {"ref": 12, "at": ["value", "data", 1]}]
                message(ok)
            elif what == "stray":
                send(b"garbage without an id\n")
                message({"type": "result", "id": 999999, "ok": True, "kind": "until", "stop": True, "output": output, "leaked_threads": 0})
                message(ok)
            else:
                message(ok)
`;

async function startFake() {
  const ws = workspace();
  ws.write("sdk/chrys/workflows/_worker.py", FAKE_WORKER);
  const worker = await startWorker({
    python: python(),
    cwd: ws.dir,
    cacheDir: ws.cache,
    sdkRoot: ws.path("sdk"),
  });
  return { ws, worker };
}

async function fakeWorker() {
  const { ws, worker } = await startFake();
  const refused: string[] = [];
  worker.on("protocol_error", (message) => refused.push(message));
  const loaded = await worker.load({ entry: ws.path("x.py"), packageDir: null });
  // The site sent once, by index, is back in the Definition.
  expect(loaded).toMatchObject({ ok: true, definition: { nodes: [{ site: { file: ws.path("x.py") } }] } });
  return { worker, refused };
}

test("a load_result whose site index points past its sites fails the load as worker_failed", async () => {
  const { ws, worker } = await startFake();
  const loaded = await worker.load({ entry: ws.path("bad_site.py"), packageDir: null });
  expect(loaded).toMatchObject({
    ok: false,
    diagnostics: [
      {
        code: "worker_failed",
        message: expect.stringMatching(
          /broke the protocol while loading: definition\.nodes\.0\.site is not an index into the 1 sites sent: 1/,
        ),
      },
    ],
  });
  await worker.close();
});

test.each([
  ["bad_json", /not JSON/],
  ["bad_shape", /not a protocol message/],
  ["wrong_kind", /answered a node call with a result of kind until/],
  ["oversize", /over the 16 MiB limit/],
  ["unknown_string", /names an unknown string/],
  ["misplaced_string", /has no place \["value","data"\] holding ""/],
  ["oversize_with_strings", /over the 16 MiB limit \(with its strings\)/],
])("a %s answer fails only its call with protocol_error", async (name, message) => {
  const { worker, refused } = await fakeWorker();
  const outcome = await worker.invoke(node(name));
  expect(outcome).toMatchObject({ ok: false, error: { code: "protocol_error", phase: "node" } });
  if (!outcome.ok) expect(outcome.error.message).toMatch(message);
  expect(refused.length).toBeLessThanOrEqual(1);
  expect(await worker.invoke(node("fine"))).toMatchObject({ ok: true, value: { text: "fine" } });
  await worker.close();
});

test("a flood of emits past the attempt's limit fails the call even if the worker does not", async () => {
  const { worker } = await fakeWorker();
  let emitted = 0;
  const outcome = await worker.invoke(node("flood"), { onEmit: () => emitted++ });
  expect(outcome).toMatchObject({ ok: false, error: { code: "protocol_limit" } });
  expect(emitted).toBe(10_000);
  expect(await worker.invoke(node("fine"))).toMatchObject({ ok: true });
  await worker.close();
});

test.each([
  ["string_not_utf8", /string frame 4 is not UTF-8/],
  ["string_without_newline", /string frame 6 is not followed by a newline after its 2 bytes/],
  ["string_too_large", /a string frame header needs a positive ref, bytes \(at most 16777216\)/],
])("a broken string frame (%s) is reported, and the channel goes on", async (name, message) => {
  const { worker, refused } = await fakeWorker();
  // The broken frame is reported (with no call to blame); the answer right behind it still settles its call.
  expect(await worker.invoke(node(name))).toMatchObject({ ok: true, value: { text: name } });
  expect(refused).toHaveLength(1);
  expect(refused[0]).toMatch(message);
  expect(await worker.invoke(node("fine"))).toMatchObject({ ok: true, value: { text: "fine" } });
  await worker.close();
});

test("messages that belong to no call are reported and ignored", async () => {
  const { worker, refused } = await fakeWorker();
  expect(await worker.invoke(node("stray"))).toMatchObject({ ok: true, value: { text: "stray" } });
  expect(refused).toHaveLength(1);
  expect(refused[0]).toMatch(/not JSON/);
  await worker.close();
});
