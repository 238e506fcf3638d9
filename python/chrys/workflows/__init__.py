"""Build iCode workflows in Python.

A workflow file builds a graph of nodes and assigns the result of ``build()`` to a module-level
``workflow`` variable::

    from chrys.workflows import WorkflowBuilder, WorkflowValue

    wf = WorkflowBuilder("Echo")


    def echo(value: WorkflowValue) -> WorkflowValue:
        return value


    node = wf.python("echo", echo)
    wf.start(node)
    wf.output(node)
    workflow = wf.build()

Every declaration is checked when it is made; a broken rule raises ``WorkflowDefinitionError`` (a
``ValueError``; ``WorkflowDefinitionTypeError`` is also a ``TypeError``) at the author's call.
"""

from __future__ import annotations

from ._builder import BuilderScope, WorkflowBuilder
from ._context import NodeContext
from ._definition import Workflow
from ._handles import NodeHandle, Retry
from ._questions import Answer, Option, Question
from ._values import SourceValue, WorkflowValue

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "BuilderScope",
    "NodeContext",
    "NodeHandle",
    "Option",
    "Question",
    "Retry",
    "SourceValue",
    "Workflow",
    "WorkflowBuilder",
    "WorkflowValue",
    "__version__",
]
