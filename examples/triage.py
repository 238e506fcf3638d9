"""Routes a request to one handler with switch(): bugs, questions, or everything else."""

from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Triage")


def classify(value: WorkflowValue) -> WorkflowValue:
    text = value.text.lower()
    if any(word in text for word in ("error", "crash", "bug", "broken", "fails")):
        kind = "bug"
    elif text.rstrip().endswith("?"):
        kind = "question"
    else:
        kind = "other"
    return WorkflowValue(text=value.text, data={"kind": kind})


def is_bug(value: WorkflowValue) -> bool:
    return value.data["kind"] == "bug"


def is_question(value: WorkflowValue) -> bool:
    return value.data["kind"] == "question"


def file_bug(value: WorkflowValue) -> str:
    first = value.text.strip().splitlines()[0] if value.text.strip() else "(empty report)"
    return f"Bug report filed: {first}"


def answer(value: WorkflowValue) -> str:
    return f"Question queued for the docs team: {value.text.strip()}"


def acknowledge(value: WorkflowValue) -> str:
    return f"Thanks, noted: {value.text.strip() or '(nothing)'}"


classifier = wf.python("classify", classify)
bug = wf.python("file_bug", file_bug)
question = wf.python("answer", answer)
other = wf.python("acknowledge", acknowledge)
wf.switch(classifier, [(is_bug, bug), (is_question, question)], default=other)
wf.start(classifier)
for handler in (bug, question, other):
    wf.output(handler)
workflow = wf.build()
