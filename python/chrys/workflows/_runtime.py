"""Invoking a loaded workflow's callables: node functions with their outgoing conditions, ``until`` and ``combine``.

Calls run concurrently and are answered out of order, each with exactly one ``result`` message. Synchronous
callables run on a thread pool inside a copy of the call's ``contextvars`` context (as ``asyncio.to_thread``
does), ``async def`` node functions run on the event loop. A call that times out, is cancelled or trips an
``emit`` limit is answered at once; a thread still running it cannot be stopped and is counted in
``leaked_threads`` until it returns, and whatever it writes or emits afterwards is dropped.

Outgoing conditions run right after the node function on the same thread, under their own limit (one batch,
30 s by default). A condition must return ``True`` or ``False`` (a NumPy bool is accepted): any other value,
and an awaitable in particular, fails the node with ``invalid_result``; an exception fails it with
``exception``. Neither is treated as ``False``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import itertools
import os
import queue
import sys
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

from . import _protocol as proto
from . import _tracebacks as tb
from ._capture import Capture, current

Payload = Tuple[Any, ...]
"""``("node", value_json, passed edges)``, ``("until", stop)``, ``("combine", value_json)`` or ``("error", error)``."""


class EmitLimitExceeded(RuntimeError):
    """``ctx.emit()`` went over a per-attempt limit; the attempt fails with ``protocol_limit`` regardless."""


class MessageTooLarge(RuntimeError):
    """A message would be over the 16 MiB limit; the attempt fails with ``protocol_limit`` regardless."""


class AskUnavailable(RuntimeError):
    """The engine cannot ask the user (the CLI); uncaught, the attempt fails with ``ask_unavailable``."""


class Call:
    __slots__ = (
        "id",
        "kind",
        "capture",
        "done",
        "timer",
        "task",
        "threads",
        "leaked",
        "tripped",
        "asks",
        "emit_times",
        "emit_count",
        "emit_bytes",
        "has_conditions",
        "forced",
        "cond_deadline",
        "cond_limit",
    )

    def __init__(self, call_id: int, kind: str) -> None:
        self.id = call_id
        self.kind = kind
        self.capture = Capture()
        self.done = False
        self.timer: Optional[asyncio.TimerHandle] = None
        self.task: Optional[asyncio.Task] = None  # type: ignore[type-arg]
        self.threads = 0
        self.leaked = False
        self.tripped = False
        self.asks: Dict[int, concurrent.futures.Future] = {}  # type: ignore[type-arg]
        self.emit_times: Deque[float] = deque()
        self.emit_count = 0
        self.emit_bytes = 0
        self.has_conditions = False
        self.forced: Optional[Payload] = None
        self.cond_deadline: Optional[float] = None
        self.cond_limit = 0.0


class Transport:
    """What one invocation's ``NodeContext`` talks to: ``emit`` and ``ask`` bound to its call."""

    __slots__ = ("_runtime", "_call")

    def __init__(self, runtime: Runtime, call: Call) -> None:
        self._runtime = runtime
        self._call = call

    def emit(self, text: str) -> None:
        call = self._call
        if call.done:
            if call.tripped:
                raise EmitLimitExceeded("ctx.emit() limit already exceeded for this attempt")
            return  # the attempt ended (timeout, cancel): its messages are dropped
        now = time.monotonic()
        times = call.emit_times
        while times and now - times[0] >= 1.0:
            times.popleft()
        size = len(text.encode("utf-8"))
        problem = None
        if len(times) >= proto.EMIT_MAX_PER_SECOND:
            problem = f"more than {proto.EMIT_MAX_PER_SECOND} ctx.emit() messages within one second"
        elif call.emit_count >= proto.EMIT_MAX_COUNT:
            problem = f"more than {proto.EMIT_MAX_COUNT:,} ctx.emit() messages in one attempt"
        elif call.emit_bytes + size > proto.EMIT_MAX_BYTES:
            problem = f"more than {proto.EMIT_MAX_BYTES // (1024 * 1024)} MiB of ctx.emit() text in one attempt"
        if problem is not None:
            message = f"{problem}; report progress less often (the limits are per attempt)"
            self._runtime.trip(call, message)
            raise EmitLimitExceeded(message)
        times.append(now)
        call.emit_count += 1
        call.emit_bytes += size
        self._runtime.channel.send(proto.emit(call.id, text))

    async def ask(self, questions: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        call = self._call
        runtime = self._runtime
        if call.done:
            raise asyncio.CancelledError()
        ask_id = runtime.next_ask_id()
        data = proto.encode(proto.ask(call.id, ask_id, questions))
        if len(data) > proto.MAX_MESSAGE_BYTES:
            message = (
                f"the questions make a message of {len(data):,} bytes, over the limit of "
                f"{proto.MAX_MESSAGE_BYTES:,} bytes; ask about less text at once"
            )
            runtime.trip(call, message)
            raise MessageTooLarge(message)
        future: concurrent.futures.Future = concurrent.futures.Future()  # type: ignore[type-arg]
        call.asks[ask_id] = future
        runtime.channel.send_bytes(data)
        try:
            reply = await asyncio.wrap_future(future)
        finally:
            call.asks.pop(ask_id, None)
        if reply.get("ok"):
            answers: List[Dict[str, Any]] = reply["answers"]
            return answers
        raise AskUnavailable(reply.get("message") or "asking the user is not available here")


def _close_awaitable(value: object) -> None:
    close = getattr(value, "close", None)
    if callable(close):
        try:
            close()
        except Exception:
            pass


def _as_bool(value: object) -> Optional[bool]:
    if value is True or value is False:
        return value  # type: ignore[return-value]
    kind = type(value)
    if kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"):
        return bool(value)  # type: ignore[arg-type]
    return None


class _Fork:
    """Set in a process forked (without exec) by user code: it must leave as soon as it is back in ours."""

    child = False


def _forked_child() -> None:
    _Fork.child = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked_child)


def _leave_if_forked() -> None:
    if _Fork.child:
        os._exit(0)  # a forked copy of the worker has nothing to answer and must not touch the channel


class _Pool:
    """A minimal thread pool for synchronous callables: a job is a plain ``(fn, args)`` on a queue.

    Lighter than ``ThreadPoolExecutor`` (no ``Future`` per job: the job answers its call itself). Threads start
    on demand when none is idle and are reused; a thread held by a leaked call keeps its slot.
    """

    def __init__(self, limit: int) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()  # type: ignore[type-arg]
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0
        self._limit = limit

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        self._jobs.put((fn, args))
        with self._lock:
            if self._idle > 0:
                self._idle -= 1
                return
            if self._threads >= self._limit:
                return  # queued until a thread is free
            self._threads += 1
        threading.Thread(target=self._work, name=f"chrys-call-{self._threads}", daemon=True).start()

    def _work(self) -> None:
        get = self._jobs.get
        while True:
            fn, args = get()
            try:
                fn(*args)
            except BaseException:  # a job answers its own failures; nothing may end the thread
                pass
            _leave_if_forked()
            with self._lock:
                self._idle += 1


_EAGER_TASKS = sys.version_info >= (3, 12)

SWEEP_SECONDS = 0.02
"""How often condition batches are checked against their limit (no per-call wake-up from a pool thread)."""


def _seconds(ms: float) -> str:
    seconds = ms / 1000
    return f"{seconds:g} s"


class Runtime:
    """Runs calls for one loaded workflow on one event loop."""

    def __init__(
        self,
        channel: Any,
        definition: Dict[str, Any],
        callables: Dict[str, Callable[..., Any]],
        user: tb.UserFiles,
    ) -> None:
        from . import NodeContext, SourceValue, WorkflowValue
        from ._errors import WorkflowValueError
        from ._values import check_value

        self.channel = channel
        self.callables = callables
        self.nodes = {node["id"]: node for node in definition.get("nodes", [])}
        self.user = user
        self.calls: Dict[int, Call] = {}
        self.leaked = 0
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        # Threads are started on demand and reused; leaked ones (timed out, still running) hold theirs, so the
        # pool is large and the engine bounds leaks by treating a worker with too many as lost.
        self.executor = _Pool(512)
        self._ask_ids = itertools.count(1)
        self._lock = threading.Lock()
        self._sweeping = False
        self._NodeContext = NodeContext
        self._SourceValue = SourceValue
        self._WorkflowValue = WorkflowValue
        self._WorkflowValueError = WorkflowValueError
        self._check_value = check_value

    # -- plumbing ---------------------------------------------------------------------------------------------

    def next_ask_id(self) -> int:
        return next(self._ask_ids)  # atomic: questions may be asked from several threads

    def _in_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        loop = self.loop
        assert loop is not None
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            fn(*args)
        else:
            loop.call_soon_threadsafe(fn, *args)

    def _thread(self, call: Call, ctx: contextvars.Context, fn: Callable[..., Optional[Payload]], *args: Any) -> None:
        with self._lock:
            call.threads += 1
        self.executor.submit(ctx.run, self._job, call, fn, args)

    def _job(self, call: Call, fn: Callable[..., Optional[Payload]], args: Tuple[Any, ...]) -> None:
        """Runs on a pool thread and answers the call from there: no hop back to the event loop."""
        try:
            payload = fn(*args)
        except BaseException as error:  # our own code failed: still answer the call
            payload = ("error", proto.call_error("exception", f"worker error: {tb.describe(error)}", phase=call.kind))
        with self._lock:
            call.threads -= 1
            leaked = call.leaked
            if leaked:
                self.leaked -= 1
        if payload is not None and not leaked:
            self.finish(call, payload)

    def _arm(self, call: Call, ms: Optional[float], phase: str) -> None:
        if call.done:
            return
        if call.timer is not None:
            call.timer.cancel()
            call.timer = None
        if ms is not None and self.loop is not None:
            call.timer = self.loop.call_later(ms / 1000, self._expire, call, phase, ms)

    def _expire(self, call: Call, phase: str, ms: float) -> None:
        if phase == "node" and call.cond_deadline is not None:
            return  # the function returned: its conditions run under their own limit (see _sweep)
        what = {
            "node": "the node function",
            "conditions": "the outgoing conditions",
            "until": "the loop's until condition",
            "combine": "the join's combine function",
        }[phase]
        limit = "its timeout" if phase == "node" else "their shared limit" if phase == "conditions" else "its limit"
        self.finish(call, ("error", proto.call_error("timeout", f"{what} did not finish within {_seconds(ms)} ({limit})", phase=phase)))

    def _enter_conditions(self, call: Call, limit: float) -> None:
        """From any thread, without waking the loop: the node timeout stops, the condition limit starts."""
        call.cond_limit = limit
        call.cond_deadline = time.monotonic() + limit / 1000

    def _ensure_sweeper(self) -> None:
        if not self._sweeping:
            self._sweeping = True
            self.loop.call_later(SWEEP_SECONDS, self._sweep)  # type: ignore[union-attr]

    def _sweep(self) -> None:
        """Expires condition batches over their limit; runs every 20 ms while a call has conditions."""
        now = time.monotonic()
        active = False
        for call in list(self.calls.values()):
            if call.has_conditions:
                active = True
                deadline = call.cond_deadline
                if deadline is not None and now >= deadline:
                    call.cond_deadline = None
                    self._expire(call, "conditions", call.cond_limit)
        if active:
            self.loop.call_later(SWEEP_SECONDS, self._sweep)  # type: ignore[union-attr]
        else:
            self._sweeping = False

    def trip(self, call: Call, message: str) -> None:
        """Fails ``call`` with ``protocol_limit`` now, from any thread; later emits raise too."""
        if call.tripped:
            return
        call.forced = ("error", proto.call_error("protocol_limit", message, phase="node"))
        call.tripped = True
        self.finish(call, call.forced)

    def cancel(self, call_id: int) -> None:
        call = self.calls.get(call_id)
        if call is not None:
            self.finish(call, ("error", proto.call_error("cancelled", "the engine cancelled this call", phase=call.kind)))

    def answer(self, message: Dict[str, Any]) -> None:
        call = self.calls.get(message["id"])
        future = call.asks.get(message["ask_id"]) if call is not None else None
        if future is not None and not future.done():
            future.set_result(message)

    def finish(self, call: Call, payload: Payload) -> None:
        """Answers ``call`` once, from any thread: ends its capture, counts its leaked threads, sends the result."""
        _leave_if_forked()
        with self._lock:
            if call.done:
                return
            call.done = True
            if call.forced is not None:  # a tripped limit fails the attempt whatever it returned
                payload = call.forced
            if call.threads:
                call.leaked = True
                self.leaked += call.threads
        call.capture.close()
        self.calls.pop(call.id, None)
        if call.timer is not None:
            call.timer.cancel()  # thread-safe enough: it only flags the handle, the loop drops it when due
        for future in list(call.asks.values()):
            future.cancel()
        task = call.task
        if task is not None and not task.done():
            self._in_loop(self._cancel_task, task)
        captured = call.capture.result()
        kind = payload[0]
        if kind == "node":
            data = proto.node_result_bytes(call.id, payload[1], payload[2], captured, self.leaked)
        elif kind == "combine":
            data = proto.combine_result_bytes(call.id, payload[1], captured, self.leaked)
        elif kind == "until":
            data = proto.encode(proto.until_result(call.id, payload[1], captured, self.leaked))
        elif kind == "conditions":
            data = proto.encode(proto.conditions_result(call.id, payload[1], captured, self.leaked))
        else:
            data = proto.encode(proto.failed_result(call.id, payload[1], captured, self.leaked))
        if len(data) > proto.MAX_MESSAGE_BYTES:
            error = proto.call_error(
                "value_too_large",
                f"the result makes a message of {len(data):,} bytes, over the limit of "
                f"{proto.MAX_MESSAGE_BYTES:,} bytes; return less data (pass large content by file path)",
                phase="node" if call.kind == "node" else call.kind,
            )
            data = proto.encode(proto.failed_result(call.id, error, captured, self.leaked))
        self.channel.send_bytes(data)

    @staticmethod
    def _cancel_task(task: asyncio.Task) -> None:  # type: ignore[type-arg]
        if not task.done():
            task.cancel()  # the current task too: it then stops at its next await

    # -- failures ---------------------------------------------------------------------------------------------

    def _exception(self, error: BaseException, phase: str, edge: Optional[str] = None) -> Payload:
        code = "exception"
        if isinstance(error, AskUnavailable):
            code = "ask_unavailable"
        elif isinstance(error, (EmitLimitExceeded, MessageTooLarge)):
            code = "protocol_limit"
        position, _ = tb.innermost_user_position(error, self.user)
        text = tb.describe(error)
        if phase == "conditions":
            text = f"the condition of edge {edge} raised {text}"
        elif phase == "until":
            text = f"the until condition raised {text}"
        elif phase == "combine":
            text = f"the combine function raised {text}"
        return (
            "error",
            proto.call_error(
                code,
                text,
                phase=phase,
                edge=edge,
                traceback=tb.format_user_traceback(error, self.user),
                file=position.file if position is not None else None,
                line=position.line if position is not None else None,
            ),
        )

    def _value(self, returned: object, phase: str) -> Tuple[Optional[Any], Optional[str], Optional[Payload]]:
        """``(WorkflowValue, value JSON, None)`` or ``(None, None, error payload)``."""
        if inspect.isawaitable(returned):
            _close_awaitable(returned)
            where = "the node function" if phase == "node" else "the combine function"
            return None, None, (
                "error",
                proto.call_error(
                    "value_not_serializable",
                    f"{where} returned an awaitable; a synchronous function must return a str or WorkflowValue "
                    "(declare a node function with async def to await inside it)",
                    phase=phase,
                ),
            )
        try:
            value = self._check_value(returned)
        except self._WorkflowValueError as error:
            return None, None, ("error", proto.call_error(error.code, str(error), phase=phase))
        try:
            encoded = proto.encode_value(value.text, value.data)
        except (TypeError, ValueError, RecursionError) as error:
            return None, None, ("error", proto.call_error("value_not_serializable", str(error), phase=phase))
        return value, encoded, None

    # -- starting calls ---------------------------------------------------------------------------------------

    def invoke(self, message: Dict[str, Any]) -> None:
        call_id = message["id"]
        kind = message["kind"]
        if call_id in self.calls:
            self.channel.send(proto.protocol_error(call_id, f"call {call_id} is already running"))
            return
        call = Call(call_id, kind)
        self.calls[call_id] = call
        ctx = contextvars.copy_context()
        ctx.run(current.set, call.capture)
        try:
            if kind == "node":
                self._start_node(call, ctx, message)
            elif kind == "until":
                self._start_until(call, ctx, message)
            elif kind == "conditions":
                self._start_conditions(call, ctx, message)
            else:
                self._start_combine(call, ctx, message)
        except _Refused as refused:
            self.finish(call, ("error", proto.call_error("protocol_error", str(refused), phase=kind)))

    def _callable(self, key: str) -> Callable[..., Any]:
        fn = self.callables.get(key)
        if fn is None:
            raise _Refused(f"the workflow has no callable {key!r}")
        return fn

    def _input(self, wire: Dict[str, Any]) -> Any:
        return self._WorkflowValue(wire["text"], wire.get("data"))

    def _start_node(self, call: Call, ctx: contextvars.Context, message: Dict[str, Any]) -> None:
        node_id = message["node"]
        meta = self.nodes.get(node_id)
        if meta is None or meta.get("kind") != "python":
            raise _Refused(f"the workflow has no python node {node_id!r}")
        fn = self._callable("node:" + node_id)
        conditions = message["conditions"]
        if conditions is not None:
            switch = conditions.get("switch")
            for edge in conditions["when"] + (switch["cases"] if switch else []):
                self._callable("edge:" + edge)
            if not conditions["when"] and not switch:
                conditions = None
        value = self._input(message["input"])
        args: Tuple[Any, ...] = (value,)
        if meta.get("takes_context"):
            args = (value, self._NodeContext(Transport(self, call)))
        limit = message.get("conditions_timeout_ms") or proto.DEFAULT_CALLABLE_TIMEOUT_MS
        if conditions is not None:
            call.has_conditions = True
            self._ensure_sweeper()
        self._arm(call, message.get("timeout_ms"), "node")
        if meta.get("is_async"):
            coroutine = self._async_node(call, fn, args, conditions, limit)
            if _EAGER_TASKS:  # runs at once up to its first await: a function that never waits costs no loop turn
                call.task = asyncio.Task(coroutine, loop=self.loop, context=ctx, eager_start=True)  # type: ignore[call-arg]
            else:
                call.task = ctx.run(self.loop.create_task, coroutine)  # type: ignore[union-attr]
        else:
            self._thread(call, ctx, self._sync_node, call, fn, args, conditions, limit)

    def _start_until(self, call: Call, ctx: contextvars.Context, message: Dict[str, Any]) -> None:
        fn = self._callable("until:" + message["loop"])
        self._arm(call, message.get("timeout_ms") or proto.DEFAULT_CALLABLE_TIMEOUT_MS, "until")
        self._thread(call, ctx, self._sync_until, call, fn, self._input(message["input"]))

    def _start_conditions(self, call: Call, ctx: contextvars.Context, message: Dict[str, Any]) -> None:
        """The outgoing conditions of a node whose value is already known (a loop or join node, or a manual
        retry of a failed condition): the same batch rules as after a node function, one shared limit."""
        conditions = message["conditions"]
        switch = conditions.get("switch")
        for edge in conditions["when"] + (switch["cases"] if switch else []):
            self._callable("edge:" + edge)
        self._arm(call, message.get("timeout_ms") or proto.DEFAULT_CALLABLE_TIMEOUT_MS, "conditions")
        self._thread(call, ctx, self._sync_conditions, call, self._input(message["input"]), conditions)

    def _start_combine(self, call: Call, ctx: contextvars.Context, message: Dict[str, Any]) -> None:
        fn = self._callable("combine:" + message["join"])
        sources = [
            self._SourceValue(source["node_id"], source["activation_id"], self._input(source["value"]))
            for source in message["sources"]
        ]
        self._arm(call, message.get("timeout_ms") or proto.DEFAULT_CALLABLE_TIMEOUT_MS, "combine")
        self._thread(call, ctx, self._sync_combine, call, fn, sources)

    # -- bodies (threads and tasks) ---------------------------------------------------------------------------

    def _sync_node(
        self, call: Call, fn: Callable[..., Any], args: Tuple[Any, ...], conditions: Optional[Dict[str, Any]], limit: float
    ) -> Optional[Payload]:
        try:
            returned = fn(*args)
        except BaseException as error:  # SystemExit and KeyboardInterrupt fail only this attempt
            return self._exception(error, "node")
        value, encoded, failure = self._value(returned, "node")
        if failure is not None:
            return failure
        if not conditions:
            return ("node", encoded, [])
        if call.done:
            return None
        self._enter_conditions(call, limit)
        return self._conditions(call, value, encoded, conditions)

    async def _async_node(
        self, call: Call, fn: Callable[..., Any], args: Tuple[Any, ...], conditions: Optional[Dict[str, Any]], limit: float
    ) -> None:
        try:
            returned = await fn(*args)
        except BaseException as error:  # includes a CancelledError the function raised itself
            if not call.done:
                call.task = None  # ending by itself: nothing to cancel
                self.finish(call, self._exception(error, "node"))
            return
        if call.done:
            return
        call.task = None
        value, encoded, failure = self._value(returned, "node")
        if failure is not None:
            self.finish(call, failure)
            return
        if not conditions:
            self.finish(call, ("node", encoded, []))
            return
        self._enter_conditions(call, limit)
        self._thread(call, contextvars.copy_context(), self._conditions, call, value, encoded, conditions)

    def _conditions(self, call: Call, value: Any, encoded: str, conditions: Dict[str, Any]) -> Optional[Payload]:
        """``when`` edges in order, each independently; then the switch cases in order, first true wins, else
        the default. Returns the edges that pass the value on."""
        passed: List[str] = []
        for edge in conditions["when"]:
            decided = self._condition(call, edge, value)
            if not isinstance(decided, bool):
                return decided  # type: ignore[no-any-return]
            if decided:
                passed.append(edge)
        switch = conditions.get("switch")
        if switch is not None:
            chosen = switch["default"]
            for edge in switch["cases"]:
                decided = self._condition(call, edge, value)
                if not isinstance(decided, bool):
                    return decided  # type: ignore[no-any-return]
                if decided:
                    chosen = edge
                    break
            passed.append(chosen)
        return ("node", encoded, passed)

    def _condition(self, call: Call, edge: str, value: Any) -> Any:
        if call.done:
            return None
        try:
            returned = self.callables["edge:" + edge](value)
        except BaseException as error:
            return self._exception(error, "conditions", edge)
        decided = _as_bool(returned)
        if decided is not None:
            return decided
        if inspect.isawaitable(returned):
            _close_awaitable(returned)
            problem = "returned an awaitable; conditions must be synchronous functions returning True or False"
        else:
            problem = f"returned {type(returned).__qualname__} {returned!r:.80}; it must return True or False"
        return ("error", proto.call_error("invalid_result", f"the condition of edge {edge} {problem}", phase="conditions", edge=edge))

    def _sync_conditions(self, call: Call, value: Any, conditions: Dict[str, Any]) -> Optional[Payload]:
        decided = self._conditions(call, value, "", conditions)
        if decided is None or decided[0] != "node":
            return decided
        return ("conditions", decided[2])

    def _sync_until(self, call: Call, fn: Callable[..., Any], value: Any) -> Payload:
        try:
            returned = fn(value)
        except BaseException as error:
            return self._exception(error, "until")
        stop = _as_bool(returned)
        if stop is not None:
            return ("until", stop)
        if inspect.isawaitable(returned):
            _close_awaitable(returned)
            problem = "returned an awaitable; until must be a synchronous function returning True or False"
        else:
            problem = f"returned {type(returned).__qualname__} {returned!r:.80}; it must return True or False"
        return ("error", proto.call_error("invalid_result", f"the until condition {problem}", phase="until"))

    def _sync_combine(self, call: Call, fn: Callable[..., Any], sources: List[Any]) -> Payload:
        try:
            returned = fn(sources)
        except BaseException as error:
            return self._exception(error, "combine")
        _, encoded, failure = self._value(returned, "combine")
        if failure is not None:
            return failure
        return ("combine", encoded)


class _Refused(Exception):
    """A request this workflow cannot serve (unknown node or callable): answered with ``protocol_error``."""
