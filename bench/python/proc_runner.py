"""Runs a command a number of times and reports, per run, its wall time and peak resident memory.

Used by the benchmark harness for every process-level measurement (``node -e 0``, ``python -c pass``, the
``icode`` CLI, the engine and peer child processes), so that all of them are timed the same way. A job is a
JSON object on stdin::

    {"argv": [...], "cwd": "...", "env": {...}, "reps": 3, "parallel": 1, "timeout_s": 120, "out_dir": "..."}

``parallel`` > 1 starts that many copies at once and times the group until the last one exits. The peak
resident set size comes from ``wait4``: on Linux it is the largest of the child and every descendant it
reaped (a Node CLI and its Python worker), not their sum. Each run's stdout and stderr are written to
``<out_dir>/rep-<i>[-<k>].out`` and ``.err``. The report is one JSON line on stdout. Standard library only;
runs on Python 3.9+.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time


def _kill_group(proc: subprocess.Popen, timed_out: list) -> None:
    timed_out[0] = True
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def _start(job: dict, stem: str) -> tuple:
    out_dir = job["out_dir"]
    out = open(os.path.join(out_dir, stem + ".out"), "wb")
    err = open(os.path.join(out_dir, stem + ".err"), "wb")
    proc = subprocess.Popen(
        job["argv"],
        cwd=job.get("cwd"),
        env=job.get("env"),
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
        start_new_session=True,
    )
    return proc, out, err


def _reap(proc: subprocess.Popen) -> tuple:
    """Waits for ``proc`` with ``wait4`` (Popen.wait would discard the resource usage)."""
    while True:
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
            break
        except InterruptedError:
            continue
    proc.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else (
        -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    )
    # ru_maxrss is in KiB on Linux and in bytes on macOS.
    maxrss_kib = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    return proc.returncode, maxrss_kib


_LIVE: list = []


def _stop(signum: int, _frame: object) -> None:
    """Interrupted (Ctrl-C, the harness ended): take the measured processes down too, since they run in
    sessions of their own and would not get the signal."""
    for proc in _LIVE:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    sys.exit(128 + signum)


def run_job(job: dict) -> dict:
    reps = int(job.get("reps", 1))
    parallel = int(job.get("parallel", 1))
    timeout_s = float(job.get("timeout_s", 120))
    runs = []
    for rep in range(reps):
        timed_out = [False]
        started = []
        t0 = time.perf_counter()
        for k in range(parallel):
            stem = "rep-%d" % rep if parallel == 1 else "rep-%d-%d" % (rep, k)
            started.append(_start(job, stem))
            _LIVE.append(started[-1][0])
        timers = []
        for proc, _out, _err in started:
            timer = threading.Timer(timeout_s, _kill_group, (proc, timed_out))
            timer.daemon = True
            timer.start()
            timers.append(timer)
        codes = []
        peak = 0
        for proc, out, err in started:
            code, maxrss = _reap(proc)
            codes.append(code)
            peak = max(peak, maxrss)
            out.close()
            err.close()
        wall_ms = (time.perf_counter() - t0) * 1000.0
        for timer in timers:
            timer.cancel()
        del _LIVE[:]
        runs.append(
            {
                "wall_ms": wall_ms,
                "exit_codes": codes,
                "max_rss_kib": peak,
                "timed_out": timed_out[0],
            }
        )
        if timed_out[0]:
            break
    return {"runs": runs}


def main() -> int:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop)
    job = json.loads(sys.stdin.read())
    report = run_job(job)
    sys.stdout.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
