"""Reviews a change: Python gathers what changed, a reviewer agent reads it, Python formats the report.

The agent node uses the project profile `Reviewer` (.chrys/agents/reviewer.yaml): a native agent that may
read and search files in the project. Its model is the configured default (`model.profile.active`), or the
one given with `icode workflow run review-changes --model <id>`.
"""

from chrys.workflows import NodeContext, WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Review changes")


def gather(value: WorkflowValue, ctx: NodeContext) -> WorkflowValue:
    """The change to review: the input text, or a note that there is none."""
    change = value.text.strip()
    if not change:
        raise ValueError("give the change to review as --input (a diff, or a description of it)")
    files = [line[6:] for line in change.splitlines() if line.startswith("+++ b/")]
    ctx.emit(f"{len(files)} file(s) in the diff" if files else "no diff headers; reviewing the text as given")
    prompt = "Review this change. List defects that affect users first, each with file:line.\n\n" + change
    return WorkflowValue(text=prompt, data={"files": files})


def report(value: WorkflowValue) -> str:
    """The reviewer's answer under a heading, ready to paste into a pull request."""
    return "## Review\n\n" + value.text.strip()


collect = wf.python("gather", gather)
review = wf.agent("review", profile="Reviewer", instructions_suffix="Keep the review under 200 words.")
final = wf.python("report", report)
wf.chain(collect, review, final)
wf.start(collect)
wf.output(final)
workflow = wf.build()
