"""The Python side of the raw round-trip floor: reads JSON lines on stdin and answers each with one line.

Each request ``{"id": n, "value": ...}`` is decoded and answered with ``{"id": n, "value": ...}``, flushed at
once, which is the least any line-based Node-to-Python worker protocol does per message. Standard library
only; runs on Python 3.9+.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    readline = sys.stdin.buffer.readline
    write = sys.stdout.buffer.write
    flush = sys.stdout.buffer.flush
    loads = json.loads
    dumps = json.dumps
    while True:
        line = readline()
        if not line:
            return 0
        message = loads(line)
        write(dumps({"id": message["id"], "value": message["value"]}).encode("utf-8") + b"\n")
        flush()


if __name__ == "__main__":
    sys.exit(main())
