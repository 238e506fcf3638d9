"""The time limits of calls in flight: node timeouts, condition batches, ``until`` and ``combine`` limits.

Most calls end long before their limit (300 s by default), so arming one costs no timer: a call joins the
bucket of the ``BUCKET_SECONDS`` window its deadline falls in, and only a bucket whose window starts gives
its calls still running a timer of their own. Condition batches are swept every ``SWEEP_SECONDS`` instead,
so that a pool thread never wakes the loop to start one.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, Optional

from . import _protocol as proto

if TYPE_CHECKING:
    from ._runtime import Call, Payload

BUCKET_SECONDS = 1.0
"""Deadlines are grouped by window of this length until the window starts (see :meth:`Deadlines.arm`)."""
SWEEP_SECONDS = 0.02
"""How often condition batches are checked against their limit (no per-call wake-up from a pool thread)."""


def _seconds(ms: float) -> str:
    seconds = ms / 1000
    return f"{seconds:g} s"


class _Bucket:
    """The calls whose deadlines fall in one ``BUCKET_SECONDS`` window; see :meth:`Deadlines.arm`."""

    __slots__ = ("key", "start", "calls", "open")

    def __init__(self, key: int) -> None:
        self.key = key
        self.start = key * BUCKET_SECONDS
        self.calls: Dict[int, Call] = {}
        self.open = True


class Deadlines:
    """The time limits of one runtime's calls. ``arm``, ``watch`` and ``enter_conditions`` may be called from
    any thread; the rest runs on the event loop, from the runtime's monitor tick (:meth:`set_up`)."""

    def __init__(
        self,
        owner: Any,
        calls: Dict[int, Call],
        finish: Callable[[Call, Payload], None],
        wake: Callable[[], None],
    ) -> None:
        self._owner = owner  # its ``loop`` is set once serving starts
        self._calls = calls
        self._finish = finish
        self._wake = wake  # starts the monitor tick, which calls set_up
        self._lock = threading.Lock()
        self._sweeping = False
        # Calls whose timer or condition sweep the loop has yet to set up, and new buckets.
        self._fresh: Deque[Call] = deque()
        self._buckets: Dict[int, _Bucket] = {}
        self._new_buckets: Deque[_Bucket] = deque()

    def arm(self, call: Call, ms: Optional[float], phase: str) -> None:
        """Sets the call's time limit, from any thread, without a timer of its own at first: it joins the
        bucket of its deadline's window, whose one loop timer (set at the next tick, due when the window
        starts) gives the calls still running in it a precise timer (:meth:`_open_bucket`). A call that ends
        leaves its bucket and never touches the loop."""
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
            self._wake()
        bucket.calls[call.id] = call
        call.bucket = bucket
        if not bucket.open:  # opened meanwhile, maybe without this call: a timer of its own
            self.watch(call)

    def watch(self, call: Call) -> None:
        """Has the loop set up the call's timer, and its condition sweep when it has conditions."""
        self._fresh.append(call)
        self._wake()

    def enter_conditions(self, call: Call, limit: float) -> None:
        """From any thread, without waking the loop: the node timeout stops, the condition limit starts."""
        call.cond_limit = limit
        call.cond_deadline = time.monotonic() + limit / 1000

    def pending(self) -> bool:
        """Whether the loop has calls or buckets to set up (the monitor keeps ticking for them)."""
        return bool(self._fresh or self._new_buckets)

    def set_up(self) -> None:
        """On the loop, at each monitor tick: the timers of new buckets, and the timers and condition sweeps
        of new calls that are still running."""
        loop = self._owner.loop
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

    def _open_bucket(self, bucket: _Bucket) -> None:
        """On the loop, when a bucket's window starts: precise timers for its calls still running."""
        bucket.open = False  # first, so that arm sees it (and arms through watch) after our snapshot
        with self._lock:
            if self._buckets.get(bucket.key) is bucket:
                del self._buckets[bucket.key]
        for call in list(bucket.calls.values()):
            self._set_timer(call)

    def _set_timer(self, call: Call) -> None:
        if call.done or call.limit is None or call.timer is not None:
            return
        phase, ms = call.limit
        call.timer = self._owner.loop.call_at(call.deadline, self._expire, call, phase, ms)
        if call.done:  # finished meanwhile on its thread, which saw no timer to cancel
            call.timer.cancel()

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
        self._finish(call, ("error", proto.call_error("timeout", f"{what} did not finish within {_seconds(ms)} ({limit})", phase=phase)))

    def _ensure_sweeper(self) -> None:
        if not self._sweeping:
            self._sweeping = True
            self._owner.loop.call_later(SWEEP_SECONDS, self._sweep)

    def _sweep(self) -> None:
        """Expires condition batches over their limit; runs every 20 ms while a call has conditions."""
        now = time.monotonic()
        active = False
        for call in list(self._calls.values()):
            if call.has_conditions:
                active = True
                deadline = call.cond_deadline
                if deadline is not None and now >= deadline:
                    call.cond_deadline = None
                    self._expire(call, "conditions", call.cond_limit)
        if active:
            self._owner.loop.call_later(SWEEP_SECONDS, self._sweep)
        else:
            self._sweeping = False

