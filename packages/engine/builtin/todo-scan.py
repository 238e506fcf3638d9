"""TODO scan: finds TODO, FIXME, XXX and HACK markers in the files under a directory, with file:line.

Input: the path of a directory (or of a single file) to scan, on one line. A relative path is resolved
against the session's working directory, ``~`` against the home directory, and an empty input scans the
working directory itself. Surrounding quotes are removed.

Every text file under the directory is read, in name order, skipping:

- hidden files and folders (names starting with ``.``, such as ``.git``) and the usual generated folders:
  ``node_modules``, ``__pycache__``, ``venv``, ``site-packages``, ``dist``, ``build``, ``target``,
  ``coverage``;
- links (never followed), special files such as named pipes, binary files (a NUL byte in the first 8 KiB)
  and files over 1 MiB.

The scan is bounded: at most 10,000 files and 64 MiB are read (and 100,000 files looked at), and 500
markers are listed (all are counted); the output says when a limit was reached. A marker is a whole word in
capitals anywhere in a line (so also in strings, unless it is quoted on its own), optionally followed by an
owner and a colon: ``TODO(ana): text``. A line counts once, for its first marker.

``data`` holds ``{"root", "kind", "counts": {"TODO": n, ...}, "total", "findings": [{"file", "line",
"marker", "owner", "text"}], "files_scanned", "files_with_markers", "bytes_scanned", "skipped": {"large",
"binary", "unreadable", "special", "unlistable_folders"}, "limits_reached": [...]}``. A path that does not
exist or cannot be read fails the run: the ``explain`` node raises ``ValueError`` saying what is wrong with
it and how to fix it.

Example::

    icode workflow run todo-scan --input "src"
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any, Dict, Iterator, List, NoReturn, Optional, Tuple

from chrys.workflows import NodeContext, WorkflowBuilder, WorkflowValue

MAX_FILES = 10_000
"""Files read at most."""
MAX_VISITED = 100_000
"""Directory entries looked at at most, read or skipped."""
MAX_FILE_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_FINDINGS = 500
TEXT_CHARS = 200
MARKERS = ("TODO", "FIXME", "XXX", "HACK")
SKIPPED_DIRS = frozenset(
    ("node_modules", "__pycache__", "venv", "site-packages", "dist", "build", "target", "coverage")
)

_QUOTES = "\"'`"
_MARKER = re.compile(r"\b(TODO|FIXME|XXX|HACK)\b(?:\(([^)\n]{1,40})\))?[:\-\s]*(.*)")

wf = WorkflowBuilder(
    "TODO scan",
    description=(
        "Lists the TODO, FIXME, XXX and HACK markers in the text files under a directory (default: the "
        "working directory) with file:line, skipping hidden, generated, binary and very large files."
    ),
)


def _printable(text: str) -> str:
    """Text that is valid Unicode: file names that are not UTF-8 keep a visible replacement character."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def locate(value: WorkflowValue) -> WorkflowValue:
    """Resolves the input path against the working directory and checks that it can be scanned."""
    lines = [line.strip() for line in value.text.splitlines() if line.strip()]
    if len(lines) > 1:
        return _problem(
            value.text,
            f"The input has {len(lines)} lines; expected one path (a directory or a file).",
            "Scan one path per run, or scan a common parent directory.",
        )
    given = lines[0] if lines else "."
    if len(given) >= 2 and given[0] == given[-1] and given[0] in "\"'":
        given = given[1:-1].strip() or "."
    if "\0" in given:
        return _problem(value.text, "The path contains a NUL character.", "Pass a real path.")
    root = os.path.abspath(os.path.join(os.getcwd(), os.path.expanduser(given)))
    shown = _printable(root)
    if shown != root:
        return _problem(
            given,
            f"The path {shown} is not valid UTF-8, so it cannot be passed between workflow nodes.",
            "Scan a parent directory whose path is valid UTF-8.",
        )
    try:
        info = os.stat(root)
    except FileNotFoundError:
        return _problem(
            given,
            f"No such directory or file: {shown}",
            f"Relative paths are resolved against the working directory {_printable(os.getcwd())}; check "
            "the spelling, or pass an absolute path.",
        )
    except OSError as error:
        return _problem(given, f"Cannot read {shown}: {error.strerror or error}.", "Check the permissions.")
    if stat.S_ISDIR(info.st_mode):
        kind = "directory"
        if not os.access(root, os.R_OK | os.X_OK):
            return _problem(given, f"Cannot list the directory {shown}: permission denied.", "Check the permissions.")
    elif stat.S_ISREG(info.st_mode):
        kind = "file"
    else:
        return _problem(
            given, f"{shown} is neither a directory nor a regular file.", "Pass a directory or a text file."
        )
    return WorkflowValue(text=root, data={"ok": True, "root": shown, "kind": kind, "given": given})


def _problem(given: str, message: str, hint: str) -> WorkflowValue:
    return WorkflowValue(
        text=given, data={"ok": False, "root": None, "given": _printable(given), "error": message, "hint": hint}
    )


def can_scan(value: WorkflowValue) -> bool:
    return isinstance(value.data, dict) and value.data.get("ok") is True


def _walk(root: str, failed: List[OSError]) -> Iterator[Tuple[str, str]]:
    """``(absolute path, path relative to root with '/')`` of every candidate file, in name order; folders
    that cannot be listed are added to ``failed``."""
    for folder, dirs, files in os.walk(root, onerror=failed.append):
        dirs[:] = sorted(name for name in dirs if not name.startswith(".") and name not in SKIPPED_DIRS)
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)
            yield path, os.path.relpath(path, root).replace(os.sep, "/")


class _Scan:
    def __init__(self) -> None:
        self.findings: List[Dict[str, Any]] = []
        self.counts: Dict[str, int] = {marker: 0 for marker in MARKERS}
        self.files_scanned = 0
        self.files_with_markers = 0
        self.bytes_scanned = 0
        self.skipped = {"large": 0, "binary": 0, "unreadable": 0, "special": 0, "unlistable_folders": 0}
        self.limits: List[str] = []

    def read(self, path: str) -> Optional[str]:
        """The file's text, or ``None`` (counted as skipped) for links, special, large, binary or unreadable files."""
        try:
            info = os.lstat(path)
        except OSError:
            self.skipped["unreadable"] += 1
            return None
        if not stat.S_ISREG(info.st_mode):  # links, pipes, sockets, devices: never opened
            self.skipped["special"] += 1
            return None
        if info.st_size > MAX_FILE_BYTES:
            self.skipped["large"] += 1
            return None
        try:
            flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
            descriptor = os.open(path, flags)
            with os.fdopen(descriptor, "rb") as handle:
                content = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            self.skipped["unreadable"] += 1
            return None
        if len(content) > MAX_FILE_BYTES:
            self.skipped["large"] += 1
            return None
        if b"\0" in content[:8192]:
            self.skipped["binary"] += 1
            return None
        self.files_scanned += 1
        self.bytes_scanned += len(content)
        return content.decode("utf-8", "replace")

    def search(self, relative: str, text: str) -> None:
        found = False
        for number, line in enumerate(text.splitlines(), 1):
            if not any(marker in line for marker in MARKERS):
                continue
            for match in _MARKER.finditer(line):
                before, after = line[match.start() - 1 : match.start()], line[match.end(1) : match.end(1) + 1]
                if before and before in _QUOTES and after == before:
                    continue  # "TODO" in quotes names the marker (as in this file); it is not one
                marker = match.group(1)
                self.counts[marker] += 1
                found = True
                if len(self.findings) >= MAX_FINDINGS:
                    continue
                note = match.group(3).strip()
                if len(note) > TEXT_CHARS:
                    note = note[: TEXT_CHARS - 1] + "\u2026"
                self.findings.append(
                    {
                        "file": _printable(relative),
                        "line": number,
                        "marker": marker,
                        "owner": match.group(2).strip() if match.group(2) else None,
                        "text": note,
                    }
                )
                break  # one finding per line: the first marker, with the rest of the line as its text
        if found:
            self.files_with_markers += 1


def scan(value: WorkflowValue, ctx: NodeContext) -> WorkflowValue:
    """Reads the files under the located root, within the limits, and collects the markers."""
    root = value.text
    ctx.emit(f"scanning {_printable(root)}")
    result = _Scan()
    failed: List[OSError] = []
    if value.data.get("kind") == "file":  # named on purpose: a link to a file is read too
        candidates: Iterator[Tuple[str, str]] = iter([(os.path.realpath(root), os.path.basename(root))])
    else:
        candidates = _walk(root, failed)
    for visited, (path, relative) in enumerate(candidates):
        if visited >= MAX_VISITED:
            result.limits.append(f"stopped after looking at {MAX_VISITED:,} files")
            break
        if result.files_scanned >= MAX_FILES:
            result.limits.append(f"stopped after {MAX_FILES:,} files")
            break
        if result.bytes_scanned >= MAX_TOTAL_BYTES:
            result.limits.append(f"stopped after reading {MAX_TOTAL_BYTES // (1024 * 1024)} MiB")
            break
        text = result.read(path)
        if text is not None:
            result.search(relative, text)
            if result.files_scanned % 1000 == 0:
                ctx.emit(f"{result.files_scanned:,} files scanned")
    result.skipped["unlistable_folders"] = len(failed)
    total = sum(result.counts.values())
    if total > len(result.findings):
        result.limits.append(f"listed the first {len(result.findings):,} of {total:,} markers")
    data = {
        "root": value.data["root"],
        "kind": value.data["kind"],
        "counts": result.counts,
        "total": total,
        "findings": result.findings,
        "files_scanned": result.files_scanned,
        "files_with_markers": result.files_with_markers,
        "bytes_scanned": result.bytes_scanned,
        "skipped": result.skipped,
        "limits_reached": result.limits,
    }
    return WorkflowValue(text=f"{total} markers in {result.files_with_markers} files", data=data)


_SKIPPED_LABELS = {
    "large": "over 1 MiB",
    "binary": "binary",
    "unreadable": "unreadable",
    "special": "links or special files",
    "unlistable_folders": "folders that could not be listed",
}


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def report(value: WorkflowValue) -> WorkflowValue:
    """The findings as ``file:line: MARKER text`` lines under a one-line summary."""
    data = value.data
    scanned = _plural(data["files_scanned"], "file")
    where = f"in {data['root']}" if data.get("kind") == "file" else f"under {data['root']}"
    if data["total"]:
        by_marker = ", ".join(f"{marker} {count:,}" for marker, count in data["counts"].items() if count)
        rows = [
            f"Found {_plural(data['total'], 'marker')} in {_plural(data['files_with_markers'], 'file')} "
            f"{where} ({scanned} scanned): {by_marker}"
        ]
    else:
        rows = [f"No TODO, FIXME, XXX or HACK markers {where} ({scanned} scanned)."]
    for finding in data["findings"]:
        owner = f"({finding['owner']})" if finding["owner"] else ""
        text = f" {finding['text']}" if finding["text"] else ""
        rows.append(f"{finding['file']}:{finding['line']}: {finding['marker']}{owner}{text}")
    skipped = ", ".join(
        f"{count:,} {_SKIPPED_LABELS.get(reason, reason)}" for reason, count in data["skipped"].items() if count
    )
    if skipped:
        rows.append(f"Skipped: {skipped}.")
    for limit in data["limits_reached"]:
        rows.append(f"Limit reached: {limit}.")
    return WorkflowValue(text="\n".join(rows), data=data)


def explain(value: WorkflowValue) -> NoReturn:
    """Fails the run when nothing can be scanned, saying what is wrong with the path and how to fix it."""
    data = value.data if isinstance(value.data, dict) else {}
    error = data.get("error") or "The input is not a path that can be scanned."
    hint = data.get("hint") or "Pass the path of a directory, for example: icode workflow run todo-scan --input src"
    raise ValueError(f"{error} {hint}")


start = wf.python("locate", locate, timeout=30)
scanner = wf.python("scan", scan, timeout=180)
listing = wf.python("report", report, timeout=60)
problem = wf.python("explain", explain, timeout=30)
wf.switch(start, [(can_scan, scanner)], default=problem)
wf.edge(scanner, listing)
wf.start(start)
wf.output(listing)
workflow = wf.build()
