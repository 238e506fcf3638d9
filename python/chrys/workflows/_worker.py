"""The iCode workflow worker: the process that loads a workflow and invokes its callables for the engine.

Started by ``@icode/python-bridge`` as ``python <sdk root>/chrys/workflows/_worker.py`` (or through the
bootstrap ``<sdk root>/icode_worker.py``) with the workspace as its working directory and
``PYTHONPYCACHEPREFIX`` set to the engine's cache folder. The protocol travels over two extra pipes, file
descriptors 3 (engine → worker) and 4 (worker → engine), which the worker moves to private, non-inheritable
descriptors at once, so nothing user code does to file descriptors 0–4 can reach the channel. Standard input
reads end-of-file; ``sys.stdout``/``sys.stderr`` are routed to per-load and per-call captures; descriptors 1
and 2 stay the engine's pipes and carry the run's ``native`` output. See ``docs/protocol.md``.

``--load-only`` says the engine will only load the workflow and shut the worker down (``icode workflow
validate``): the worker then does not prepare for calls while the engine reads the load result (it would
still serve them, preparing at the first).
"""

from __future__ import annotations

import os
import sys

_SDK_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _take_fds() -> tuple:
    """Moves the protocol pipes from fds 3/4 to private non-inheritable fds and points fd 0 at /dev/null."""
    try:
        channel_in = os.dup(3)
        channel_out = os.dup(4)
    except OSError:
        sys.stderr.write(
            "chrys.workflows worker: file descriptors 3 and 4 must be the protocol pipes; "
            "this program is started by iCode, not by hand\n"
        )
        sys.stderr.flush()
        os._exit(2)
    os.close(3)
    os.close(4)
    devnull = os.open(os.devnull, os.O_RDONLY)
    if devnull != 0:
        os.dup2(devnull, 0)
        os.close(devnull)
    os.set_blocking(channel_in, True)
    os.set_blocking(channel_out, True)
    return channel_in, channel_out


def _fix_sys_path(own_dirs: tuple) -> None:
    """Drops the script's own folder and '' from the front of ``sys.path`` and puts the SDK root first."""
    own = {os.path.normcase(os.path.abspath(path)) for path in own_dirs}
    while sys.path and (sys.path[0] in ("", ".") or os.path.normcase(os.path.abspath(sys.path[0])) in own):
        del sys.path[0]
    sys.path.insert(0, _SDK_ROOT)


def bootstrap(own_dirs: tuple = ()) -> None:
    """The worker's ``main``: take the fds, fix ``sys.path``, then serve the protocol until shutdown."""
    load_only = "--load-only" in sys.argv[1:]
    fds = _take_fds()
    _fix_sys_path(own_dirs + (os.path.dirname(os.path.abspath(__file__)), _SDK_ROOT))
    from chrys.workflows._serve import serve

    serve(fds[0], fds[1], _SDK_ROOT, prepare_calls=not load_only)


if __name__ == "__main__":
    bootstrap()
