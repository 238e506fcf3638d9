"""Bootstrap of the iCode workflow worker: ``python icode_worker.py`` from the SDK root.

Equivalent to running ``chrys/workflows/_worker.py``; see that module and ``docs/protocol.md``.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, _here)
    from chrys.workflows._worker import bootstrap

    bootstrap((_here,))
