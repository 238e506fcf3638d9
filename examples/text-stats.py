"""Counts words, lines and the most frequent words of the input, in parallel branches joined at the end."""

from collections import Counter

from chrys.workflows import SourceValue, WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Text statistics", description="Word, line and frequency counts of the input text")


def normalise(value: WorkflowValue) -> WorkflowValue:
    words = [w.strip(".,;:!?\"'()[]").lower() for w in value.text.split()]
    words = [w for w in words if w]
    return WorkflowValue(text=value.text, data={"words": words})


def count_words(value: WorkflowValue) -> WorkflowValue:
    n = len(value.data["words"])
    return WorkflowValue(text=f"{n} words", data=n)


def count_lines(value: WorkflowValue) -> WorkflowValue:
    n = len(value.text.splitlines())
    return WorkflowValue(text=f"{n} lines", data=n)


def top_words(value: WorkflowValue) -> WorkflowValue:
    common = Counter(value.data["words"]).most_common(5)
    text = ", ".join(f"{word} ({n})" for word, n in common) or "(no words)"
    return WorkflowValue(text=f"most frequent: {text}", data=[[w, n] for w, n in common])


def combine(sources: list[SourceValue]) -> WorkflowValue:
    return WorkflowValue(
        text="\n".join(s.value.text for s in sources),
        data={s.node_id: s.value.data for s in sources},
    )


def report(value: WorkflowValue) -> str:
    return "Text statistics\n" + "\n".join(f"- {line}" for line in value.text.splitlines())


start = wf.python("normalise", normalise)
words = wf.python("count_words", count_words)
lines = wf.python("count_lines", count_lines)
top = wf.python("top_words", top_words)
summary = wf.python("report", report)

for branch in (words, lines, top):
    wf.edge(start, branch)
wf.join([words, lines, top], summary, combine=combine)
wf.start(start)
wf.output(summary)
workflow = wf.build()
