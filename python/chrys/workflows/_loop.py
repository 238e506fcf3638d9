"""The worker's event loop when a workflow has no ``async def`` node: the part of asyncio's loop the runtime
uses (callbacks from any thread, timers), without importing asyncio.

Importing asyncio costs ~35 ms (it brings ``ssl``, ``socket``, ``concurrent.futures`` and more), and before this
loop every run paid it before its first node could start. The runtime runs synchronous functions on its own
threads and uses its loop only for time limits, condition sweeps and its monitor, which this loop provides
with the same rules: callbacks run one at a time on the thread in :meth:`ThreadLoop.run_forever`, in the order
they were scheduled, and a cancelled timer is dropped when it falls due. A workflow with an ``async def`` node,
or whose code imported asyncio while it loaded, is served on an asyncio loop instead (see ``_serve``).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, List, Tuple

from ._tracebacks import report_internal_error


class TimerHandle:
    """A callback due at ``when`` (``time.monotonic()``); :meth:`cancel` may be called from any thread."""

    __slots__ = ("when", "callback", "args", "cancelled")

    def __init__(self, when: float, callback: Callable[..., Any], args: Tuple[Any, ...]) -> None:
        self.when = when
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ThreadLoop:
    """``call_soon_threadsafe``, ``call_at``, ``call_later``, ``time`` and ``run_forever`` of an asyncio loop,
    on one thread. Every method but :meth:`run_forever` may be called from any thread."""

    def __init__(self) -> None:
        self._wake = threading.Condition(threading.Lock())
        self._ready: Deque[Tuple[Callable[..., Any], Tuple[Any, ...]]] = deque()
        self._timers: List[Tuple[float, int, TimerHandle]] = []
        self._order = itertools.count()
        self._closed = False
        self._stopping = False

    def time(self) -> float:
        return time.monotonic()

    def is_closed(self) -> bool:
        return self._closed

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any) -> None:
        with self._wake:
            self._ready.append((callback, args))
            self._wake.notify()

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        handle = TimerHandle(when, callback, args)
        with self._wake:
            heapq.heappush(self._timers, (when, next(self._order), handle))
            if self._timers[0][2] is handle:
                self._wake.notify()  # sooner than the loop is waiting for
        return handle

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        return self.call_at(time.monotonic() + delay, callback, *args)

    def stop(self) -> None:
        """Makes :meth:`run_forever` return once the callbacks already waiting have run (the worker never
        stops its loop: it exits)."""
        with self._wake:
            self._stopping = True
            self._wake.notify()

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._ready.clear()
            self._timers.clear()

    def run_forever(self) -> None:
        """Runs callbacks as they come and timers as they fall due, until :meth:`stop`."""
        ready = self._ready
        timers = self._timers
        wake = self._wake
        while True:
            due: List[TimerHandle] = []
            with wake:
                while not ready and not self._stopping:
                    if not timers:
                        wake.wait()
                        continue
                    delay = timers[0][0] - time.monotonic()
                    if delay <= 0:
                        break
                    wake.wait(delay)
                batch = list(ready)
                ready.clear()
                now = time.monotonic()
                while timers and timers[0][0] <= now:
                    due.append(heapq.heappop(timers)[2])
                stopping = self._stopping
            for callback, args in batch:
                _run(callback, args)
            for handle in due:
                if not handle.cancelled:
                    _run(handle.callback, handle.args)
            if stopping:
                self._stopping = False
                return


def _run(callback: Callable[..., Any], args: Tuple[Any, ...]) -> None:
    """As asyncio does, a callback that raises is reported (on fd 2) and the loop goes on."""
    try:
        callback(*args)
    except Exception:
        report_internal_error()
