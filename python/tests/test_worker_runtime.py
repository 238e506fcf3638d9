"""The worker's call runtime in-process (a real event loop, real threads, real SDK workflows; only the pipe to
the engine is replaced by a list): emit limits over a controlled clock, leaked-thread accounting, condition
rules, and which frames of a traceback are the author's."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import threading
import time
import unittest
import warnings
from typing import Any, Callable, Dict, List, Optional
from unittest import mock

import chrys.workflows
from chrys.workflows import NodeContext, WorkflowBuilder, WorkflowValue
from chrys.workflows import _deadlines, _runtime
from chrys.workflows import _tracebacks as tb
from chrys.workflows._capture import RoutedStream
from chrys.workflows._runtime import _as_bool

from ._support import SDK_ROOT, start_runtime


class ListChannel:
    """Stands in for the pipe to the engine: keeps every message sent."""

    def __init__(self) -> None:
        self.messages: List[Dict[str, Any]] = []
        self.lock = threading.Lock()

    def send_bytes(self, data: bytes) -> None:
        with self.lock:
            self.messages.append(json.loads(data))

    def send(self, message: Dict[str, Any]) -> bool:
        with self.lock:
            self.messages.append(json.loads(json.dumps(message)))
        return True

    def of(self, call_id: int, kind: str = "result") -> List[Dict[str, Any]]:
        with self.lock:
            return [m for m in self.messages if m.get("id") == call_id and m["type"] == kind]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def node_message(call_id: int, node: str, text: str = "", **extra: Any) -> Dict[str, Any]:
    message = {
        "type": "invoke",
        "id": call_id,
        "kind": "node",
        "node": node,
        "input": {"text": text, "data": None},
        "timeout_ms": None,
        "conditions": None,
        "conditions_timeout_ms": None,
    }
    message.update(extra)
    return message


class RuntimeCase(unittest.TestCase):
    def make(self, build: Callable[[WorkflowBuilder], Any]) -> None:
        wf = WorkflowBuilder("Runtime test")
        first = build(wf)
        wf.start(first)
        wf.output(first)
        workflow = wf.build()
        self.channel = ListChannel()
        self.runtime = start_runtime(self, workflow, self.channel)
        self.loop = self.runtime.loop

    def run_until(self, check: Callable[[], bool], timeout: float = 5.0) -> None:
        async def wait() -> None:
            deadline = time.monotonic() + timeout
            while not check():
                if time.monotonic() > deadline:
                    raise AssertionError("timed out")
                await asyncio.sleep(0.005)

        self.loop.run_until_complete(wait())

    def result(self, message: Dict[str, Any]) -> Dict[str, Any]:
        self.loop.call_soon(self.runtime.invoke, message)
        self.run_until(lambda: bool(self.channel.of(message["id"])))
        (result,) = self.channel.of(message["id"])
        return result


class EmitLimitsTest(RuntimeCase):
    def setUp(self) -> None:
        self.clock = FakeClock()
        patcher = mock.patch.object(_runtime, "time", self.clock)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.caught: List[str] = []
        clock = self.clock
        caught = self.caught

        async def talk(value: WorkflowValue, ctx: NodeContext) -> str:
            count, step = (float(part) for part in value.text.split())
            for _ in range(int(count)):
                try:
                    ctx.emit("m")
                except Exception as error:  # the author catches it: the attempt fails anyway
                    caught.append(type(error).__name__)
                clock.now += step
            return "returned"

        def talk_sync(value: WorkflowValue, ctx: NodeContext) -> str:
            count, step = (float(part) for part in value.text.split())
            for _ in range(int(count)):
                try:
                    ctx.emit("m")
                except Exception as error:
                    caught.append(type(error).__name__)
                clock.now += step
            return "returned"

        def build(wf: WorkflowBuilder) -> Any:
            first = wf.python("talk", talk)
            wf.edge(first, wf.python("talk_sync", talk_sync))
            return first

        self.make(build)

    def test_a_sync_function_that_catches_the_limit_still_fails(self) -> None:
        for attempt in range(20):  # the trip and the function's return race on two threads
            result = self.result(node_message(100 + attempt, "talk_sync", "260 0"))
            self.assertEqual(result["error"]["code"], "protocol_limit")
            self.clock.now += 2

    def test_200_in_one_second_pass_the_201st_fails_the_attempt(self) -> None:
        result = self.result(node_message(1, "talk", "200 0"))
        self.assertTrue(result["ok"])
        self.assertEqual(len(self.channel.of(1, "emit")), 200)
        self.clock.now += 0.999
        result = self.result(node_message(2, "talk", "201 0"))
        self.assertFalse(result["ok"])
        self.assertEqual(result["error"]["code"], "protocol_limit")
        self.assertIn("200", result["error"]["message"])
        self.assertEqual(len(self.channel.of(2, "emit")), 200)
        self.assertEqual(self.caught, ["EmitLimitExceeded"])

    def test_the_window_rolls(self) -> None:
        # About 196 per second always passes; about 222 per second trips at the 201st within one second.
        self.assertTrue(self.result(node_message(1, "talk", "1000 0.0051"))["ok"])
        result = self.result(node_message(2, "talk", "1000 0.0045"))
        self.assertEqual(result["error"]["code"], "protocol_limit")
        self.assertEqual(len(self.channel.of(2, "emit")), 200)

    def test_10000_in_an_attempt_pass_the_10001st_fails(self) -> None:
        result = self.result(node_message(1, "talk", "10000 0.01"))
        self.assertTrue(result["ok"], result)
        result = self.result(node_message(2, "talk", "10001 0.01"))
        self.assertEqual(result["error"]["code"], "protocol_limit")
        self.assertIn("10,000", result["error"]["message"])
        self.assertEqual(len(self.channel.of(2, "emit")), 10000)


class LeakedThreadsTest(RuntimeCase):
    def test_a_timed_out_thread_is_counted_until_it_returns(self) -> None:
        release = threading.Event()

        def stuck(value: WorkflowValue) -> str:
            release.wait(5)
            print("after the timeout")
            return "late"

        self.make(lambda wf: wf.python("stuck", stuck))
        read_fd, write_fd = os.pipe()
        self.addCleanup(os.close, read_fd)
        self.addCleanup(os.close, write_fd)
        stdout = mock.patch.object(sys, "stdout", RoutedStream(write_fd, "<stdout>"))
        stdout.start()
        self.addCleanup(stdout.stop)
        result = self.result(node_message(1, "stuck", timeout_ms=50))
        self.assertEqual(result["error"]["code"], "timeout")
        self.assertEqual(result["leaked_threads"], 1)
        self.assertEqual(self.runtime.leaked, 1)
        release.set()
        self.run_until(lambda: self.runtime.leaked == 0)
        self.assertEqual(len(self.channel.of(1)), 1)  # the late return is not answered again
        self.assertEqual(result["output"], {"text": "", "truncated": False})
        os.set_blocking(read_fd, False)
        with self.assertRaises(BlockingIOError):  # the late print was dropped, not sent to the fd
            os.read(read_fd, 100)


class ConditionRulesTest(RuntimeCase):
    def test_as_bool(self) -> None:
        numpy_bool = type("bool_", (), {"__module__": "numpy", "__bool__": lambda self: True})
        self.assertIs(_as_bool(True), True)
        self.assertIs(_as_bool(False), False)
        self.assertIs(_as_bool(numpy_bool()), True)
        for value in (1, 0, None, "yes", [], object()):
            self.assertIsNone(_as_bool(value))

    def test_an_awaitable_condition_fails_and_is_closed(self) -> None:
        async def later(value: WorkflowValue) -> bool:
            return True

        def build(wf: WorkflowBuilder) -> Any:
            a = wf.python("a", lambda v: v)
            b = wf.python("b", lambda v: v)
            wf.edge(a, b, when=lambda v: later(v))
            return a

        self.make(build)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = self.result(node_message(1, "a", conditions={"when": ["a->b"], "switch": None}))
        self.assertEqual(result["error"]["code"], "invalid_result")
        self.assertEqual(result["error"]["edge"], "a->b")
        self.assertIn("awaitable", result["error"]["message"])
        self.assertEqual([str(w.message) for w in caught if "never awaited" in str(w.message)], [])

    def test_switch_takes_the_first_true_case_and_stops(self) -> None:
        seen: List[str] = []

        def case(name: str, answer: bool) -> Callable[[WorkflowValue], bool]:
            def check(value: WorkflowValue) -> bool:
                seen.append(name)
                return answer

            return check

        def build(wf: WorkflowBuilder) -> Any:
            src = wf.python("src", lambda v: v)
            c1, c2, c3, d = (wf.python(n, lambda v: v) for n in ("c1", "c2", "c3", "d"))
            wf.switch(src, [(case("c1", False), c1), (case("c2", True), c2), (case("c3", True), c3)], default=d)
            return src

        self.make(build)
        switch = {"cases": ["src->c1", "src->c2", "src->c3"], "default": "src->d"}
        result = self.result(node_message(1, "src", conditions={"when": [], "switch": switch}))
        self.assertEqual(result["passed"], ["src->c2"])
        self.assertEqual(seen, ["c1", "c2"])


class DeadlinesTest(RuntimeCase):
    """A time limit waits in a bucket of deadlines and gets a timer of its own only when its window starts."""

    def setUp(self) -> None:
        patcher = mock.patch.object(_deadlines, "BUCKET_SECONDS", 0.05)
        patcher.start()
        self.addCleanup(patcher.stop)
        release = threading.Event()
        self.addCleanup(release.set)

        def stuck(value: WorkflowValue) -> str:
            release.wait(5)
            return "late"

        def build(wf: WorkflowBuilder) -> Any:
            first = wf.python("echo", lambda v: v)
            wf.edge(first, wf.python("stuck", stuck))
            return first

        self.make(build)

    def test_a_call_over_its_limit_times_out_at_its_deadline_not_before(self) -> None:
        started = time.monotonic()
        result = self.result(node_message(1, "stuck", timeout_ms=150))
        self.assertGreaterEqual(time.monotonic() - started, 0.15)
        self.assertEqual(result["error"]["code"], "timeout")
        self.assertIn("0.15 s", result["error"]["message"])

    def test_a_call_that_ends_in_time_leaves_no_timer_and_no_bucket_entry(self) -> None:
        for call_id in range(1, 51):
            self.assertTrue(self.result(node_message(call_id, "echo", timeout_ms=300_000))["ok"])
        buckets = list(self.runtime.deadlines._buckets.values())
        self.assertTrue(buckets)
        self.assertTrue(all(bucket.calls == {} for bucket in buckets))
        self.assertEqual(self.runtime.calls, {})


class ReturnedValuesTest(RuntimeCase):
    """Plain values skip the full check; the rules stay the same."""

    def setUp(self) -> None:
        def give(value: WorkflowValue) -> Any:
            return {
                "ascii": WorkflowValue("plain \\ \"text\"\n"),
                "unicode": WorkflowValue("é \u2028"),
                "surrogate": WorkflowValue("bad \ud800"),
                "long": WorkflowValue("x" * (4_194_304 + 1)),
                "data": WorkflowValue("t", {"k": [1, None]}),
                "nan": WorkflowValue("t", float("nan")),
                "str": "just text",
            }[value.text]

        self.make(lambda wf: wf.python("give", give))

    def test_each_value_is_checked_and_encoded_as_before(self) -> None:
        expected = {
            "ascii": {"text": "plain \\ \"text\"\n", "data": None},
            "unicode": {"text": "é \u2028", "data": None},
            "data": {"text": "t", "data": {"k": [1, None]}},
            "str": {"text": "just text", "data": None},
        }
        for call_id, (name, value) in enumerate(expected.items(), start=1):
            self.assertEqual(self.result(node_message(call_id, "give", name))["value"], value)
        codes = {
            name: self.result(node_message(10 + i, "give", name))["error"]["code"]
            for i, name in enumerate(("surrogate", "long", "nan"))
        }
        self.assertEqual(
            codes, {"surrogate": "value_not_serializable", "long": "value_too_large", "nan": "value_not_serializable"}
        )


class PoolTest(RuntimeCase):
    def test_sync_calls_started_from_the_loop_each_get_a_thread(self) -> None:
        meeting = threading.Barrier(6, timeout=10)

        def meet(value: WorkflowValue) -> str:
            meeting.wait()  # passes only once all 6 run at the same time
            return value.text

        self.make(lambda wf: wf.python("meet", meet))
        for call_id in range(1, 7):
            self.loop.call_soon(self.runtime.invoke, node_message(call_id, "meet", str(call_id)))
        self.run_until(lambda: all(self.channel.of(call_id) for call_id in range(1, 7)), timeout=15)
        self.assertEqual([self.channel.of(i)[0]["value"]["text"] for i in range(1, 7)], [str(i) for i in range(1, 7)])

    def test_a_call_cancelled_before_a_thread_takes_it_never_runs(self) -> None:
        ran: List[str] = []
        self.make(lambda wf: wf.python("record", lambda v: ran.append(v.text) or v))
        pool = self.runtime.executor
        pool._local.pool = True  # as the reading thread: its jobs wait until it takes them
        self.addCleanup(setattr, pool._local, "pool", False)
        self.runtime.invoke(node_message(1, "record", "never"))
        self.runtime.cancel(1)
        fn, args = pool._ready.popleft()
        fn(*args)
        self.assertEqual(ran, [])
        self.assertEqual(self.channel.of(1)[0]["error"]["code"], "cancelled")
        self.assertEqual(self.runtime.leaked, 0)


class AskTest(RuntimeCase):
    def setUp(self) -> None:
        async def asker(value: WorkflowValue, ctx: NodeContext) -> str:
            return await ctx.ask("Name?")

        self.make(lambda wf: wf.python("asker", asker))

    def answer(self, call_id: int, reply: Dict[str, Any]) -> Dict[str, Any]:
        self.loop.call_soon(self.runtime.invoke, node_message(call_id, "asker"))
        self.run_until(lambda: bool(self.channel.of(call_id, "ask")))
        (ask,) = self.channel.of(call_id, "ask")
        self.assertEqual(ask["questions"], [{"question": "Name?", "header": "", "options": [], "multi_select": False}])
        self.loop.call_soon(self.runtime.answer, {"type": "answer", "id": call_id, "ask_id": ask["ask_id"], **reply})
        self.run_until(lambda: bool(self.channel.of(call_id)))
        return self.channel.of(call_id)[0]

    def test_answered(self) -> None:
        result = self.answer(1, {"ok": True, "answers": [{"selected": [], "text": "Ada"}]})
        self.assertEqual(result["value"], {"text": "Ada", "data": None})

    def test_unavailable(self) -> None:
        result = self.answer(2, {"ok": False, "error": "ask_unavailable", "message": "no user here"})
        self.assertEqual(result["error"]["code"], "ask_unavailable")
        self.assertIn("no user here", result["error"]["message"])


class UserFilesTest(unittest.TestCase):
    def test_which_files_are_the_authors(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            user = tb.UserFiles(SDK_ROOT, folder)
            self.assertIn(os.path.join(folder, "flow.py"), user)
            self.assertIn(os.path.join(folder, "helpers", "git.py"), user)
            self.assertNotIn(os.path.join(folder, ".venv", "lib", "python3.11", "site-packages", "x.py"), user)
            self.assertNotIn(os.path.join(folder, "venv", "lib", "python3.11", "site-packages", "x.py"), user)
            self.assertIn(os.path.join(tempfile.gettempdir(), "elsewhere", "mine.py"), user)
            self.assertNotIn(os.__file__, user)
            self.assertNotIn(chrys.workflows.__file__, user)
            self.assertNotIn("/opt/venv/lib/python3.11/site-packages/requests/api.py", user)
            self.assertNotIn("<frozen importlib._bootstrap>", user)
            self.assertNotIn("<string>", user)
        inside = tb.UserFiles(SDK_ROOT, "/opt/venv/lib/python3.11/site-packages/flow")
        self.assertIn("/opt/venv/lib/python3.11/site-packages/flow/flow.py", inside)

    def test_notes_say_imported_from_or_called_from_innermost_first(self) -> None:
        entry = tb.Position("/w/entry.py", 3, name="<module>")
        steps = tb.Position("/w/steps.py", 4, name="<module>")
        helper = tb.Position("/w/helper.py", 9, name="parse")
        inner = tb.Position("/w/helper.py", 2, name="inner")
        self.assertEqual(
            tb.notes_for([entry, steps, helper], inner),
            [
                {"message": "called from", "file": "/w/helper.py", "line": 9},
                {"message": "called from", "file": "/w/steps.py", "line": 4},
                {"message": "imported from", "file": "/w/entry.py", "line": 3},
            ],
        )
        # A function that imports a module calls it in; only a module body imports.
        setup = tb.Position("/w/entry.py", 7, name="setup")
        plugin = tb.Position("/w/plugin.py", 1, name="<module>")
        self.assertEqual(
            tb.notes_for([entry, setup], plugin),
            [
                {"message": "called from", "file": "/w/entry.py", "line": 7},
                {"message": "called from", "file": "/w/entry.py", "line": 3},
            ],
        )

    def test_describe_names_non_builtin_exceptions_with_their_module(self) -> None:
        self.assertEqual(tb.describe(KeyError("k")), "KeyError: 'k'")
        self.assertEqual(tb.describe(json.JSONDecodeError("bad", "x", 0)), "json.decoder.JSONDecodeError: bad: line 1 column 1 (char 0)")
        self.assertEqual(tb.describe(SystemExit()), "SystemExit")

    @unittest.skipUnless(sys.version_info >= (3, 11), "columns need Python 3.11")
    def test_columns_count_characters(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "cols.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write('x = "ééé" + missing\n')
            with open(path, encoding="utf-8") as handle:
                code = compile(handle.read(), path, "exec")
            try:
                exec(code, {})
            except NameError as error:
                position, outer = tb.innermost_user_position(error, tb.UserFiles(SDK_ROOT, folder))
            assert position is not None
            self.assertEqual((position.line, position.column, position.end_line, position.end_column), (1, 13, 1, 20))
            self.assertEqual([frame.name for frame in outer], ["test_columns_count_characters"])


if __name__ == "__main__":
    unittest.main()
