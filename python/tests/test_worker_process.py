"""The real worker process, driven over its real pipes (fds 3 and 4) the way the engine drives it: every
message it sends must match the engine's JSON Schema (``fixtures/protocol/schema.json``)."""

from __future__ import annotations

import json
import os
import platform
import select
import shutil
import socket
import sys
import tempfile
import time
import unittest
from typing import Any, Dict, List, Optional

import chrys.workflows

from .test_worker_protocol import MESSAGES, assert_from_worker

SDK_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(chrys.workflows.__file__))))
WORKER = os.path.join(SDK_ROOT, "chrys", "workflows", "_worker.py")
BOOTSTRAP = os.path.join(SDK_ROOT, "icode_worker.py")

FLOW = """
from chrys.workflows import WorkflowBuilder, WorkflowValue, SourceValue, Question
print("loading")

def echo(value):
    print("echo", value.text)
    return value

async def talk(value, ctx):
    ctx.emit("step 1 of 3")
    first, second = await ctx.ask([
        Question("Which areas?", header="Areas", options=["API"], multi_select=True),
        Question("Anything else?"),
    ])
    return ",".join(first.selected) + "|" + second.text

wf = WorkflowBuilder("Golden")
route = wf.python("route", echo)
a, b, c, d, e = (wf.python(n, echo) for n in "abcde")
wf.edge(route, a, when=lambda v: v.text == "é")
wf.edge(route, b, when=lambda v: False)
wf.switch(route, [(lambda v: False, c), (lambda v: True, d)], default=e)
talker = wf.python("talk", talk)
wf.edge(route, talker)
body = lambda scope: (lambda n: (n, n))(scope.python("inner", echo))
refine = wf.loop("refine", body, lambda v: v.text == "draft", max_iterations=2)
wf.edge(route, refine)
merge = wf.python("merge", echo)
wf.join([a, b], merge, combine=lambda sources: "\\n".join(s.value.text for s in sources))
wf.start(route)
wf.output(route)
workflow = wf.build()
"""


class WorkerDriver(unittest.TestCase):
    """Spawns the worker on its real pipes and talks to it (no tests of its own)."""

    def setUp(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="icode-worker-test-")
        self.addCleanup(shutil.rmtree, self.folder, True)
        self.cache = os.path.join(self.folder, "cache")
        self.entry = os.path.join(self.folder, "echo.py")
        with open(self.entry, "w", encoding="utf-8") as handle:
            handle.write(FLOW)
        self.buffer = b""

    def spawn(self, script: str = WORKER, *args: str) -> Dict[str, Any]:
        to_worker, self.tx = socket.socketpair()
        self.rx, from_worker = socket.socketpair()
        self.out_r, out_w = os.pipe()
        env = dict(os.environ, PYTHONPYCACHEPREFIX=self.cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        actions = [
            (os.POSIX_SPAWN_DUP2, out_w, 1),
            (os.POSIX_SPAWN_DUP2, out_w, 2),
            (os.POSIX_SPAWN_DUP2, to_worker.fileno(), 3),
            (os.POSIX_SPAWN_DUP2, from_worker.fileno(), 4),
        ]
        cwd = os.getcwd()
        os.chdir(self.folder)
        try:
            self.pid = os.posix_spawn(sys.executable, [sys.executable, script, *args], env, file_actions=actions)
        finally:
            os.chdir(cwd)
        to_worker.close()
        from_worker.close()
        os.close(out_w)
        self.addCleanup(self._stop)
        return self.receive()

    def _stop(self) -> None:
        try:
            os.kill(self.pid, 9)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        self.tx.close()
        self.rx.close()
        os.close(self.out_r)

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        self.tx.sendall(data)

    def receive(self, timeout: float = 10.0) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.rx], [], [], remaining)[0]:
                raise AssertionError("the worker did not answer")
            chunk = self.rx.recv(1 << 20)
            if not chunk:
                raise AssertionError("the worker closed the channel")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        assert_from_worker(self, line + b"\n")
        message: Dict[str, Any] = json.loads(line)
        return message

    def until(self, kind: str, call_id: Optional[int] = None) -> List[Dict[str, Any]]:
        """Messages up to and including the first of type ``kind`` (for ``call_id``)."""
        seen = []
        while True:
            message = self.receive()
            seen.append(message)
            if message["type"] == kind and (call_id is None or message.get("id") == call_id):
                return seen

    def golden(self, kind: str, **match: Any) -> Dict[str, Any]:
        for message in MESSAGES["to_worker"]:
            if message["type"] == kind and all(message.get(k) == v for k, v in match.items()):
                return dict(message)
        raise KeyError(kind)

    def load(self) -> Dict[str, Any]:
        self.send({**self.golden("load", package_dir=None), "entry": self.entry})
        return self.until("load_result")[-1]


@unittest.skipUnless(hasattr(os, "posix_spawn"), "drives the worker's pipes with posix_spawn")
class WorkerProcessTest(WorkerDriver):

    def test_hello_describes_the_interpreter(self) -> None:
        hello = self.spawn()
        self.assertEqual(hello["protocol"], MESSAGES["protocol"])
        self.assertEqual(hello["sdk_version"], chrys.workflows.__version__)
        self.assertEqual(hello["python"]["version_info"], list(sys.version_info[:3]))
        self.assertEqual(hello["python"]["executable"], os.path.realpath(sys.executable))
        self.assertEqual(hello["pid"], self.pid)
        self.assertEqual(hello["pycache_prefix"], self.cache)
        # Read without importing `platform` (see _serve.python_info), and the same as it says.
        self.assertEqual(hello["python"]["machine"], platform.machine())
        self.assertEqual(hello["python"]["libc"], " ".join(part for part in platform.libc_ver() if part))

    def test_the_bootstrap_script_starts_the_same_worker(self) -> None:
        hello = self.spawn(BOOTSTRAP)
        self.assertEqual(hello["protocol"], MESSAGES["protocol"])
        self.assertTrue(self.load()["ok"])

    def test_golden_exchange(self) -> None:
        self.spawn()
        self.send(self.golden("invoke", id=4))
        refused = self.until("result", 4)[-1]
        self.assertEqual(refused["error"]["code"], "protocol_error")  # nothing is loaded yet
        loaded = self.load()
        self.assertTrue(loaded["ok"])
        self.assertEqual(loaded["output"], {"text": "loading\n", "truncated": False})
        self.assertEqual(loaded["definition"]["title"], "Golden")

        route = self.golden("invoke", id=3)
        self.send(route)
        result = self.until("result", 3)[-1]
        self.assertEqual(result["value"], route["input"])
        self.assertEqual(result["passed"], ["route->a", "route->d"])
        self.assertEqual(result["output"], {"text": "echo é\n", "truncated": False})

        self.send(self.golden("invoke", id=2))  # names a node this workflow does not have
        self.assertEqual(self.until("result", 2)[-1]["error"]["code"], "protocol_error")
        self.send(self.golden("cancel"))  # of a call that is over: ignored

        self.send(self.golden("invoke", id=4))
        self.assertEqual(self.until("result", 4)[-1]["stop"], True)
        self.send(self.golden("invoke", id=5))
        self.assertEqual(self.until("result", 5)[-1]["value"], {"text": "one\ntwo", "data": None})

        self.send({**route, "id": 6, "node": "talk", "conditions": None})
        seen = self.until("ask", 6)
        self.assertEqual([m["type"] for m in seen], ["emit", "ask"])
        golden_ask = [m for m in MESSAGES["from_worker"] if m["type"] == "ask"][0]
        self.assertEqual(seen[0], [m for m in MESSAGES["from_worker"] if m["type"] == "emit"][0])
        self.assertEqual(seen[1]["questions"], golden_ask["questions"])
        answer = self.golden("answer", ok=True)
        self.send({**answer, "ask_id": seen[1]["ask_id"]})
        self.assertEqual(self.until("result", 6)[-1]["value"], {"text": "API|own", "data": None})

        self.send(self.golden("shutdown"))
        self.assertEqual(os.waitpid(self.pid, 0)[1], 0)

    def test_calls_sent_right_behind_the_load_are_served(self) -> None:
        self.spawn()
        route = self.golden("invoke", id=3)
        load = {**self.golden("load", package_dir=None), "entry": self.entry}
        self.tx.sendall(b"".join(json.dumps(m).encode() + b"\n" for m in (load, route, {**route, "id": 7})))
        self.assertTrue(self.until("load_result")[-1]["ok"])
        results: Dict[int, Dict[str, Any]] = {}
        while len(results) < 2:  # in either order
            message = self.receive()
            results[message["id"]] = message
        self.assertEqual(sorted(results), [3, 7])
        self.assertEqual(results[3]["passed"], ["route->a", "route->d"])
        self.assertEqual(results[7]["value"], route["input"])

    def test_bad_messages_are_refused_and_the_channel_stays_usable(self) -> None:
        self.spawn()
        self.assertTrue(self.load()["ok"])
        self.send(b"this is not json\n")
        refused = self.receive()
        self.assertEqual((refused["type"], refused["id"]), ("protocol_error", None))
        self.assertIn("not a JSON message", refused["message"])
        self.send({"type": "bogus", "id": 40})
        refused = self.until("result", 40)[-1]
        self.assertEqual(refused["error"]["code"], "protocol_error")
        self.assertIn("unknown message type 'bogus'", refused["error"]["message"])
        route = self.golden("invoke", id=3)
        huge = {**route, "id": 41, "input": {"text": "x" * (17 * 1024 * 1024), "data": None}}
        self.send(huge)
        refused = self.until("result", 41)[-1]
        self.assertEqual(refused["error"]["code"], "protocol_error")
        self.assertIn("16 MiB", refused["error"]["message"])
        self.send({**route, "id": 42})
        self.assertTrue(self.until("result", 42)[-1]["ok"])



STARTUP = """
import sys
from chrys.workflows import WorkflowBuilder
print("asyncio imported before the load:", "asyncio" in sys.modules)

def echo(value):
    return value

wf = WorkflowBuilder("Startup")
node = wf.python("echo", echo)
wf.start(node)
wf.output(node)
workflow = wf.build()
"""

TOP_LEVEL_LOOP = """
import asyncio
from chrys.workflows import WorkflowBuilder, WorkflowValue

LOOP = asyncio.get_event_loop()  # top-level code finds a current loop, as in a script

async def same_loop(value):
    return WorkflowValue(text=str(asyncio.get_running_loop() is LOOP))

wf = WorkflowBuilder("Loop")
node = wf.python("same_loop", same_loop)
wf.start(node)
wf.output(node)
workflow = wf.build()
"""

NO_ASYNC = """
import sys, time
from chrys.workflows import WorkflowBuilder, WorkflowValue

def modules(value):
    return WorkflowValue(text=",".join(name for name in ("asyncio", "concurrent.futures") if name in sys.modules))

def nap(value):
    time.sleep(float(value.text))
    return value

wf = WorkflowBuilder("No async")
first = wf.python("modules", modules)
second = wf.python("nap", nap)
wf.edge(first, second)
wf.start(first)
wf.output(second)
workflow = wf.build()
"""


@unittest.skipUnless(hasattr(os, "posix_spawn"), "drives the worker's pipes with posix_spawn")
class WorkerStartupTest(WorkerDriver):
    """The call machinery (asyncio, the runtime) is not imported before the load is answered."""

    def write(self, source: str) -> None:
        with open(self.entry, "w", encoding="utf-8") as handle:
            handle.write(source)

    def test_the_load_runs_before_asyncio_is_imported_and_calls_are_served_after(self) -> None:
        self.write(STARTUP)
        self.spawn()
        loaded = self.load()
        self.assertTrue(loaded["ok"])
        self.assertEqual(loaded["output"]["text"], "asyncio imported before the load: False\n")
        self.send({**self.golden("invoke", id=2), "id": 5})
        self.assertEqual(self.until("result", 5)[-1]["value"], {"text": "hello", "data": None})

    def test_a_workflow_without_async_nodes_is_served_without_importing_asyncio(self) -> None:
        self.write(NO_ASYNC)
        self.spawn()
        self.assertTrue(self.load()["ok"])
        self.send({**self.golden("invoke", id=2), "id": 3, "node": "modules"})
        self.assertEqual(self.until("result", 3)[-1]["value"], {"text": "", "data": None})
        # Its loop still keeps time limits: a call over its limit is answered when the limit is reached, and
        # calls within theirs are answered meanwhile.
        started = time.monotonic()
        self.send({**self.golden("invoke", id=2), "id": 4, "node": "nap", "input": {"text": "5", "data": None},
                   "timeout_ms": 300})
        self.send({**self.golden("invoke", id=2), "id": 5, "node": "nap", "input": {"text": "0", "data": None}})
        self.assertTrue(self.until("result", 5)[-1]["ok"])
        timed_out = self.until("result", 4)[-1]
        self.assertEqual((timed_out["ok"], timed_out["error"]["code"]), (False, "timeout"))
        self.assertGreaterEqual(time.monotonic() - started, 0.3)
        self.assertLess(time.monotonic() - started, 4.5)

    def test_an_async_node_is_served_on_an_asyncio_loop(self) -> None:
        self.write(STARTUP.replace("def echo(value):", "async def echo(value):"))
        self.spawn()
        self.assertTrue(self.load()["ok"])
        self.send({**self.golden("invoke", id=2), "id": 8})
        self.assertEqual(self.until("result", 8)[-1]["value"], {"text": "hello", "data": None})

    def test_shutdown_right_after_the_load_ends_the_worker(self) -> None:
        self.write(STARTUP)
        self.spawn()
        self.assertTrue(self.load()["ok"])
        self.send(self.golden("shutdown"))
        self.assertEqual(os.waitpid(self.pid, 0)[1], 0)

    def test_top_level_code_gets_the_loop_async_nodes_run_on(self) -> None:
        self.write(TOP_LEVEL_LOOP)
        self.spawn()
        self.assertTrue(self.load()["ok"])
        self.send({**self.golden("invoke", id=2), "id": 6, "node": "same_loop"})
        self.assertEqual(self.until("result", 6)[-1]["value"], {"text": "True", "data": None})

    def test_a_load_only_worker_still_serves_calls(self) -> None:
        self.write(TOP_LEVEL_LOOP)
        self.spawn(WORKER, "--load-only")  # prepares for calls at the first one instead of in the background
        self.assertTrue(self.load()["ok"])
        self.send({**self.golden("invoke", id=2), "id": 7, "node": "same_loop"})
        self.assertEqual(self.until("result", 7)[-1]["value"], {"text": "True", "data": None})
        self.send(self.golden("shutdown"))
        self.assertEqual(os.waitpid(self.pid, 0)[1], 0)

    def test_a_load_only_worker_ends_at_shutdown_after_the_load(self) -> None:
        self.write(STARTUP)
        self.spawn(BOOTSTRAP, "--load-only")
        self.assertTrue(self.load()["ok"])
        self.send(self.golden("shutdown"))
        self.assertEqual(os.waitpid(self.pid, 0)[1], 0)

    def test_a_failed_load_can_be_followed_by_shutdown(self) -> None:
        self.write("raise RuntimeError('no')\n")
        self.spawn()
        self.assertFalse(self.load()["ok"])
        self.send(self.golden("shutdown"))
        self.assertEqual(os.waitpid(self.pid, 0)[1], 0)


CALLS = """
import threading, time
from chrys.workflows import WorkflowBuilder

meeting = threading.Barrier(12, timeout=20)

def echo(value):
    return value

def stuck(value):
    time.sleep(float(value.text))
    return value

def meet(value):
    meeting.wait()  # passes only once 12 calls run at the same time
    return value

def nap(value):
    time.sleep(0.003)
    return threading.current_thread().name

def spin(value):
    end = time.thread_time() + float(value.text)
    while time.thread_time() < end:
        pass
    return value

wf = WorkflowBuilder("Calls")
first = wf.python("echo", echo)
for name, fn in (("stuck", stuck), ("meet", meet), ("nap", nap), ("spin", spin)):
    wf.edge(first, wf.python(name, fn))
wf.start(first)
wf.output(first)
workflow = wf.build()
"""


@unittest.skipUnless(hasattr(os, "posix_spawn"), "drives the worker's pipes with posix_spawn")
class WorkerThreadsTest(WorkerDriver):
    """The thread that reads a sync call runs it: calls that block must not hold up the channel or the others."""

    def setUp(self) -> None:
        super().setUp()
        with open(self.entry, "w", encoding="utf-8") as handle:
            handle.write(CALLS)
        self.spawn()
        self.assertTrue(self.load()["ok"])

    def invoke(self, call_id: int, node: str, text: str = "", **extra: Any) -> Dict[str, Any]:
        return {**self.golden("invoke", id=2), "id": call_id, "node": node, "input": {"text": text, "data": None}, **extra}

    def results(self, count: int) -> List[Dict[str, Any]]:
        return [m for m in (self.receive(20) for _ in range(count)) if m["type"] == "result"]

    def test_a_call_blocked_on_the_reading_thread_does_not_hold_up_the_channel(self) -> None:
        self.send(self.invoke(1, "stuck", "30", timeout_ms=None))
        self.send(self.invoke(2, "echo", "after"))  # read by another thread while call 1 sleeps
        self.assertEqual(self.until("result", 2)[-1]["value"]["text"], "after")
        self.send({**self.golden("cancel"), "id": 1})
        cancelled = self.until("result", 1)[-1]
        self.assertEqual(cancelled["error"]["code"], "cancelled")
        self.assertEqual(cancelled["leaked_threads"], 1)  # its thread sleeps on; the worker goes on
        self.send(self.invoke(3, "echo", "still"))
        self.assertEqual(self.until("result", 3)[-1]["leaked_threads"], 1)

    def test_blocking_calls_run_concurrently(self) -> None:
        self.tx.sendall(b"".join(self.encoded(self.invoke(10 + i, "meet", str(i))) for i in range(12)))
        results = self.results(12)
        self.assertEqual(sorted(r["id"] for r in results), list(range(10, 22)))
        self.assertTrue(all(r["ok"] for r in results), results)

    def test_calls_queued_behind_a_blocked_one_are_answered_first(self) -> None:
        burst = [self.invoke(100 + i, "echo", str(i)) for i in range(5)]
        burst.append(self.invoke(105, "stuck", "0.5"))
        burst += [self.invoke(106 + i, "echo", str(i)) for i in range(5)]
        self.tx.sendall(b"".join(self.encoded(message) for message in burst))
        order = [r["id"] for r in self.results(11)]
        # The answers held back while call 105 runs go out, and the calls behind it get threads of their own.
        self.assertEqual(order[-1], 105, order)
        self.assertEqual(sorted(order[:-1]), [100, 101, 102, 103, 104, 106, 107, 108, 109, 110])

    def test_short_blocking_calls_are_spread_over_threads(self) -> None:
        self.tx.sendall(b"".join(self.encoded(self.invoke(200 + i, "nap")) for i in range(200)))
        threads = {r["value"]["text"] for r in self.results(200)}
        self.assertGreater(len(threads), 1)  # not one after the other on the thread that read them
        self.assertTrue(all(name.startswith("chrys-call-") for name in threads), threads)

    def test_a_call_that_computes_for_long_does_not_hold_up_the_others(self) -> None:
        self.send(self.invoke(30, "spin", "0.4", timeout_ms=None))
        self.send(self.invoke(31, "echo", "meanwhile"))
        self.assertEqual([m["id"] for m in self.until("result", 31) if m["type"] == "result"], [31])
        self.assertTrue(self.until("result", 30)[-1]["ok"])

    def test_a_burst_of_calls_is_answered_in_full(self) -> None:
        self.tx.sendall(b"".join(self.encoded(self.invoke(1000 + i, "echo", str(i))) for i in range(500)))
        results = self.results(500)
        self.assertEqual(sorted(r["id"] for r in results), list(range(1000, 1500)))
        self.assertTrue(all(r["value"]["text"] == str(r["id"] - 1000) for r in results))

    @staticmethod
    def encoded(message: Dict[str, Any]) -> bytes:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


if __name__ == "__main__":
    unittest.main()
