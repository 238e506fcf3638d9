"""Word statistics: counts words, lines and characters of a text and lists its most frequent words.

Input: any text, for example a file's content (``--input "$(cat notes.md)"``). Line endings may be ``\\n``,
``\\r\\n`` or ``\\r``. An empty or blank input fails the run (the ``prepare`` node raises ``ValueError``):
there is nothing to count.

The start node fans out to four counting branches that run in parallel; a ``join()`` with a ``combine``
function merges their results into one report. The output's ``data`` holds every figure; for the example
below::

    {"empty": false,
     "words": {"total": 9, "unique": 8, "average_length": 3.9, "longest": "quick"},
     "lines": {"total": 1, "non_blank": 1, "longest": 43},
     "characters": {"total": 43, "non_whitespace": 35, "utf8_bytes": 43},
     "top_words": [{"word": "brown", "count": 1}, {"word": "dog", "count": 1}, ...]}

Words are runs of letters and digits, joined across an inner apostrophe or hyphen (``don't``,
``well-known``), compared case-insensitively. The most frequent words leave out common English function
words (``the``, ``and``, ...) and numbers.

Example::

    icode workflow run word-stats --input "The quick brown fox jumps over the lazy dog"
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Dict, List

from chrys.workflows import SourceValue, WorkflowBuilder, WorkflowValue

TOP_WORDS = 10
"""How many of the most frequent words to list."""

_WORD = re.compile(r"[^\W_]+(?:['\u2019\-][^\W_]+)*")
_STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing don't down during each few for from further had has have having he
    her here hers herself him himself his how i if in into is it it's its itself just me more most my myself
    no nor not now of off on once only or other our ours ourselves out over own same she should so some such
    than that that's the their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your yours
    yourself yourselves
    """.split()
)

wf = WorkflowBuilder(
    "Word statistics",
    description=(
        "Counts words, lines and characters of the input text in parallel branches and lists its most "
        "frequent words; the joined report carries every figure in data."
    ),
)


def _words(text: str) -> List[str]:
    return [word.lower().replace("\u2019", "'") for word in _WORD.findall(text)]


def prepare(value: WorkflowValue) -> WorkflowValue:
    """Normalises line endings to ``\\n`` and drops a leading byte order mark; an empty or blank input fails the
    run with what to pass instead."""
    text = value.text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise ValueError(
            "The input is empty: there is nothing to count. Pass the text with --input, for example: "
            'icode workflow run word-stats --input "$(cat notes.txt)"'
        )
    return WorkflowValue(text=text)


def count_words(value: WorkflowValue) -> WorkflowValue:
    words = _words(value.text)
    total = len(words)
    average = round(sum(len(word) for word in words) / total, 1) if total else 0.0
    longest = max(words, key=len) if words else ""
    return WorkflowValue(
        text=f"{total} words ({len(set(words))} unique)",
        data={"total": total, "unique": len(set(words)), "average_length": average, "longest": longest},
    )


def count_lines(value: WorkflowValue) -> WorkflowValue:
    lines = value.text.split("\n") if value.text else []
    if lines and lines[-1] == "":  # a final line break ends the last line; it does not start a new one
        lines.pop()
    non_blank = sum(1 for line in lines if line.strip())
    longest = max((len(line) for line in lines), default=0)
    return WorkflowValue(
        text=f"{len(lines)} lines ({non_blank} non-blank)",
        data={"total": len(lines), "non_blank": non_blank, "longest": longest},
    )


def count_characters(value: WorkflowValue) -> WorkflowValue:
    text = value.text
    non_whitespace = sum(1 for char in text if not char.isspace())
    size = len(text.encode("utf-8", "surrogatepass"))
    return WorkflowValue(
        text=f"{len(text)} characters",
        data={"total": len(text), "non_whitespace": non_whitespace, "utf8_bytes": size},
    )


def top_words(value: WorkflowValue) -> WorkflowValue:
    counts = Counter(word for word in _words(value.text) if word not in _STOPWORDS and not word.isdigit())
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TOP_WORDS]
    shown = ", ".join(f"{word} ({count})" for word, count in ranked)
    return WorkflowValue(
        text=f"most frequent: {shown}" if ranked else "most frequent: (none)",
        data=[{"word": word, "count": count} for word, count in ranked],
    )


_FIGURES = {
    "count_words": "words",
    "count_lines": "lines",
    "count_characters": "characters",
    "top_words": "top_words",
}


def combine(sources: List[SourceValue]) -> WorkflowValue:
    """Merges the branches' data under one key each (``words``, ``lines``, ...), whatever order they finished in."""
    data: Dict[str, Any] = {}
    for source in sources:
        key = _FIGURES.get(source.node_id, source.node_id)
        data[key] = source.value.data
    return WorkflowValue(text="\n".join(source.value.text for source in sources), data=data)


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def report(value: WorkflowValue) -> WorkflowValue:
    data = value.data if isinstance(value.data, dict) else {}
    words = data.get("words") or {"total": 0, "unique": 0, "average_length": 0.0, "longest": ""}
    lines = data.get("lines") or {"total": 0, "non_blank": 0, "longest": 0}
    characters = data.get("characters") or {"total": 0, "non_whitespace": 0, "utf8_bytes": 0}
    top = data.get("top_words") or []
    result = {
        # Kept for readers of this shape; always false now, since an empty input fails in `prepare`.
        "empty": words["total"] == 0 and characters["non_whitespace"] == 0,
        "words": words,
        "lines": lines,
        "characters": characters,
        "top_words": top,
    }
    rows = [
        f"Words: {words['total']:,} ({words['unique']:,} unique, average length {words['average_length']}"
        + (f", longest {words['longest']!r})" if words["longest"] else ")"),
        f"Lines: {lines['total']:,} ({lines['non_blank']:,} non-blank, "
        f"longest {_plural(lines['longest'], 'character')})",
        f"Characters: {characters['total']:,} ({characters['non_whitespace']:,} excluding whitespace, "
        f"{characters['utf8_bytes']:,} bytes in UTF-8)",
    ]
    if top:
        rows.append("Most frequent words: " + ", ".join(f"{item['word']} ({item['count']})" for item in top))
    else:
        rows.append("Most frequent words: none (only common words or numbers)")
    return WorkflowValue(text="\n".join(rows), data=result)


start = wf.python("prepare", prepare, timeout=60)
branches = [
    wf.python("count_words", count_words, timeout=120),
    wf.python("count_lines", count_lines, timeout=120),
    wf.python("count_characters", count_characters, timeout=120),
    wf.python("top_words", top_words, timeout=120),
]
summary = wf.python("report", report, timeout=60)
for branch in branches:
    wf.edge(start, branch)
wf.join(branches, summary, combine=combine)
wf.start(start)
wf.output(summary)
workflow = wf.build()
