"""Invoking a loaded workflow's callables: node functions with their outgoing conditions, ``until`` and ``combine``.

Calls run concurrently and are answered out of order, each with exactly one ``result`` message. Synchronous
callables run on a thread pool inside a copy of the call's ``contextvars`` context (as ``asyncio.to_thread``
does), usually on the pool thread that read the call (``_pool.Pool``); ``async def`` node functions run on
the event loop. A call that times out (``_deadlines``), is cancelled or trips an ``emit`` limit is answered
at once; a thread still running it cannot be stopped and is counted in ``leaked_threads`` until it returns,
and whatever it writes or emits afterwards is dropped. Questions to the user are ``_asks``.

Outgoing conditions run right after the node function on the same thread, under their own limit (one batch,
30 s by default). A condition must return ``True`` or ``False`` (a NumPy bool is accepted): any other value,
and an awaitable in particular, fails the node with ``invalid_result``; an exception fails it with
``exception``. Neither is treated as ``False``.
"""

from __future__ import annotations

import collections.abc
import contextvars
import os
import sys
import threading
import time
import types
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, List, Optional, Tuple

from . import _protocol as proto
from . import _tracebacks as tb
from ._asks import AskUnavailable, Asks, MessageTooLarge, cancel_asks
from ._capture import Capture, current
from ._deadlines import Deadlines
from ._fork import Fork, leave_if_forked
from ._pool import TICK_SECONDS, Pool
from ._values import LARGE_STRING_CHARS

if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

    from ._deadlines import _Bucket
    from ._loop import ThreadLoop

# asyncio (with concurrent.futures) is imported only where an ``async def`` node needs it: a workflow without
# one is served on a ``_loop.ThreadLoop`` and never imports it (~35 ms of every run's first node).

Payload = Tuple[Any, ...]
"""``("node", value_json, passed edges)``, ``("until", stop)``, ``("combine", value_json)`` or ``("error", error)``."""


class EmitLimitExceeded(RuntimeError):
    """``ctx.emit()`` went over a per-attempt limit; the attempt fails with ``protocol_limit`` regardless."""


__all__ = ["AskUnavailable", "Call", "EmitLimitExceeded", "MessageTooLarge", "Payload", "Runtime", "Transport"]


class Call:
    """One call in flight. It is also where the call's ``print()`` output goes (``_capture.current``): the
    capture is made on the first write, so a call that prints nothing costs none."""

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
        "deadline",
        "limit",
        "bucket",
    )

    def __init__(self, call_id: int, kind: str) -> None:
        self.id = call_id
        self.kind = kind
        self.capture: Optional[Capture] = None
        self.done = False
        self.timer: Optional[asyncio.TimerHandle] = None
        self.task: Optional[asyncio.Task] = None  # type: ignore[type-arg]
        self.threads = 0
        self.leaked = False
        self.tripped = False
        self.asks: Optional[Dict[int, concurrent.futures.Future]] = None  # type: ignore[type-arg]
        self.emit_times: Optional[Deque[float]] = None
        self.emit_count = 0
        self.emit_bytes = 0
        self.has_conditions = False
        self.forced: Optional[Payload] = None
        self.cond_deadline: Optional[float] = None
        self.cond_limit = 0.0
        self.deadline = 0.0
        self.limit: Optional[Tuple[str, float]] = None  # (phase, ms) of the time limit, once armed
        self.bucket: Optional[_Bucket] = None

    def write(self, text: str) -> None:
        """``print()`` inside the call (any thread that carries its context)."""
        capture = self.capture
        if capture is None:
            with _CAPTURE_LOCK:
                if self.done:
                    return  # the call was answered: later output is dropped
                capture = self.capture
                if capture is None:
                    capture = self.capture = Capture()
        capture.write(text)

    def output(self) -> Dict[str, Any]:
        """``{"text", "truncated"}`` of what the call printed, once it is done (later writes are dropped)."""
        capture = self.capture  # set under the lock before `done` was checked there, or never
        if capture is None:
            return _NO_OUTPUT
        capture.close()
        return capture.result()


_CAPTURE_LOCK = threading.Lock()
_NO_OUTPUT: Dict[str, Any] = {"text": "", "truncated": False}



class Transport:
    """What one invocation's ``NodeContext`` talks to: ``emit`` (its limits are here) and ``ask`` (``_asks``),
    bound to its call."""

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
        if times is None:
            times = call.emit_times = deque()
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
        return await self._runtime.asks.ask(self._call, questions)

_CO_ITERABLE_COROUTINE = 0x100


def _is_awaitable(value: object) -> bool:
    """``inspect.isawaitable`` (the same three cases), without importing ``inspect`` into every worker."""
    return (
        isinstance(value, types.CoroutineType)
        or (isinstance(value, types.GeneratorType) and bool(value.gi_code.co_flags & _CO_ITERABLE_COROUTINE))
        or isinstance(value, collections.abc.Awaitable)
    )


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



_EAGER_TASKS = sys.version_info >= (3, 12)

IDLE_TICKS = 25
"""The monitor stops after this many ticks without activity; the next call starts it again."""

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
        from ._values import check_value_strings

        self.channel = channel
        self.callables = callables
        self.nodes = {node["id"]: node for node in definition.get("nodes", [])}
        self._node_entries: Dict[str, Tuple[Callable[..., Any], bool, bool]] = {}
        self._hold: Optional[Callable[[bytes], None]] = None
        self._flush: Optional[Callable[[], None]] = None
        self.user = user
        self.calls: Dict[int, Call] = {}
        self.leaked = 0
        self.loop: Optional[asyncio.AbstractEventLoop | ThreadLoop] = None
        """An asyncio loop when the workflow has ``async def`` nodes, else a ``ThreadLoop`` (see ``_serve``)."""
        # Threads are started on demand and reused; leaked ones (timed out, still running) hold theirs, so the
        # pool is large and the engine bounds leaks by treating a worker with too many as lost.
        self.executor = Pool(512)
        self._lock = threading.Lock()
        self.deadlines = Deadlines(self, self.calls, self.finish, self._ensure_ticking)
        # Bound once: arming a call's limit is on every call's path (no lookup through `deadlines` there).
        self._arm = self.deadlines.arm
        self._watch = self.deadlines.watch
        self._enter_conditions = self.deadlines.enter_conditions
        self.asks = Asks(self.calls, channel.send_bytes, self.trip)
        self._ticking = False
        self._tick_handle: Optional[asyncio.TimerHandle] = None
        self._idle_ticks = 0
        self._last_beat = -1
        self._NodeContext = NodeContext
        self._SourceValue = SourceValue
        self._WorkflowValue = WorkflowValue
        self._WorkflowValueError = WorkflowValueError
        self._check_value = check_value_strings

    # -- plumbing ---------------------------------------------------------------------------------------------

    def _in_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        import asyncio  # only tasks are cancelled in the loop, and only async nodes have tasks

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

    def serve(self, read: Callable[[], None]) -> None:
        """Starts serving the channel: ``read`` blocks for the next messages and dispatches them (on a pool
        thread, which then runs the sync calls it dispatched; see ``_pool.Pool``). Answers may be held back
        and sent together when the channel can (``hold``/``flush``)."""
        hold = getattr(self.channel, "hold", None)
        flush = getattr(self.channel, "flush", None)
        if hold is not None and flush is not None:
            self._hold = hold
            self._flush = flush
            self.executor.on_idle = flush
        self.executor.serve(read)

    def _thread(self, call: Call, ctx: contextvars.Context, fn: Callable[..., Optional[Payload]], *args: Any) -> None:
        # No lock: a call has one job at a time, and nothing else writes its count (finish only reads it).
        call.threads += 1
        self.executor.submit(ctx.run, self._job, call, fn, args)
        self._ensure_ticking()  # the monitor watches the thread that will run it

    def _job(self, call: Call, fn: Callable[..., Optional[Payload]], args: Tuple[Any, ...]) -> None:
        """Runs on a pool thread and answers the call from there: no hop back to the event loop."""
        if call.done:
            payload = None  # cancelled or timed out before a thread took it: never start user code
        else:
            try:
                payload = fn(*args)
            except BaseException as error:  # our own code failed: still answer the call
                payload = ("error", proto.call_error("exception", f"worker error: {tb.describe(error)}", phase=call.kind))
        with self._lock:
            call.threads -= 1
            if call.leaked:
                self.leaked -= 1
                return
            if payload is None:
                return
            payload = self._close(call, payload)
        if payload is not None:
            self._answer(call, payload)

    def _ensure_ticking(self) -> None:
        # Set the flag before waking the loop; _tick clears it before its last look at the work (no lost wake-up).
        if not self._ticking:
            self._ticking = True
            self.loop.call_soon_threadsafe(self._start_ticking)  # type: ignore[union-attr]

    def _start_ticking(self) -> None:
        self._ticking = True
        if self._tick_handle is None:
            self._idle_ticks = 0
            self._tick()

    def _tick(self) -> None:
        """On the loop, every ``TICK_SECONDS`` while calls come in: sets up the time limits and condition sweeps
        of new calls that are still running (``_deadlines``), and lets the pool's monitor spread blocked work."""
        leave_if_forked()
        loop = self.loop
        assert loop is not None
        self._tick_handle = None
        self.deadlines.set_up()
        if self._flush is not None:
            self._flush()  # answers held back by a thread whose next call has not ended yet
        busy = self.executor.check(time.monotonic(), getattr(self.channel, "writing", False))
        beat = self.executor.beat
        if busy or beat != self._last_beat:
            self._idle_ticks = 0
        else:
            self._idle_ticks += 1
        self._last_beat = beat
        if self._idle_ticks < IDLE_TICKS:
            self._tick_handle = loop.call_later(TICK_SECONDS, self._tick)
            return
        self._ticking = False
        if self.deadlines.pending() or self.executor.waiting():  # arrived after the check above: keep watching
            self._ticking = True
            self._idle_ticks = 0
            self._tick_handle = loop.call_later(TICK_SECONDS, self._tick)

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
        """An ``answer`` to a question of a call (``_asks``)."""
        self.asks.answer(message)

    def finish(self, call: Call, payload: Payload) -> None:
        """Answers ``call`` once, from any thread: ends its capture, counts its leaked threads, sends the result."""
        with self._lock:
            closed = self._close(call, payload)
        if closed is not None:
            self._answer(call, closed)

    def _close(self, call: Call, payload: Payload) -> Optional[Payload]:
        """Under the lock: marks the call done and counts its threads still running as leaked. Returns the
        payload to answer with (a tripped limit overrides it), or ``None`` when it was answered already."""
        if call.done:
            return None
        call.done = True
        if call.threads:
            call.leaked = True
            self.leaked += call.threads
        return payload if call.forced is None else call.forced

    def _answer(self, call: Call, payload: Payload) -> None:
        if Fork.child:
            os._exit(0)  # a forked copy of the worker has nothing to answer and must not touch the channel
        captured = _NO_OUTPUT if call.capture is None else call.output()
        kind = payload[0]
        if (kind == "node" or kind == "combine") and type(payload[1]) is proto.LargeValue:
            self._answer_large(call, payload, captured)
        else:
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
                data = self._too_large(call, len(data), captured)
            self._send(data)
        # The rest after the answer, out of the round trip: the call is done, so nothing reaches it anymore.
        self.calls.pop(call.id, None)
        if call.bucket is not None:
            call.bucket.calls.pop(call.id, None)
        if call.timer is not None:
            call.timer.cancel()  # thread-safe enough: it only flags the handle, the loop drops it when due
        if call.asks:
            cancel_asks(call)
        task = call.task
        if task is not None and not task.done():
            self._in_loop(self._cancel_task, task)

    def _send(self, data: bytes) -> None:
        if self._hold is not None and self.executor.more_here():
            # More calls are queued on this thread, right behind: their answers go out in one write with
            # this one (flushed when the thread runs out of jobs, or by the monitor if the next one blocks).
            self._hold(data)
        else:
            self.channel.send_bytes(data)

    def _answer_large(self, call: Call, payload: Payload, captured: Dict[str, Any]) -> None:
        """A value with large strings: new ones go first as string frames, known ones by ref (see
        ``proto.StringTable``). The table's lock is held until the answer is queued, so no other answer
        can name a string of this one before its frame."""
        large: proto.LargeValue = payload[1]
        strings = proto.STRINGS
        with strings.lock:
            frames, refs, string_bytes, added = strings.prepare(large.strings, "value")
            if payload[0] == "node":
                data = proto.node_result_bytes(call.id, large.json, payload[2], captured, self.leaked, refs)
            else:
                data = proto.combine_result_bytes(call.id, large.json, captured, self.leaked, refs)
            size = len(data) + string_bytes
            if size > proto.MAX_MESSAGE_BYTES:
                strings.forget(added)
                self._send(self._too_large(call, size, captured))
                return
            frames.append(data)
            self._send(b"".join(frames))

    def _too_large(self, call: Call, size: int, captured: Dict[str, Any]) -> bytes:
        error = proto.call_error(
            "value_too_large",
            f"the result makes a message of {size:,} bytes, over the limit of "
            f"{proto.MAX_MESSAGE_BYTES:,} bytes; return less data (pass large content by file path)",
            phase="node" if call.kind == "node" else call.kind,
        )
        return proto.encode(proto.failed_result(call.id, error, captured, self.leaked))

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

    def _value(self, returned: object, phase: str) -> Tuple[Optional[Any], Any, Optional[Payload]]:
        """``(WorkflowValue, value JSON or proto.LargeValue, None)`` or ``(None, None, error payload)``."""
        kind = type(returned)
        if kind is self._WorkflowValue:
            text, data = returned.text, returned.data  # type: ignore[attr-defined]
            if data is None and type(text) is str and len(text) < LARGE_STRING_CHARS and text.isascii():
                # The plain case, nothing check_value could refuse (ASCII has no lone surrogates): no walk.
                return returned, proto.encode_value(text, None), None
        elif kind is not str and _is_awaitable(returned):
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
            value, strings = self._check_value(returned, proto.STRINGS.known)
        except self._WorkflowValueError as error:
            return None, None, ("error", proto.call_error(error.code, str(error), phase=phase))
        try:
            if strings:
                encoded = proto.encode_large_value(value.text, value.data, strings)
            else:
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
        ctx.run(current.set, call)
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

    def _node(self, node_id: str) -> Tuple[Callable[..., Any], bool, bool]:
        """A python node's ``(function, takes_context, is_async)``, looked up once."""
        entry = self._node_entries.get(node_id)
        if entry is None:
            meta = self.nodes.get(node_id)
            if meta is None or meta.get("kind") != "python":
                raise _Refused(f"the workflow has no python node {node_id!r}")
            fn = self._callable("node:" + node_id)
            entry = self._node_entries[node_id] = (fn, bool(meta.get("takes_context")), bool(meta.get("is_async")))
        return entry

    def _start_node(self, call: Call, ctx: contextvars.Context, message: Dict[str, Any]) -> None:
        fn, takes_context, is_async = self._node(message["node"])
        conditions = message["conditions"]
        if conditions is not None:
            switch = conditions.get("switch")
            for edge in conditions["when"] + (switch["cases"] if switch else []):
                self._callable("edge:" + edge)
            if not conditions["when"] and not switch:
                conditions = None
        wire = message["input"]
        value = self._WorkflowValue(wire["text"], wire.get("data"))
        args: Tuple[Any, ...] = (value,)
        if takes_context:
            args = (value, self._NodeContext(Transport(self, call)))
        limit = message.get("conditions_timeout_ms") or proto.DEFAULT_CALLABLE_TIMEOUT_MS
        if conditions is not None:
            call.has_conditions = True
            self._watch(call)  # the loop sweeps condition batches for their limit
        self._arm(call, message.get("timeout_ms"), "node")
        if is_async:
            import asyncio  # the loop is asyncio's when a node is async

            coroutine = self._async_node(call, fn, args, conditions, limit)
            if asyncio._get_running_loop() is self.loop:
                self._start_task(call, ctx, coroutine)
            else:  # read on a pool thread: tasks are the loop's
                self.loop.call_soon_threadsafe(self._start_task, call, ctx, coroutine)  # type: ignore[union-attr]
        else:
            self._thread(call, ctx, self._sync_node, call, fn, args, conditions, limit)

    def _start_task(self, call: Call, ctx: contextvars.Context, coroutine: Any) -> None:
        if call.done:  # cancelled before the loop got to it
            coroutine.close()
            return
        if _EAGER_TASKS:  # runs at once up to its first await: a function that never waits costs no loop turn
            import asyncio

            call.task = asyncio.Task(coroutine, loop=self.loop, context=ctx, eager_start=True)  # type: ignore[call-arg]
        else:
            call.task = ctx.run(self.loop.create_task, coroutine)  # type: ignore[union-attr]

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

    def _conditions(self, call: Call, value: Any, encoded: Any, conditions: Dict[str, Any]) -> Optional[Payload]:
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
        if _is_awaitable(returned):
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
        if _is_awaitable(returned):
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
