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
from typing import Dict, List, Optional, Tuple

from ._errors import Site

MAX_SITES = 10_000
"""At most this many declaration sites are kept per workflow; past that they are ``None``."""

_SDK_DIR = os.path.normcase(os.path.dirname(os.path.abspath(__file__))) + os.sep
_HAS_POSITIONS = sys.version_info >= (3, 11)

_in_sdk_cache: Dict[str, bool] = {}


class _CodeSites:
    """What is known of one code object: its instruction positions (listed once) and the sites of its calls.

    A site depends only on the code object and the instruction (``f_lasti``), so a declaration made in a loop
    (``[wf.python(f"n{i}", fn) for i in range(10_000)]``) computes it once instead of resolving the path and
    reading the source line each time. Positions are kept per code object, so declarations alternating
    between two functions do not list a large module's positions again at each call.
    """

    __slots__ = ("code", "positions", "sites")

    def __init__(self, code: CodeType) -> None:
        self.code = code  # keeps the code alive, so its id() stays this entry's
        self.positions: Optional[List[Tuple[Optional[int], Optional[int], Optional[int], Optional[int]]]] = None
        self.sites: Dict[int, Site] = {}


_MAX_CACHED_CODES = 1024
"""Bounds ``_code_sites`` for processes that build many workflows from generated code; past it, start over."""
_code_sites: Dict[int, _CodeSites] = {}


def _is_sdk_file(filename: str) -> bool:
    known = _in_sdk_cache.get(filename)
    if known is None:
        known = os.path.normcase(os.path.abspath(filename)).startswith(_SDK_DIR)
        _in_sdk_cache[filename] = known
    return known


def caller_frame() -> Optional[FrameType]:
    """The innermost frame whose code lives outside this package, or ``None`` if there is none."""
    frame: Optional[FrameType] = sys._getframe(1)
    known = _in_sdk_cache  # read inline: this runs at every declaration
    while frame is not None:
        filename = frame.f_code.co_filename
        inside = known.get(filename)
        if inside is None:
            inside = _is_sdk_file(filename)
        if not inside:
            return frame
        frame = frame.f_back
    return None


def _display_path(filename: str) -> str:
    if filename.startswith("<") and filename.endswith(">"):
        return filename  # "<string>", "<stdin>": no file to point at
    return os.path.abspath(filename)


def _new_code_entry(code: CodeType) -> _CodeSites:
    if len(_code_sites) >= _MAX_CACHED_CODES:
        _code_sites.clear()
    entry = _code_sites[id(code)] = _CodeSites(code)
    return entry


def _char_column(filename: str, line: int, byte_offset: int, frame: FrameType) -> int:
    """Turns a 0-based UTF-8 byte offset on ``line`` into a 0-based character offset."""
    text = linecache.getline(filename, line, frame.f_globals)
    if not text or text.isascii():
        return byte_offset
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace"))


def site_of(frame: FrameType) -> Site:
    """The site of the call ``frame`` is executing (a new dict: the caller may keep or change it)."""
    code = frame.f_code
    entry = _code_sites.get(id(code))
    if entry is None:
        entry = _new_code_entry(code)
    lasti = frame.f_lasti
    site = entry.sites.get(lasti)
    if site is None:
        site = entry.sites[lasti] = _new_site(frame, entry)
    return dict(site)


def _new_site(frame: FrameType, entry: _CodeSites) -> Site:
    code = entry.code
    filename = code.co_filename
    line: int = frame.f_lineno or 1
    column: Optional[int] = None
    end_line: Optional[int] = None
    end_column: Optional[int] = None
    if _HAS_POSITIONS and frame.f_lasti >= 0:
        positions = entry.positions
        if positions is None:
            positions = entry.positions = list(code.co_positions())  # type: ignore[attr-defined]
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
