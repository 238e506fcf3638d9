"""A switch: one branch per kind of request, a conditional edge, and a default merge."""

from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Triage")


def classify(value: WorkflowValue) -> WorkflowValue:
    kind = "bug" if "crash" in value.text else "feature" if "add" in value.text else "other"
    return WorkflowValue(value.text, {"kind": kind})


def is_bug(value: WorkflowValue) -> bool:
    return value.data["kind"] == "bug"


def is_feature(value: WorkflowValue) -> bool:
    return value.data["kind"] == "feature"


def has_fix(value: WorkflowValue) -> bool:
    return "fix" in value.text


async def other(value: WorkflowValue) -> str:
    return "no action"


triage = wf.python("triage", classify, timeout=30)  # @triage
bug = wf.agent("bug", profile="debugger")  # @bug
feature = wf.agent("feature", profile="planner")  # @feature
rest = wf.python("other", other)  # @other
wf.switch(triage, [(is_bug, bug), (is_feature, feature)], default=rest)  # @switch
report = wf.python("report", lambda value: value)  # @report
wf.edge(bug, report, when=has_fix)  # @when
wf.edge(triage, report)  # @plain
wf.start(triage)
wf.output(report)
workflow = wf.build()  # @build
