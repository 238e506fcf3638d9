"""Where ``print()`` goes inside the worker: per-load and per-call captures, routed with ``contextvars``.

The worker replaces ``sys.stdout`` and ``sys.stderr`` with :class:`RoutedStream` objects. A write goes to the
capture of the current context (set per call, so concurrent calls each keep their own output); with none, to
the :data:`fallback` capture (the load capture while loading: threads started by top-level code have no
context of their own); with neither, straight to file descriptor 1 or 2, which the engine keeps as the run's
``native`` output. File-descriptor writes (``os.write(1, …)``, C code, child processes) never pass here.
"""

from __future__ import annotations

import io
import os
from contextvars import ContextVar
from typing import Any, Callable, Dict, List, Optional, Protocol

from ._protocol import CAPTURE_LIMIT_BYTES


class Writer(Protocol):
    """Where routed text goes: a :class:`Capture`, or a call that makes its capture on the first write."""

    def write(self, text: str) -> Any: ...


current: ContextVar[Optional[Writer]] = ContextVar("chrys_workflows_capture", default=None)


class Capture:
    """The first ``limit`` bytes (UTF-8) of everything written, with a ``truncated`` flag.

    Once :meth:`close` is called every later write is dropped: a cancelled or timed-out call keeps only what
    it wrote before it ended. ``on_text`` sees each kept piece as it arrives (the load output is streamed).
    """

    __slots__ = ("_parts", "_size", "_limit", "truncated", "closed", "on_text")

    def __init__(self, limit: int = CAPTURE_LIMIT_BYTES, on_text: Optional[Callable[[str], None]] = None) -> None:
        self._parts: List[str] = []
        self._size = 0
        self._limit = limit
        self.truncated = False
        self.closed = False
        self.on_text = on_text

    def write(self, text: str) -> None:
        if self.closed or self.truncated or not text:
            return
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = text.encode("utf-8", "replace")
            text = data.decode("utf-8")
        room = self._limit - self._size
        if len(data) > room:
            # Cut on a character boundary: drop a partial UTF-8 sequence at the end.
            text = data[:room].decode("utf-8", "ignore")
            self.truncated = True
            if not text:
                return
            data = text.encode("utf-8")
        self._parts.append(text)
        self._size += len(data)
        if self.on_text is not None:
            self.on_text(text)

    def close(self) -> None:
        self.closed = True

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def result(self) -> Dict[str, Any]:
        """``{"text", "truncated"}`` as the protocol carries it."""
        return {"text": self.text, "truncated": self.truncated}


class _Fallback:
    capture: Optional[Capture] = None


fallback = _Fallback()
"""``fallback.capture`` receives writes made outside any call context (the load capture while loading)."""


def _write_fd(fd: int, data: bytes) -> None:
    try:
        while data:
            written = os.write(fd, data)
            data = data[written:]
    except OSError:
        pass


def route(text: str, fd: int) -> None:
    capture: Optional[Writer] = current.get()
    if capture is None:
        capture = fallback.capture
    if capture is not None:
        capture.write(text)
    else:
        _write_fd(fd, text.encode("utf-8", "replace"))


class _RoutedBuffer(io.RawIOBase):
    """``sys.stdout.buffer``: bytes are decoded as UTF-8 (bad bytes replaced) and routed like text."""

    def __init__(self, fd: int, name: str) -> None:
        super().__init__()
        self._fd = fd
        self.name = name

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        route(bytes(view).decode("utf-8", "replace"), self._fd)
        return len(view)

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def close(self) -> None:
        pass  # shared by every call: one node closing it must not silence the others


class RoutedStream(io.TextIOBase):
    """Replaces ``sys.stdout``/``sys.stderr``: text goes to the current capture (see the module docstring)."""

    def __init__(self, fd: int, name: str) -> None:
        super().__init__()
        self._fd = fd
        self._name = name
        self._buffer = _RoutedBuffer(fd, name)

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "replace"

    @property
    def name(self) -> str:
        return self._name

    @property
    def buffer(self) -> _RoutedBuffer:  # type: ignore[override]
        return self._buffer

    @property
    def line_buffering(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def write(self, text: str) -> int:  # type: ignore[override]
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        route(text, self._fd)
        return len(text)

    def writelines(self, lines: Any) -> None:  # type: ignore[override]
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def close(self) -> None:
        pass  # shared by every call: one node closing it must not silence the others

    @property
    def closed(self) -> bool:  # type: ignore[override]
        return False
