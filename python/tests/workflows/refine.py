"""A loop: an agent reviews, a Python node revises, until the review approves (or five rounds pass)."""

from chrys.workflows import BuilderScope, NodeContext, Retry, WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Refine", description="Draft, then review until approved")


def draft(value: WorkflowValue) -> str:
    return value.text.strip()


def revise(value: WorkflowValue, ctx: NodeContext) -> WorkflowValue:
    ctx.emit("revising")
    return WorkflowValue(text=value.text, data={"revised": True})


def approved(value: WorkflowValue) -> bool:
    return "LGTM" in value.text


def body(scope: BuilderScope):
    critique = scope.agent("critique", profile="reviewer", model="fast", instructions_suffix="Say LGTM.")  # @critique
    fix = scope.python("fix", revise, timeout=None, retry=Retry(2, 0.5))  # @fix
    scope.edge(critique, fix)  # @critique_fix
    return critique, fix


start = wf.python("draft", draft)  # @draft
refine = wf.loop("refine", body, until=approved, max_iterations=5, on_exhausted="fail")  # @refine
publish = wf.agent("publish", profile="writer", timeout=600)  # @publish
wf.chain(start, refine, publish)  # @chain
wf.start(start)
wf.output(publish)
wf.output(refine)
workflow = wf.build()  # @build
