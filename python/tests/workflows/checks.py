"""Joins: a custom combine and the default merge, fed by parallel branches."""

from typing import List

from chrys.workflows import SourceValue, WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Checks", description="")


def split(value: WorkflowValue) -> WorkflowValue:
    return value


def merge(sources: List[SourceValue]) -> str:
    return "\n".join(source.value.text for source in sources)


source = wf.python("split", split)  # @split
lint = wf.python("lint", split)  # @lint
test = wf.python("test", split)  # @test
summary = wf.agent("summary", profile="writer")  # @summary
final = wf.python("final", split)  # @final
wf.edge(source, lint)  # @e1
wf.edge(source, test)  # @e2
wf.join([lint, test], summary, combine=merge)  # @join1
wf.join((test, summary, source), final)  # @join2
wf.start(source)
wf.output(summary)
wf.output(final)
workflow = wf.build()  # @build
