"""Peer workloads on dask's threaded scheduler (in-process Python), on the same graph shapes as the engine.

Usage: ``dask_shapes.py <shape> <n> <reps> [<warm-up n> <warm-up runs> <warm-up budget ms>]`` with shape ``chain``, ``fanout``, ``loop``, ``value`` or
``concurrent``. Each sample times building the task graph (a dict, as dask's documentation describes for
custom graphs) plus ``dask.threaded.get``. dask has no loop construct: a loop of n iterations of a two-node
body is its unrolled chain of 2n tasks. Prints one JSON line with every sample in milliseconds. Needs dask;
otherwise standard library only, Python 3.9+.
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import dask
import dask.threaded

VALUE_PART = 4_177_920


def echo(value):
    return value


def make_big(_value):
    return {"text": "", "data": ["x" * VALUE_PART for _ in range(4)]}


def join(values):
    return "\n\n".join("## b%d\n%s" % (i, v) for i, v in enumerate(values))


def chain_graph(n: int, first=echo) -> tuple:
    dsk = {"n0": (first, "input")}
    for i in range(1, n):
        dsk["n%d" % i] = (echo, "n%d" % (i - 1))
    dsk["input"] = "x"
    return dsk, "n%d" % (n - 1)


def fanout_graph(n: int) -> tuple:
    dsk = {"input": "x", "src": (echo, "input")}
    for i in range(n):
        dsk["b%d" % i] = (echo, "src")
    dsk["sink"] = (join, ["b%d" % i for i in range(n)])
    return dsk, "sink"


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit("dask_shapes: " + what)


def check_fanout(result: str, n: int) -> None:
    check(result.startswith("## b0\nx") and len(result.split("\n\n")) == n, "fan-out result has the wrong sections")


def run_once(shape: str, n: int) -> None:
    if shape == "chain":
        check(dask.threaded.get(*chain_graph(n)) == "x", "chain did not return its input")
    elif shape == "loop":
        check(dask.threaded.get(*chain_graph(2 * n)) == "x", "loop did not return its input")
    elif shape == "fanout":
        check_fanout(dask.threaded.get(*fanout_graph(n)), n)
    elif shape == "value":
        result = dask.threaded.get(*chain_graph(n, first=make_big))
        check([len(part) for part in result["data"]] == [VALUE_PART] * 4, "large value came back changed")
    elif shape == "concurrent":
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(lambda _i: dask.threaded.get(*fanout_graph(n)), range(8)))
        for result in results:
            check_fanout(result, n)
    else:
        raise SystemExit("dask_shapes: unknown shape %r" % shape)


def main() -> int:
    shape, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    # The warm-up of every in-process subject (see warmupNodes in lib/suites.mjs): up to `runs` runs of the
    # same shape at `warm_n` nodes, stopping once `budget_ms` have passed.
    warm_n, runs, budget_ms = (int(arg) for arg in sys.argv[4:7]) if len(sys.argv) >= 7 else (min(n, 10), 1, 0)
    started = time.perf_counter()
    for run in range(runs):
        if run > 0 and (time.perf_counter() - started) * 1000.0 >= budget_ms:
            break
        run_once(shape, warm_n)
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run_once(shape, n)
        samples.append((time.perf_counter() - t0) * 1000.0)
    sys.stdout.write(json.dumps({"samples_ms": samples, "version": dask.__version__}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
