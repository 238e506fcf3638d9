"""Exceptions as the author should see them: only the frames of their own files, positions, and notes.

"Own files" are every file that is not part of the standard library, of installed packages (site-packages,
dist-packages) or of the SDK, plus everything inside the workflow's folder. Positions are 1-based; columns
count characters and ``end_column`` is the column just after the last character (as in the builder's sites);
they are known only on Python 3.11 and later and ``None`` before.
"""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from ._names import public_name, publish_traceback

if TYPE_CHECKING:
    import traceback

# ``traceback`` (with ``textwrap``) is imported where a traceback is read: only failures need it, and a
# worker that fails nothing then starts ~1 ms sooner.

HAS_COLUMNS = sys.version_info >= (3, 11)


def _norm(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class UserFiles:
    """Decides which files are the author's; answers are cached per file name."""

    def __init__(self, sdk_root: str, workflow_dir: Optional[str] = None) -> None:
        self.workflow_dir = _norm(workflow_dir) if workflow_dir else None
        excluded = {_norm(os.path.join(sdk_root, "chrys")), _norm(os.path.join(sdk_root, "icode_worker.py"))}
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            path = sysconfig.get_paths().get(key)
            if path:
                excluded.add(_norm(path))
        excluded.add(_norm(os.path.dirname(os.__file__)))
        try:
            import site

            for path in site.getsitepackages() + [site.getusersitepackages()]:
                excluded.add(_norm(path))
        except Exception:  # site may be stripped down in embedded interpreters
            pass
        self._excluded = sorted(excluded)
        self._cache: Dict[str, bool] = {}

    def __contains__(self, filename: object) -> bool:
        if not isinstance(filename, str):
            return False
        known = self._cache.get(filename)
        if known is None:
            known = self._decide(filename)
            self._cache[filename] = known
        return known

    def _decide(self, filename: str) -> bool:
        if not filename or (filename.startswith("<") and filename.endswith(">")):
            return False
        path = _norm(filename)
        parts = path.split(os.sep)
        installed = "site-packages" in parts or "dist-packages" in parts
        if self.workflow_dir is not None and _under(path, self.workflow_dir):
            # The folder's own files, except an environment kept inside it (`.venv/`, names with a dot).
            inner = path[len(self.workflow_dir) :].split(os.sep)
            return not any(part.startswith(".") for part in inner) and (
                not installed or "site-packages" in self.workflow_dir.split(os.sep)
            )
        if any(_under(path, root) for root in self._excluded):
            return False
        return not installed


def _char_offset(line_text: str, byte_offset: int) -> int:
    if line_text.isascii():
        return byte_offset
    return len(line_text.encode("utf-8")[:byte_offset].decode("utf-8", "replace"))


def source_line(filename: str, line: Optional[int]) -> Optional[str]:
    """The text of ``line`` without its line ending, or ``None`` when the file cannot be read."""
    if not line:
        return None
    text = linecache.getline(filename, line)
    if not text:
        return None
    return text.rstrip("\r\n")


class Position:
    """A place in a file; ``name`` is the code object's name (``<module>`` for a module body)."""

    __slots__ = ("file", "line", "column", "end_line", "end_column", "name")

    def __init__(
        self,
        file: str,
        line: Optional[int],
        column: Optional[int] = None,
        end_line: Optional[int] = None,
        end_column: Optional[int] = None,
        name: str = "<module>",
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column
        self.name = name

    @classmethod
    def of_frame(cls, frame: traceback.FrameSummary) -> Position:
        filename = os.path.abspath(frame.filename)
        line = frame.lineno
        column = end_line = end_column = None
        if HAS_COLUMNS:
            colno = getattr(frame, "colno", None)
            end_colno = getattr(frame, "end_colno", None)
            end_lineno = getattr(frame, "end_lineno", None)
            text = linecache.getline(frame.filename, line) if line else ""
            if colno is not None and text:
                column = _char_offset(text, colno) + 1
                if end_lineno is not None and end_colno is not None and end_lineno >= (line or 0):
                    end_text = text if end_lineno == line else linecache.getline(frame.filename, end_lineno)
                    end_line = end_lineno
                    end_column = _char_offset(end_text, end_colno) + 1
        return cls(filename, line, column, end_line, end_column, frame.name)

    @classmethod
    def of_syntax_error(cls, error: SyntaxError, fallback_file: str) -> Position:
        filename = os.path.abspath(error.filename) if error.filename else fallback_file
        line = error.lineno if isinstance(error.lineno, int) and error.lineno >= 1 else None
        column = end_line = end_column = None
        if HAS_COLUMNS and line is not None and isinstance(error.offset, int) and error.offset >= 1:
            column = error.offset
            end_lineno = getattr(error, "end_lineno", None)
            end_offset = getattr(error, "end_offset", None)
            if isinstance(end_lineno, int) and isinstance(end_offset, int) and end_offset >= 1:
                if end_lineno > line or (end_lineno == line and end_offset > column):
                    end_line, end_column = end_lineno, end_offset
        return cls(filename, line, column, end_line, end_column, "<module>")


def user_frames(tb: Any, user: UserFiles) -> List[traceback.FrameSummary]:
    """The frames of ``tb`` (outermost first) that run the author's own files."""
    import traceback

    return [frame for frame in traceback.extract_tb(tb) if frame.filename in user]


def notes_for(frames: Sequence[Position], inner: Position) -> List[Dict[str, Any]]:
    """How ``inner`` was reached from ``frames`` (outermost first, all outer to it), innermost first: ``imported
    from`` where a module body imports another module, else ``called from``."""
    notes: List[Dict[str, Any]] = []
    below = inner
    for frame in reversed(frames):
        verb = "imported from" if frame.name == "<module>" and below.name == "<module>" else "called from"
        notes.append({"message": verb, "file": frame.file, "line": frame.line})
        below = frame
    return notes


def _filter_chain(te: traceback.TracebackException, user: UserFiles, seen: set) -> None:
    import traceback

    if id(te) in seen:
        return
    seen.add(id(te))
    te.stack = traceback.StackSummary.from_list([frame for frame in te.stack if frame.filename in user])
    for linked in (te.__cause__, te.__context__):
        if linked is not None:
            _filter_chain(linked, user, seen)
    for inner in getattr(te, "exceptions", None) or ():
        _filter_chain(inner, user, seen)


def format_user_traceback(error: BaseException, user: UserFiles) -> str:
    """The traceback of ``error`` (and the exceptions chained to it) with only the author's frames."""
    import traceback

    try:
        te = traceback.TracebackException(type(error), error, error.__traceback__)
        _filter_chain(te, user, set())
        return publish_traceback("".join(te.format()), error)
    except Exception:  # a broken __str__ or __repr__ must not hide the failure itself
        return publish_traceback("".join(traceback.format_exception_only(type(error), error)), error)


def report_internal_error() -> None:
    """Writes the exception being handled to fd 2, for a failure of the worker's own code it goes on after."""
    import traceback

    try:
        os.write(2, ("chrys.workflows worker: " + traceback.format_exc()).encode("utf-8", "replace"))
    except OSError:
        pass


def describe(error: BaseException) -> str:
    """``NameError: name 'x' is not defined``; ``module.Name: …`` for exceptions outside builtins, and the
    SDK's own by their public names (``AskUnavailable: …``, see ``_names``)."""
    name = public_name(type(error))
    try:
        text = str(error)
    except Exception:
        text = "<exception str() failed>"
    return f"{name}: {text}" if text else name


def innermost_user_position(error: BaseException, user: UserFiles) -> tuple:
    """``(position or None, outer positions)`` of the innermost user frame of ``error``'s traceback."""
    frames = [Position.of_frame(frame) for frame in user_frames(error.__traceback__, user)]
    if not frames:
        return None, []
    return frames[-1], frames[:-1]
