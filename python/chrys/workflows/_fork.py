"""A copy of the worker made by ``os.fork()`` in user code (without exec) must never answer on the channel."""

from __future__ import annotations

import os


class Fork:
    """Set in a process forked (without exec) by user code: it must leave as soon as it is back in ours."""

    child = False


def _forked_child() -> None:
    Fork.child = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked_child)


def leave_if_forked() -> None:
    if Fork.child:
        os._exit(0)  # a forked copy of the worker has nothing to answer and must not touch the channel
