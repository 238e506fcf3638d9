"""The worker's thread pool for synchronous callables, and its monitor (see :class:`Pool`)."""

from __future__ import annotations

import _thread
import os
import queue
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

from . import _tracebacks as tb
from ._fork import leave_if_forked

TICK_SECONDS = 0.002
"""How often the monitor looks at the pool while calls come in (see :class:`Pool`). Each look costs the
thread running calls a GIL handover, so not much more often than this."""
LONG_SECONDS = 0.01
"""A job that has computed this long is not progress for the others: jobs waiting behind it get threads."""
SHORT_SECONDS = 0.001
"""A thread that ran a job shorter than this parks if another thread is at work (see ``Pool._work``)."""
SAMPLED_RUNNERS = 16
"""The monitor looks at the latest jobs only: the older ones are blocked, or long and not progress anyway."""
STATE_THREADS = 32
"""Pool threads whose state the monitor reads from ``/proc`` (one open descriptor each)."""

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


class Pool:
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
                leave_if_forked()
            elif mode == _READ:
                self.beat += 1
                try:
                    self._read()  # type: ignore[misc]
                except BaseException:  # our own failure: keep the channel served
                    tb.report_internal_error()
            else:
                wait()
