"""Shortens a text in a loop: each iteration drops the longest sentence until it fits in a limit."""

import re

from chrys.workflows import BuilderScope, WorkflowBuilder, WorkflowValue

LIMIT = 200

wf = WorkflowBuilder("Refine until short")


def split(value: WorkflowValue) -> WorkflowValue:
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", value.text.strip()) if s.strip()]
    return WorkflowValue(text=" ".join(sentences), data={"sentences": sentences})


def drop_longest(value: WorkflowValue) -> WorkflowValue:
    sentences = list(value.data["sentences"])
    if len(sentences) > 1:
        sentences.remove(max(sentences, key=len))
    return WorkflowValue(text=" ".join(sentences), data={"sentences": sentences})


def measure(value: WorkflowValue) -> WorkflowValue:
    return WorkflowValue(text=value.text, data={**value.data, "length": len(value.text)})


def body(scope: BuilderScope):
    shorten = scope.python("drop_longest", drop_longest)
    check = scope.python("measure", measure)
    scope.edge(shorten, check)
    return shorten, check


def short_enough(value: WorkflowValue) -> bool:
    return value.data["length"] <= LIMIT or len(value.data["sentences"]) <= 1


prepare = wf.python("split", split)
refine = wf.loop("refine", body, until=short_enough, max_iterations=20)
wf.edge(prepare, refine)
wf.start(prepare)
wf.output(refine)
workflow = wf.build()
