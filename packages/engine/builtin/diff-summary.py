"""Diff summary: summarises a unified diff and flags suspicious additions such as leftover debug prints.

Input: a unified diff, such as the output of ``git diff``, ``git show``, ``git format-patch`` or ``diff -u``
(``--input "$(git diff)"``). Text around the diff (a commit message, an email header) is ignored.

The output lists every changed file with its status (added, deleted, modified, renamed, copied or mode
changed, and whether it is binary) and its added and removed line counts, then the added lines that look
like a mistake, each with ``file:line`` in the new version:

- leftover debugging: ``print()`` in Python, ``console.log``/``debugger`` in JavaScript and TypeScript,
  ``breakpoint()``/``pdb``, ``dbg!``, ``binding.pry``, ``var_dump``;
- focused tests (``it.only``, ``describe.only``, ``fit``) that silently skip the rest of a suite;
- merge conflict markers;
- new TODO, FIXME, XXX and HACK markers;
- what looks like a secret: private keys, AWS access key IDs, GitHub tokens, and passwords or API keys
  written as string literals (shown masked).

``data`` holds ``{"files": [{"path", "old_path", "status", "added", "removed", "binary"}],
"files_not_listed", "totals": {"files", "added", "removed"}, "suspicious": [{"file", "line", "rule",
"label", "excerpt"}], "suspicious_total"}``; at most 500 files and 200 findings are listed, all are counted.
Input that holds no diff at all (or nothing) fails the run: the ``explain`` node raises ``ValueError`` saying
what was found and what to pass. Combined diffs of merge commits
(``diff --cc``) are not read.

Example::

    icode workflow run diff-summary --input "$(git diff HEAD~1)"
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, NoReturn, Optional, Pattern, Tuple

from chrys.workflows import SourceValue, WorkflowBuilder, WorkflowValue

MAX_FILES_LISTED = 500
MAX_FINDINGS = 200
EXCERPT_CHARS = 160

wf = WorkflowBuilder(
    "Diff summary",
    description=(
        "Summarises a unified diff (files, added and removed lines) and flags suspicious additions: "
        "leftover debug prints, focused tests, conflict markers, TODOs and likely secrets."
    ),
)

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r"^diff --git (.+)$")
_PYTHON = (".py", ".pyw", ".pyi")
_SCRIPT = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte")
_ALL: Tuple[str, ...] = ()

_Rule = Tuple[str, str, Pattern[str], Tuple[str, ...]]
_RULES: List[_Rule] = [
    ("secret", "private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"), _ALL),
    ("secret", "AWS access key ID", re.compile(r"\b(?P<secret>AKIA[0-9A-Z]{16})\b"), _ALL),
    ("secret", "GitHub token", re.compile(r"\b(?P<secret>gh[pousr]_[A-Za-z0-9]{36,})\b"), _ALL),
    (
        "secret",
        "hard-coded password or key",
        re.compile(
            r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\w*[\"']?\s*[:=]\s*"
            r"[\"'](?P<secret>[^\"'\s]{8,})[\"']"
        ),
        _ALL,
    ),
    ("conflict_marker", "merge conflict marker", re.compile(r"^(?:<{7}|>{7})(?: |$)"), _ALL),
    (
        "debugger",
        "debugger call",
        re.compile(r"\bbreakpoint\(\)|\b(?:i?pdb|pudb)\.set_trace\(|^\s*import i?pdb\b"),
        _PYTHON,
    ),
    ("debug_print", "print() call (leftover debug output?)", re.compile(r"^\s*print\("), _PYTHON),
    (
        "debug_print",
        "console logging (leftover debug output?)",
        re.compile(r"\bconsole\.(?:log|debug|trace|dir)\("),
        _SCRIPT,
    ),
    ("debugger", "debugger statement", re.compile(r"^\s*debugger\s*;?\s*$"), _SCRIPT),
    (
        "focused_test",
        "focused test (the rest of the suite is skipped)",
        re.compile(r"\b(?:it|describe|test|context|suite)\.only\(|^\s*f(?:it|describe)\("),
        _SCRIPT,
    ),
    ("debug_print", "dbg! macro", re.compile(r"\bdbg!\("), (".rs",)),
    ("debugger", "debugger call", re.compile(r"\bbinding\.(?:pry|irb)\b|^\s*byebug\b"), (".rb", ".erb")),
    ("debug_print", "var_dump() call", re.compile(r"\bvar_dump\("), (".php",)),
    ("todo", "new TODO marker", re.compile(r"\b(?:TODO|FIXME|XXX|HACK)\b"), _ALL),
]


def _strip_path(path: str, prefix: str) -> Optional[str]:
    """A path from a ``---``/``+++`` line: no timestamp, no ``a/``/``b/`` prefix, ``None`` for /dev/null."""
    path = path.split("\t", 1)[0].rstrip()
    if len(path) >= 2 and path.startswith('"') and path.endswith('"'):
        path = path[1:-1]
    if path == "/dev/null":
        return None
    if prefix and path.startswith(prefix):
        return path[len(prefix) :]
    return path


def _git_paths(rest: str) -> Tuple[str, str]:
    """The two paths of ``diff --git a/X b/Y``; an unrenamed path with spaces splits in the middle."""
    half = (len(rest) - 1) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[:half][2:] == rest[half + 1 :][2:]:
        return _strip_path(rest[:half], "a/") or "", _strip_path(rest[half + 1 :], "b/") or ""
    old, _, new = rest.partition(" b/")
    return _strip_path(old, "a/") or "", new


class _File:
    __slots__ = ("path", "old_path", "status", "added", "removed", "binary", "hunks", "git", "mode", "additions")

    def __init__(self, path: str, old_path: Optional[str], git: bool) -> None:
        self.path = path
        self.old_path = old_path
        self.status = "modified"
        self.added = 0
        self.removed = 0
        self.binary = False
        self.hunks = 0
        self.git = git
        self.mode = False
        self.additions: List[Tuple[int, str]] = []

    def data(self) -> Dict[str, Any]:
        return {
            "path": self.path,
            "old_path": self.old_path if self.old_path != self.path else None,
            "status": self.status,
            "added": self.added,
            "removed": self.removed,
            "binary": self.binary,
        }


def parse_diff(text: str) -> List[_File]:
    """The files of a unified diff, with their status, line counts and added lines (new line numbers).

    Hunks are read by their line counts, so a removed line that looks like a header (``--- x``) stays a
    removed line; lines outside files and hunks are ignored.
    """
    files: List[_File] = []
    current: Optional[_File] = None
    old_left = new_left = 0
    new_line = 0
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index].rstrip("\r")
        index += 1
        if old_left > 0 or new_left > 0:
            marker = line[:1]
            if marker in (" ", "") and current is not None:
                old_left -= 1
                new_left -= 1
                new_line += 1
                continue
            if marker == "-" and current is not None:
                old_left -= 1
                current.removed += 1
                continue
            if marker == "+" and current is not None:
                new_left -= 1
                current.added += 1
                current.additions.append((new_line, line[1:]))
                new_line += 1
                continue
            if marker == "\\":
                continue
            old_left = new_left = 0  # a cut-short hunk: read the line as a header
        git = _GIT_HEADER.match(line)
        if git is not None:
            old, new = _git_paths(git.group(1))
            current = _File(new, old, True)
            files.append(current)
            continue
        if line.startswith("--- ") and index < len(lines) and lines[index].startswith("+++ "):
            new_header = lines[index].rstrip("\r")
            index += 1
            is_git = current is not None and current.git and current.hunks == 0
            prefixed = line[4:].startswith("a/") and new_header[4:].startswith("b/")
            old_path = _strip_path(line[4:], "a/" if is_git or prefixed else "")
            new_path = _strip_path(new_header[4:], "b/" if is_git or prefixed else "")
            if not is_git:
                current = _File(new_path or old_path or "(unknown)", old_path, False)
                files.append(current)
            assert current is not None
            if old_path is None:
                current.status = "added"
                current.old_path = None
            if new_path is None:
                current.status = "deleted"
            else:
                current.path = new_path
            continue
        hunk = _HUNK.match(line)
        if hunk is not None:
            if current is None:
                current = _File("(unknown)", None, False)
                files.append(current)
            current.hunks += 1
            old_left = int(hunk.group(2)) if hunk.group(2) is not None else 1
            new_left = int(hunk.group(4)) if hunk.group(4) is not None else 1
            new_line = int(hunk.group(3))
            continue
        if current is None or not current.git:
            if line.startswith("Binary files ") and line.endswith(" differ"):
                current = _File(_binary_path(line), None, False)
                current.binary = True
                files.append(current)
            continue
        if line.startswith("new file mode"):
            current.status = "added"
            current.old_path = None
        elif line.startswith("deleted file mode"):
            current.status = "deleted"
        elif line.startswith("rename from ") or line.startswith("copy from "):
            current.old_path = line.split(" from ", 1)[1]
            current.status = "renamed" if line.startswith("rename") else "copied"
        elif line.startswith("rename to ") or line.startswith("copy to "):
            current.path = line.split(" to ", 1)[1]
        elif line.startswith("old mode"):
            current.mode = True
        elif line.startswith("Binary files ") or line == "GIT binary patch":
            current.binary = True
    for changed in files:
        if changed.mode and changed.status == "modified" and not changed.hunks and not changed.binary:
            changed.status = "mode changed"
    return files


def _binary_path(line: str) -> str:
    body = line[len("Binary files ") : -len(" differ")]
    old, _, new = body.partition(" and ")
    return _strip_path(new, "b/") or _strip_path(old, "a/") or "(unknown)"


def _mask(excerpt: str, matches: List["re.Match[str]"]) -> str:
    """The line with every secret a rule found in it shortened to its first four characters."""
    for match in matches:
        secret = match.groupdict().get("secret")
        if secret:
            excerpt = excerpt.replace(secret, secret[:4] + "*" * 8)
    return excerpt


def _findings(files: List[_File]) -> Tuple[List[Dict[str, Any]], int]:
    """Suspicious added lines, one finding per rule that matches (at most ``MAX_FINDINGS`` kept), and the total."""
    found: List[Dict[str, Any]] = []
    total = 0
    for changed in files:
        name = changed.path.lower()
        rules = [rule for rule in _RULES if not rule[3] or name.endswith(rule[3])]
        for number, content in changed.additions:
            hits = [(rule, match) for rule in rules for match in [rule[2].search(content)] if match is not None]
            if not hits:
                continue
            total += len(hits)
            excerpt = _mask(content.strip(), [match for _, match in hits])
            if len(excerpt) > EXCERPT_CHARS:
                excerpt = excerpt[: EXCERPT_CHARS - 1] + "\u2026"
            for (rule_id, label, _, _), _ in hits:
                if len(found) < MAX_FINDINGS:
                    found.append(
                        {"file": changed.path, "line": number, "rule": rule_id, "label": label, "excerpt": excerpt}
                    )
    return found, total


def parse(value: WorkflowValue) -> WorkflowValue:
    """Finds the files of the diff; ``text`` passes on unchanged for the branches that read the lines."""
    files = parse_diff(value.text)
    return WorkflowValue(
        text=value.text,
        data={
            "is_diff": bool(files),
            "empty": not value.text.strip(),
            "files": len(files),
        },
    )


def is_diff(value: WorkflowValue) -> bool:
    return isinstance(value.data, dict) and bool(value.data.get("is_diff"))


def summarise_files(value: WorkflowValue) -> WorkflowValue:
    files = parse_diff(value.text)
    listed = [changed.data() for changed in files[:MAX_FILES_LISTED]]
    totals = {
        "files": len(files),
        "added": sum(changed.added for changed in files),
        "removed": sum(changed.removed for changed in files),
    }
    return WorkflowValue(
        text=f"{totals['files']} files, +{totals['added']} -{totals['removed']}",
        data={"files": listed, "files_not_listed": len(files) - len(listed), "totals": totals},
    )


def find_suspicious(value: WorkflowValue) -> WorkflowValue:
    found, total = _findings(parse_diff(value.text))
    return WorkflowValue(
        text=f"{total} suspicious additions",
        data={"suspicious": found, "suspicious_total": total},
    )


def combine(sources: List[SourceValue]) -> WorkflowValue:
    """One record from both branches: the file list and totals, and the suspicious additions."""
    data: Dict[str, Any] = {
        "files": [],
        "files_not_listed": 0,
        "totals": None,
        "suspicious": [],
        "suspicious_total": 0,
    }
    for source in sources:
        if isinstance(source.value.data, dict):
            data.update(source.value.data)
    return WorkflowValue(text="\n".join(source.value.text for source in sources), data=data)


_STATUS_MARK = {
    "added": "A",
    "deleted": "D",
    "modified": "M",
    "renamed": "R",
    "copied": "C",
    "mode changed": "T",
}


def _plural(count: int, noun: str, plural: str = "") -> str:
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def report(value: WorkflowValue) -> WorkflowValue:
    data = value.data
    totals = data.get("totals") or {"files": 0, "added": 0, "removed": 0}
    rows = [
        f"{_plural(totals['files'], 'file')} changed, {_plural(totals['added'], 'insertion')}(+), "
        f"{_plural(totals['removed'], 'deletion')}(-)"
    ]
    width = min(60, max((len(_label(entry)) for entry in data["files"]), default=0))
    for entry in data["files"]:
        counts = "binary" if entry["binary"] else f"+{entry['added']} -{entry['removed']}"
        rows.append(f"  {_STATUS_MARK.get(entry['status'], '?')} {_label(entry):<{width}}  {counts}")
    if data["files_not_listed"]:
        rows.append(f"  \u2026 and {_plural(data['files_not_listed'], 'more file')}")
    rows.append("")
    if data["suspicious_total"]:
        rows.append(f"Suspicious additions ({data['suspicious_total']:,}):")
        for finding in data["suspicious"]:
            rows.append(f"  {finding['file']}:{finding['line']}: {finding['label']}: {finding['excerpt']}")
        hidden = data["suspicious_total"] - len(data["suspicious"])
        if hidden:
            rows.append(f"  \u2026 and {hidden:,} more")
    else:
        rows.append("No suspicious additions found.")
    return WorkflowValue(text="\n".join(rows), data=data)


def _label(entry: Dict[str, Any]) -> str:
    if entry["old_path"] and entry["status"] in ("renamed", "copied"):
        return f"{entry['old_path']} -> {entry['path']}"
    return entry["path"]


def explain(value: WorkflowValue) -> NoReturn:
    """Fails the run when nothing can be summarised (the input is empty or holds no unified diff), saying why
    and what to pass."""
    if not value.text.strip():
        problem = "The input is empty: expected a unified diff."
    else:
        problem = (
            "The input holds no unified diff: found no 'diff --git' header, no '--- old' / '+++ new' file "
            "header and no '@@' hunk."
        )
    raise ValueError(
        f"{problem} Pass the output of git diff or diff -u, for example: "
        'icode workflow run diff-summary --input "$(git diff)"'
    )


start = wf.python("parse", parse, timeout=120)
files = wf.python("summarise_files", summarise_files, timeout=120)
scan = wf.python("find_suspicious", find_suspicious, timeout=120)
summary = wf.python("report", report, timeout=60)
problem = wf.python("explain", explain, timeout=60)
wf.switch(start, [(is_diff, files)], default=problem)
wf.edge(start, scan, when=is_diff)
wf.join([files, scan], summary, combine=combine)
wf.start(start)
wf.output(summary)
workflow = wf.build()
