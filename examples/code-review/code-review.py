"""A folder workflow: checks a unified diff with helper modules and a prompt template read next to this file."""

from pathlib import Path

from chrys.workflows import WorkflowBuilder, WorkflowValue
from helpers.text import indent
from steps import check_diff, collect_stats

TEMPLATE = (Path(__file__).parent / "prompts" / "summary.md").read_text(encoding="utf-8")

wf = WorkflowBuilder("Code review", description="Static checks of a unified diff given as input")


def summarise(value: WorkflowValue) -> str:
    stats = value.text
    return TEMPLATE.format(body=indent(stats))


stats = wf.python("stats", collect_stats)
checks = wf.python("checks", check_diff)
summary = wf.python("summary", summarise)
wf.edge(stats, checks)
wf.edge(stats, summary)
wf.edge(checks, summary)
wf.start(stats)
wf.output(summary)
workflow = wf.build()
