"""Echo: returns the input text unchanged, a smoke test for the workflow engine.

Input: any text, including none. The output's ``text`` is exactly the input (an empty input gives an empty
output); its ``data`` describes what came through, so a round trip of non-ASCII text or line breaks can be
checked at a glance::

    {"characters": 5, "lines": 1, "utf8_bytes": 5, "empty": false}

Example::

    icode workflow run echo --input "Hello"
"""

from __future__ import annotations

from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder(
    "Echo",
    description="Returns the input text unchanged, with its size in data; a smoke test for the engine.",
)


def _count_lines(text: str) -> int:
    """Lines ended by ``\\n``, ``\\r\\n`` or ``\\r``; a final line break does not start another line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return len(lines) - 1 if lines[-1] == "" else len(lines)


def echo(value: WorkflowValue) -> WorkflowValue:
    text = value.text
    return WorkflowValue(
        text=text,
        data={
            "characters": len(text),
            "lines": _count_lines(text),
            "utf8_bytes": len(text.encode("utf-8", "surrogatepass")),
            "empty": text == "",
        },
    )


node = wf.python("echo", echo, timeout=30)
wf.start(node)
wf.output(node)
workflow = wf.build()
