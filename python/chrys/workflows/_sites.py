"""Where the author called the SDK: the first stack frame outside the ``chrys.workflows`` package.

A site is ``{"file", "line", "column", "end_line", "end_column"}`` with 1-based lines and columns; the
columns count characters (not UTF-8 bytes) and ``end_column`` is the column just after the call's last
character. Columns and ``end_line`` are only known on Python 3.11 and later (``co_positions``); before that
they are ``None``.
"""

from __future__ import annotations

import linecache
import os
import sys
from types import CodeType, FrameType
from typing import Any, Dict, List, Optional, Tuple

from ._errors import Site

MAX_SITES = 10_000
"""At most this many declaration sites are kept per workflow; past that they are ``None``."""

_SDK_DIR = os.path.normcase(os.path.dirname(os.path.abspath(__file__))) + os.sep
_HAS_POSITIONS = sys.version_info >= (3, 11)

_in_sdk_cache: Dict[str, bool] = {}
# The positions of the last code object asked about: declarations mostly come from one module's code, and
# listing a large module's positions once per declaration would cost O(declarations x code size).
_positions_cache: List[Any] = [None, None]


def _is_sdk_file(filename: str) -> bool:
    known = _in_sdk_cache.get(filename)
    if known is None:
        known = os.path.normcase(os.path.abspath(filename)).startswith(_SDK_DIR)
        _in_sdk_cache[filename] = known
    return known


def caller_frame() -> Optional[FrameType]:
    """The innermost frame whose code lives outside this package, or ``None`` if there is none."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None and _is_sdk_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _display_path(filename: str) -> str:
    if filename.startswith("<") and filename.endswith(">"):
        return filename  # "<string>", "<stdin>": no file to point at
    return os.path.abspath(filename)


def _positions(code: CodeType) -> List[Tuple[Optional[int], Optional[int], Optional[int], Optional[int]]]:
    if _positions_cache[0] is not code:
        _positions_cache[0] = code
        _positions_cache[1] = list(code.co_positions())  # type: ignore[attr-defined]
    positions: List[Tuple[Optional[int], Optional[int], Optional[int], Optional[int]]] = _positions_cache[1]
    return positions


def _char_column(filename: str, line: int, byte_offset: int, frame: FrameType) -> int:
    """Turns a 0-based UTF-8 byte offset on ``line`` into a 0-based character offset."""
    text = linecache.getline(filename, line, frame.f_globals)
    if not text or text.isascii():
        return byte_offset
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace"))


def site_of(frame: FrameType) -> Site:
    """The site of the call ``frame`` is executing."""
    code = frame.f_code
    filename = code.co_filename
    line: int = frame.f_lineno or 1
    column: Optional[int] = None
    end_line: Optional[int] = None
    end_column: Optional[int] = None
    if _HAS_POSITIONS and frame.f_lasti >= 0:
        positions = _positions(code)
        index = frame.f_lasti // 2
        if index < len(positions):
            start, end, col, end_col = positions[index]
            if start is not None:
                line = start
                end_line = end
                if col is not None:
                    column = _char_column(filename, start, col, frame) + 1
                if end is not None and end_col is not None:
                    end_column = _char_column(filename, end, end_col, frame) + 1
                if end_line is None or end_line < line:
                    end_line = None
                    end_column = None
    return {
        "file": _display_path(filename),
        "line": max(line, 1),
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
    }


def call_site() -> Optional[Site]:
    """The site of the author's call into the SDK (``None`` only when no frame is outside the SDK)."""
    frame = caller_frame()
    return site_of(frame) if frame is not None else None


class SiteBudget:
    """Hands out at most :data:`MAX_SITES` sites; past that it hands out ``None`` and remembers it did."""

    __slots__ = ("used", "truncated")

    def __init__(self) -> None:
        self.used = 0
        self.truncated = False

    def take(self, site: Optional[Site]) -> Optional[Site]:
        if site is None:
            return None
        if self.used >= MAX_SITES:
            self.truncated = True
            return None
        self.used += 1
        return site
