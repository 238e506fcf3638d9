"""Outline: the heading outline of a Markdown document, collapsed level by level until it fits in N lines.

Input: Markdown text (``--input "$(cat README.md)"``). An optional first line ``max-lines: N`` sets how many
heading lines the outline may use (1 to 500, default 30); that line is not part of the document.

Headings are ATX headings (``# Title`` to ``###### Title``) and setext headings (a line underlined with
``===`` or ``---``); headings inside fenced code blocks and a YAML front matter block are ignored, and links
in titles keep only their text. A loop then collapses the deepest heading level left, one level per iteration,
until the outline fits in N lines or only the top level is left; if even that is too long, the outline is
cut to N lines, the last one saying how many headings were left out.

The output's ``text`` is a summary line and the outline, one line per heading with its line number in the
input, indented one step per heading level present (a jump from ``#`` to ``###`` is one step);
``data`` holds ``{"headings": [{"level", "title", "line"}], "shown", "total", "depth", "collapsed_levels",
"max_lines", "fits", "omitted"}``. An empty input, a document without headings or a bad ``max-lines`` line
fails the run: the ``explain`` node raises ``ValueError`` saying what is wrong and how to fix it.

Example::

    icode workflow run outline --input $'max-lines: 10\\n# Guide\\n## Install\\n## Use\\n### Options'
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, NoReturn, Optional, Tuple

from chrys.workflows import BuilderScope, NodeHandle, WorkflowBuilder, WorkflowValue

DEFAULT_MAX_LINES = 30
MAX_LINES_LIMIT = 500
MAX_HEADINGS = 5000
TITLE_CHARS = 120

_DIRECTIVE = re.compile(r"^\s*max[-_ ]?lines\s*[:=]\s*(.*?)\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"^(?: {4,}|\t| {0,3}(?:[>#|]|[-*+][ \t]|[-*+]$|\d{1,9}[.)](?:[ \t]|$)))")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")

wf = WorkflowBuilder(
    "Markdown outline",
    description=(
        "Builds the heading outline of a Markdown document and collapses its deepest levels in a loop until "
        "it fits in the requested number of lines (first input line 'max-lines: N', default 30)."
    ),
)


def _title(raw: str) -> str:
    title = _LINK.sub(lambda match: match.group(1), raw)
    title = " ".join(title.split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "\u2026"


def find_headings(lines: List[str], first_line: int) -> List[Dict[str, Any]]:
    """The headings of ``lines`` (numbered from ``first_line``), outside code fences and front matter."""
    headings: List[Dict[str, Any]] = []
    fence: Optional[str] = None
    previous: Optional[str] = None  # the last line if it can be a setext heading's text, else None
    start = 0
    if lines and lines[0].strip() == "---":  # YAML front matter ends at the next --- or ...
        for index in range(1, len(lines)):
            if lines[index].strip() in ("---", "..."):
                start = index + 1
                break
    for index in range(start, len(lines)):
        line = lines[index]
        opening = _FENCE.match(line)
        if fence is not None:
            if opening is not None and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                if not line.strip().lstrip(fence[0]).strip():
                    fence = None
            continue
        if opening is not None:
            fence = opening.group(1)
            previous = None
            continue
        atx = _ATX.match(line)
        if atx is not None:
            title = _title(_ATX_CLOSE.sub("", atx.group(2) or ""))
            if title:
                headings.append({"level": len(atx.group(1)), "title": title, "line": first_line + index})
            previous = None
            continue
        underline = _SETEXT.match(line)
        if underline is not None and previous is not None:
            title = _title(previous)
            if title:
                level = 1 if underline.group(1)[0] == "=" else 2
                headings.append({"level": level, "title": title, "line": first_line + index - 1})
            previous = None
            continue
        if not line.strip() or _NOT_PARAGRAPH.match(line):
            previous = None
        else:
            previous = line
    return headings


def _problem(message: str, hint: str) -> WorkflowValue:
    return WorkflowValue(text=message, data={"ok": False, "error": message, "hint": hint})


def parse(value: WorkflowValue) -> WorkflowValue:
    """Reads the optional ``max-lines: N`` line and finds the document's headings."""
    lines = value.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    max_lines = DEFAULT_MAX_LINES
    first_line = 1
    directive = _DIRECTIVE.match(lines[0]) if lines else None
    if directive is not None:
        raw = directive.group(1)
        if not re.fullmatch(r"\d{1,6}", raw) or not 1 <= int(raw) <= MAX_LINES_LIMIT:
            return _problem(
                f"The first line sets max-lines to {raw!r}; expected a whole number from 1 to {MAX_LINES_LIMIT}.",
                "Write for example 'max-lines: 20' on the first line, or leave the line out for the default of "
                f"{DEFAULT_MAX_LINES}.",
            )
        max_lines = int(raw)
        lines = lines[1:]
        first_line = 2
    if not "".join(lines).strip():
        return _problem(
            "The input is empty: expected a Markdown document with headings.",
            'Pass the document with --input, for example: icode workflow run outline --input "$(cat README.md)"',
        )
    headings = find_headings(lines, first_line)
    if not headings:
        return _problem(
            f"No Markdown headings found in {len(lines):,} line{'' if len(lines) == 1 else 's'}: expected lines "
            "such as '# Title' or '## Section', or a line underlined with === or ---.",
            "Headings inside fenced code blocks are not counted.",
        )
    levels = [heading["level"] for heading in headings]
    data = {
        "ok": True,
        "headings": headings[:MAX_HEADINGS],
        "total": len(headings),
        "not_kept": max(0, len(headings) - MAX_HEADINGS),
        "max_lines": max_lines,
        "top": min(levels),
        "depth": max(levels),
        "collapsed_levels": [],
        "visible": len(headings[:MAX_HEADINGS]),
        "fits": False,
    }
    return WorkflowValue(text=f"{len(headings)} headings, levels {min(levels)} to {max(levels)}", data=data)


def has_headings(value: WorkflowValue) -> bool:
    return isinstance(value.data, dict) and value.data.get("ok") is True


def collapse(value: WorkflowValue) -> WorkflowValue:
    """One loop iteration: keeps the outline if it fits, else hides its deepest visible level."""
    data = dict(value.data)
    headings = data["headings"]
    visible = sum(1 for heading in headings if heading["level"] <= data["depth"])
    if visible > data["max_lines"] and data["depth"] > data["top"]:
        data["collapsed_levels"] = [*data["collapsed_levels"], data["depth"]]
        data["depth"] = max(heading["level"] for heading in headings if heading["level"] < data["depth"])
        visible = sum(1 for heading in headings if heading["level"] <= data["depth"])
    data["visible"] = visible
    data["fits"] = visible <= data["max_lines"]
    return WorkflowValue(text=f"{visible} headings down to level {data['depth']}", data=data)


def fits_or_flat(value: WorkflowValue) -> bool:
    """Stops the loop once the outline fits, or when only the top level is left to show."""
    return bool(value.data["fits"]) or value.data["depth"] <= value.data["top"]


def fit_body(scope: BuilderScope) -> Tuple[NodeHandle, NodeHandle]:
    step = scope.python("collapse", collapse, timeout=30)
    return step, step


def render(value: WorkflowValue) -> WorkflowValue:
    """The outline as indented lines, cut to ``max_lines`` when even the top level is too long."""
    data = value.data
    max_lines = data["max_lines"]
    visible = [heading for heading in data["headings"] if heading["level"] <= data["depth"]]
    omitted = data["not_kept"] + sum(1 for heading in data["headings"] if heading["level"] > data["depth"])
    shown = visible
    cut = 0
    if len(visible) > max_lines:
        shown = visible[: max_lines - 1]
        cut = len(visible) - len(shown)
    rank = {level: index for index, level in enumerate(sorted({heading["level"] for heading in shown}))}
    rows = [f"{'  ' * rank[heading['level']]}- {heading['title']} (line {heading['line']})" for heading in shown]
    if cut:
        rows.append(f"\u2026 {cut:,} more heading{'s' if cut != 1 else ''} at level {data['top']} not shown")
    collapsed = sorted(data["collapsed_levels"])
    note = ""
    if collapsed:
        names = [str(level) for level in collapsed]
        levels = f"level {names[0]}" if len(names) == 1 else f"levels {', '.join(names[:-1])} and {names[-1]}"
        note = f"; headings at {levels} collapsed to fit {max_lines} lines"
    header = f"Outline: {len(shown):,} of {data['total']:,} headings{note}"
    if cut:
        header += f"; cut to {max_lines} lines"
    result = {
        "headings": shown,
        "shown": len(shown),
        "total": data["total"],
        "depth": data["depth"],
        "collapsed_levels": collapsed,
        "max_lines": max_lines,
        "fits": not cut,
        "omitted": omitted + cut,
    }
    return WorkflowValue(text="\n".join([header, *rows]), data=result)


def explain(value: WorkflowValue) -> NoReturn:
    """Fails the run when there is no outline to make (an empty input, no headings, or a bad ``max-lines``
    line), saying why and how to fix it."""
    data = value.data if isinstance(value.data, dict) else {}
    error = data.get("error") or "The input could not be read as Markdown."
    hint = data.get("hint") or "Pass a Markdown document."
    raise ValueError(f"{error} {hint}")


start = wf.python("parse", parse, timeout=60)
fit = wf.loop("fit", fit_body, until=fits_or_flat, max_iterations=6)
outline = wf.python("render", render, timeout=30)
problem = wf.python("explain", explain, timeout=30)
wf.switch(start, [(has_headings, fit)], default=problem)
wf.edge(fit, outline)
wf.start(start)
wf.output(outline)
workflow = wf.build()
