"""Invoking a loaded workflow's callables: node functions with their outgoing conditions, ``until`` and ``combine``.

Calls run concurrently and are answered out of order, each with exactly one ``result`` message. Synchronous
callables run on a thread pool inside a copy of the call's ``contextvars`` context (as ``asyncio.to_thread``
does), usually on the pool thread that read the call (see :class:`_Pool`); ``async def`` node functions run
on the event loop. A call that times out, is cancelled or trips an
``emit`` limit is answered at once; a thread still running it cannot be stopped and is counted in
``leaked_threads`` until it returns, and whatever it writes or emits afterwards is dropped.

Outgoing conditions run right after the node function on the same thread, under their own limit (one batch,
30 s by default). A condition must return ``True`` or ``False`` (a NumPy bool is accepted): any other value,
and an awaitable in particular, fails the node with ``invalid_result``; an exception fails it with
``exception``. Neither is treated as ``False``.
"""

from __future__ import annotations

import _thread
import collections.abc
import contextvars
import itertools
import os
import queue
import sys
import threading
import time
import types
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, List, Optional, Tuple

from . import _protocol as proto
from . import _tracebacks as tb
from ._capture import Capture, current
from ._values import LARGE_STRING_CHARS

if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

    from ._loop import ThreadLoop

# asyncio (with concurrent.futures) is imported only where an ``async def`` node needs it: a workflow without
# one is served on a ``_loop.ThreadLoop`` and never imports it (~35 ms of every run's first node).

Payload = Tuple[Any, ...]
"""``("node", value_json, passed edges)``, ``("until", stop)``, ``("combine", value_json)`` or ``("error", error)``."""


class EmitLimitExceeded(RuntimeError):
    """``ctx.emit()`` went over a per-attempt limit; the attempt fails with ``protocol_limit`` regardless."""


class MessageTooLarge(RuntimeError):
    """A message would be over the 16 MiB limit; the attempt fails with ``protocol_limit`` regardless."""


class AskUnavailable(RuntimeError):
    """The engine cannot ask the user (the CLI); uncaught, the attempt fails with ``ask_unavailable``."""


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


class _Bucket:
    """The calls whose deadlines fall in one ``BUCKET_SECONDS`` window; see :meth:`Runtime._arm`."""

    __slots__ = ("key", "start", "calls", "open")

    def __init__(self, key: int) -> None:
        self.key = key
        self.start = key * BUCKET_SECONDS
        self.calls: Dict[int, Call] = {}
        self.open = True


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
        call = self._call
        runtime = self._runtime
        import asyncio
        import concurrent.futures

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
        if call.asks is None:
            call.asks = {}
        call.asks[ask_id] = future
        runtime.channel.send_bytes(data)
        try:
            reply = await asyncio.wrap_future(future)
        finally:
            call.asks.pop(ask_id, None)  # type: ignore[union-attr]
        if reply.get("ok"):
            answers: List[Dict[str, Any]] = reply["answers"]
            return answers
        raise AskUnavailable(reply.get("message") or "asking the user is not available here")


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


TICK_SECONDS = 0.002
"""How often the monitor looks at the pool while calls come in (see :class:`_Pool`). Each look costs the
thread running calls a GIL handover, so not much more often than this."""
LONG_SECONDS = 0.01
"""A job that has computed this long is not progress for the others: jobs waiting behind it get threads."""
SHORT_SECONDS = 0.001
"""A thread that ran a job shorter than this parks if another thread is at work (see ``_Pool._work``)."""
SAMPLED_RUNNERS = 16
"""The monitor looks at the latest jobs only: the older ones are blocked, or long and not progress anyway."""
STATE_THREADS = 32
"""Pool threads whose state the monitor reads from ``/proc`` (one open descriptor each)."""
BUCKET_SECONDS = 1.0
"""Deadlines are grouped by window of this length until the window starts (see :meth:`Runtime._arm`)."""
IDLE_TICKS = 25
"""The monitor stops after this many ticks without activity; the next call starts it again."""

_IDLE, _READ, _RUN = 0, 1, 2

Sampler = Callable[[], Tuple[float, bool]]
"""A thread's CPU seconds so far, and whether it is runnable now (on a CPU or waiting for one)."""


def _sampler(ident: int, with_state: bool) -> Optional[Sampler]:
    """The calling thread's sampler: its CPU-time clock, and (``with_state``) its state from ``/proc`` where
    there is one, through a descriptor kept open (without it a thread that waits for a CPU looks blocked);
    ``None`` without a CPU clock."""
    clock_id = getattr(time, "pthread_getcpuclockid", None)
    if clock_id is None:
        return None
    try:
        clock = clock_id(ident)
        time.clock_gettime(clock)
    except (OSError, OverflowError):
        return None
    stat = -1
    native_id = getattr(threading, "get_native_id", None)
    if with_state and native_id is not None and hasattr(os, "pread"):
        try:
            stat = os.open(f"/proc/self/task/{native_id()}/stat", os.O_RDONLY)
        except OSError:
            pass

    def sample() -> Tuple[float, bool]:
        runnable = False
        if stat >= 0:
            data = os.pread(stat, 256, 0)  # "pid (name) S ...": the state follows the last ")"
            end = data.rfind(b")")
            runnable = data[end + 2 : end + 3] == b"R"
        return time.clock_gettime(clock), runnable

    return sample


class _Pool:
    """Threads for synchronous callables; one of them at a time also reads the engine's messages.

    Handing each call from a reading thread to a pool thread costs two thread switches and a GIL handover,
    more than the whole pipe round trip. So the thread that reads an ``invoke`` runs the call itself: the
    job waits in ``ready`` while the rest of its chunk is dispatched, then the same thread runs it and goes
    back to reading. A trivial node costs no thread switch, and a burst of them runs back to back on one
    thread without GIL contention.

    While that thread runs user code nobody reads, and jobs behind it wait. :meth:`check` (the monitor, on
    the event loop every ``TICK_SECONDS`` while work comes in) wakes or starts threads (at most as many as
    the pool has, or 8, per look) when work waits (jobs, or the channel unread) and the pool makes no
    progress: nobody is dispatching, and the threads running jobs are neither runnable now (computing, or
    waiting for a CPU) nor computed half the time since the last look (they are blocked in I/O, a sleep, a
    lock), or the only busy ones have computed for ``LONG_SECONDS`` in one job. A blocking or slow callable thus holds up messages
    and other calls for a few milliseconds, and calls still run concurrently: each blocked one keeps a
    thread of its own. A thread that finishes a short job while another is at work parks, so that two do
    not trade the GIL. Threads are reused; a thread held by a leaked call keeps its slot.
    """

    def __init__(self, limit: int) -> None:
        self._lock = threading.Lock()
        self._ready: Deque[Tuple[Callable[..., Any], Tuple[Any, ...]]] = deque()
        self._wakeups: queue.SimpleQueue = queue.SimpleQueue()  # type: ignore[type-arg]
        self._idle = 0
        self._threads = 0
        self._limit = limit
        self._read: Optional[Callable[[], None]] = None
        self._reader: Optional[int] = None  # the thread that holds the reading role
        # thread → (when its job started, since when it has run jobs one after another), monotonic
        self._runners: Dict[int, Tuple[float, float]] = {}
        self._samplers: Dict[int, Optional[Sampler]] = {}
        # The monitor's last look at a running thread: (its job's start, its CPU time when that job started
        # as far as the looks tell, its CPU time, when).
        self._seen: Dict[int, Tuple[float, float, float, float]] = {}
        self._local = threading.local()
        self.on_idle: Optional[Callable[[], None]] = None
        """Called by a thread that ran jobs and has none left queued (before it reads, parks or idles)."""
        self.beat = 0
        """Counts jobs started and chunks read: the monitor's sign of activity."""
        self._last_beat = 0

    def serve(self, read: Callable[[], None]) -> None:
        """From now on one thread at a time runs ``read``: block for the next messages and dispatch them."""
        with self._lock:
            self._read = read
        self._wake(1)

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Queues a job. From the pool's reading thread it runs next on that thread; from elsewhere a thread
        is woken (or started) for it."""
        self._ready.append((fn, args))  # atomic; threads take jobs under the lock
        if not getattr(self._local, "pool", False):
            self._wake(1)

    def more_here(self) -> bool:
        """Whether the calling thread is a pool thread with jobs queued behind it (it will run one next)."""
        return bool(self._ready) and getattr(self._local, "pool", False)

    def _waiting(self) -> int:
        return len(self._ready) + (1 if self._read is not None and self._reader is None else 0)

    def waiting(self) -> int:
        """Jobs no thread has taken, plus one when nobody reads the channel."""
        with self._lock:
            return self._waiting()

    def check(self, now: float, congested: bool = False) -> bool:
        """The monitor: when work waits and the pool makes no progress, wakes a thread per waiting job (and
        one to read), at most as many as the pool has (or 8) per look. Nothing is woken while the channel is
        ``congested`` (the engine is not reading our answers: more threads would only wait for it too).
        Returns whether work is waiting."""
        with self._lock:
            waiting = self._waiting()
            if not waiting:
                return False
            # A reader with jobs waiting is dispatching them (it reads again only once they are taken), and
            # it runs no user code meanwhile: that is progress.
            reading = self._reader is not None
            busy = list(self._runners.items())[-SAMPLED_RUNNERS:]  # the latest jobs (the dict is in start order)
            spare = self._idle > 0 or self._threads < self._limit
            threads = self._threads
        beat, self._last_beat = self.beat, self.beat
        if congested or reading or not spare or self._progressing(busy, now, beat != self._last_beat):
            return True
        self._wake(min(waiting, max(threads, 8)))
        return True

    def _progressing(self, busy: List[Tuple[int, Tuple[float, float]]], now: float, active: bool) -> bool:
        """Whether the running threads make progress: one is runnable now (computing, in a system call, or
        waiting for a CPU), or together they computed at least half the time since the last look; a job
        that has computed for ``LONG_SECONDS`` does not count. A thread is sampled across the jobs it runs one
        after another, so one running short blocking job after short blocking job counts as blocked. (A
        thread waiting for the GIL held by the monitor is not runnable, but computed until it took it.)"""
        share = 0.0
        progress = False
        seen = self._seen
        for ident, (started, since) in busy:  # every one is sampled, for the next look
            sampler = self._samplers.get(ident)
            if sampler is None:
                return active  # no CPU clock here: any job started or chunk read since the last look
            try:
                cpu, runnable = sampler()
            except (OSError, ValueError):
                return True
            last = seen.get(ident)
            if last is None or since > last[3]:
                seen[ident] = (started, cpu, cpu, now)
                progress = True  # not running jobs at the last look: give it a tick
                continue
            # The CPU time when this job started: known from an earlier look, else that of the last look.
            job_cpu = last[1] if last[0] == started else last[2]
            seen[ident] = (started, job_cpu, cpu, now)
            if cpu - job_cpu >= LONG_SECONDS:
                continue  # computing for long: not progress for the jobs behind it
            if runnable:
                progress = True
            elif now > last[3]:
                share += (cpu - last[2]) / (now - last[3])
        return progress or share >= 0.5

    def _others_active(self, ident: int) -> bool:
        """Under the lock: whether another thread reads or has just started a job."""
        if self._reader is not None:
            return True
        if len(self._runners) > 0:
            now = time.monotonic()
            for other, (started, _) in self._runners.items():
                if other != ident and now - started < LONG_SECONDS:
                    return True
        return False

    def _wake(self, count: int) -> None:
        with self._lock:
            woken = min(count, self._idle)
            self._idle -= woken
            start = max(0, min(count - woken, self._limit - self._threads))
            self._threads += start
            number = self._threads
        for _ in range(woken):
            self._wakeups.put(None)
        for index in range(start):
            # The low-level start: threading.Thread.start() waits for the new thread to run (about 1 ms
            # under load), and the monitor may start dozens at once.
            _thread.start_new_thread(self._work, (f"chrys-call-{number - index}",))

    def _work(self, name: str) -> None:
        threading.current_thread().name = name  # registers it with threading, for thread dumps and user code
        self._local.pool = True
        ident = threading.get_ident()
        # A descriptor each for the first threads only: a pool grown by leaked calls must not eat the fds.
        self._samplers[ident] = _sampler(ident, with_state=len(self._samplers) < STATE_THREADS)
        lock, ready, runners, wait = self._lock, self._ready, self._runners, self._wakeups.get
        mode = _IDLE
        since = 0.0
        while True:
            if mode == _RUN and not ready and self.on_idle is not None:
                self.on_idle()  # about to stop running jobs: send the answers held back (see Runtime._answer)
            # One locked step from what this thread did to what it does next, so that the monitor never
            # sees it between roles (neither reading nor running) and wakes another thread for nothing.
            with lock:
                now = time.monotonic()
                short = False
                if mode == _READ:
                    self._reader = None
                elif mode == _RUN:
                    short = now - runners.pop(ident)[0] < SHORT_SECONDS
                if short and self._others_active(ident):
                    # Park: another thread is at work on short jobs, and two would only trade the GIL. (After a
                    # long job, blocking or not, go on: the jobs behind it waited long enough.)
                    self._idle += 1
                    mode = _IDLE
                elif ready:
                    fn, args = ready.popleft()
                    if mode != _RUN:
                        since = now
                    runners[ident] = (now, since)
                    mode = _RUN
                elif self._read is not None and self._reader is None:
                    self._reader = ident
                    mode = _READ
                else:
                    self._idle += 1
                    mode = _IDLE
            if mode == _RUN:
                self.beat += 1
                try:
                    fn(*args)
                except BaseException:  # a job answers its own failures; nothing may end the thread
                    pass
                _leave_if_forked()
            elif mode == _READ:
                self.beat += 1
                try:
                    self._read()  # type: ignore[misc]
                except BaseException:  # our own failure: keep the channel served
                    tb.report_internal_error()
            else:
                wait()


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
        self.executor = _Pool(512)
        self._ask_ids = itertools.count(1)
        self._lock = threading.Lock()
        self._sweeping = False
        # Calls whose timer or condition sweep the loop has yet to set up, and new buckets (see _tick, _arm).
        self._fresh: Deque[Call] = deque()
        self._buckets: Dict[int, _Bucket] = {}
        self._new_buckets: Deque[_Bucket] = deque()
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

    def next_ask_id(self) -> int:
        return next(self._ask_ids)  # atomic: questions may be asked from several threads

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
        thread, which then runs the sync calls it dispatched; see :class:`_Pool`). Answers may be held back
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

    def _arm(self, call: Call, ms: Optional[float], phase: str) -> None:
        """Sets the call's time limit, from any thread, without a timer of its own at first.

        Most calls end long before their limit (300 s by default). So a call joins the bucket of the
        ``BUCKET_SECONDS`` window its deadline falls in, and each bucket has one loop timer, set at the next
        tick, due when the window starts; only then do the calls still running in it get a precise timer
        (:meth:`_open_bucket`). A call that ends leaves its bucket and never touches the loop.
        """
        if ms is None or call.done:
            return
        deadline = time.monotonic() + ms / 1000
        call.deadline = deadline
        call.limit = (phase, ms)
        key = int(deadline // BUCKET_SECONDS)
        bucket = self._buckets.get(key)
        if bucket is None:
            with self._lock:
                bucket = self._buckets.get(key)
                if bucket is None:
                    bucket = self._buckets[key] = _Bucket(key)
                    self._new_buckets.append(bucket)
            self._ensure_ticking()
        bucket.calls[call.id] = call
        call.bucket = bucket
        if not bucket.open:  # opened meanwhile, maybe without this call: a timer of its own
            self._watch(call)

    def _open_bucket(self, bucket: _Bucket) -> None:
        """On the loop, when a bucket's window starts: precise timers for its calls still running."""
        bucket.open = False  # first, so that _arm sees it (and arms through _watch) after our snapshot
        with self._lock:
            if self._buckets.get(bucket.key) is bucket:
                del self._buckets[bucket.key]
        for call in list(bucket.calls.values()):
            self._set_timer(call)

    def _set_timer(self, call: Call) -> None:
        if call.done or call.limit is None or call.timer is not None:
            return
        phase, ms = call.limit
        call.timer = self.loop.call_at(call.deadline, self._expire, call, phase, ms)  # type: ignore[union-attr]
        if call.done:  # finished meanwhile on its thread, which saw no timer to cancel
            call.timer.cancel()

    def _watch(self, call: Call) -> None:
        self._fresh.append(call)
        self._ensure_ticking()

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
        of new calls that are still running, and lets the pool's monitor spread blocked work."""
        _leave_if_forked()
        loop = self.loop
        assert loop is not None
        self._tick_handle = None
        new_buckets = self._new_buckets
        while new_buckets:
            bucket = new_buckets.popleft()
            loop.call_at(bucket.start, self._open_bucket, bucket)
        fresh = self._fresh
        while fresh:
            call = fresh.popleft()
            if call.done:
                continue
            if call.has_conditions:
                self._ensure_sweeper()
            self._set_timer(call)
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
        if fresh or new_buckets or self.executor.waiting():  # arrived after the check above: keep watching
            self._ticking = True
            self._idle_ticks = 0
            self._tick_handle = loop.call_later(TICK_SECONDS, self._tick)

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
        future = call.asks.get(message["ask_id"]) if call is not None and call.asks is not None else None
        if future is not None and not future.done():
            future.set_result(message)

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
        if _Fork.child:
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
            for future in list(call.asks.values()):
                future.cancel()
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
