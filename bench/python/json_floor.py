"""The Python half of the JSON floor: times ``json.dumps`` and ``json.loads`` of one large ASCII string.

Usage: ``json_floor.py <size_bytes> <reps>``. Prints one JSON line with every sample in milliseconds.
Standard library only; runs on Python 3.9+.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    size = int(sys.argv[1])
    reps = int(sys.argv[2])
    value = "x" * size
    encode_ms = []
    decode_ms = []
    for _ in range(reps):
        t0 = time.perf_counter()
        encoded = json.dumps(value)
        t1 = time.perf_counter()
        decoded = json.loads(encoded)
        t2 = time.perf_counter()
        if len(decoded) != size:
            raise SystemExit("json_floor: decoded %d characters, expected %d" % (len(decoded), size))
        encode_ms.append((t1 - t0) * 1000.0)
        decode_ms.append((t2 - t1) * 1000.0)
    sys.stdout.write(json.dumps({"encode_ms": encode_ms, "decode_ms": decode_ms}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
