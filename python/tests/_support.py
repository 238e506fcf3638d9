"""Helpers shared by the SDK tests."""

from __future__ import annotations

import os
import sys
import traceback
import unittest
from types import FrameType
from typing import Any, Callable, Optional, Type

import chrys.workflows
from chrys.workflows import WorkflowValue
from chrys.workflows._errors import WorkflowDefinitionError

SDK_DIR = os.path.dirname(os.path.abspath(chrys.workflows.__file__))
SDK_ROOT = os.path.dirname(os.path.dirname(SDK_DIR))
"""The folder holding ``chrys/``."""
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAS_COLUMNS = sys.version_info >= (3, 11)


def here() -> int:
    """The line number of the caller's current line."""
    frame: Optional[FrameType] = sys._getframe(1)
    assert frame is not None
    return frame.f_lineno


def ident(value: WorkflowValue) -> WorkflowValue:
    return value


def fan_out(width: int) -> Any:
    """A built workflow: ``src`` into ``width`` branches joined into ``sink``. The branches, and the edges from
    ``src``, are each declared at one site, in a loop."""
    wf = chrys.workflows.WorkflowBuilder("fan-out")
    src = wf.python("src", ident)
    branches = [wf.python(f"b{i}", ident) for i in range(width)]
    for branch in branches:
        wf.edge(src, branch)
    sink = wf.python("sink", ident)
    wf.join(branches, sink)
    wf.start(src)
    wf.output(sink)
    return wf.build()


def with_ctx(value: WorkflowValue, ctx: Any) -> WorkflowValue:
    return value


def always(value: WorkflowValue) -> bool:
    return True


def last_user_frame(error: BaseException) -> traceback.FrameSummary:
    """The innermost traceback frame outside the SDK package."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not os.path.abspath(frame.filename).startswith(SDK_DIR + os.sep)
    ]
    return frames[-1]


class RuleTestCase(unittest.TestCase):
    def assert_rule(
        self,
        rule: str,
        thunk: Callable[[], object],
        *,
        cls: Type[WorkflowDefinitionError] = WorkflowDefinitionError,
        line: Optional[int] = None,
        node: Optional[str] = "<any>",
        says: Optional[str] = None,
    ) -> WorkflowDefinitionError:
        """Runs ``thunk`` (a one-line lambda around the author's call) and checks the error it raises: its
        class, ``rule``, the recorded site (the lambda's line unless ``line`` is given) and that the last
        traceback frame outside the SDK is that same line."""
        expected_line = line if line is not None else thunk.__code__.co_firstlineno  # type: ignore[attr-defined]
        try:
            thunk()
        except WorkflowDefinitionError as raised:  # assertRaises would drop the traceback
            error = raised
        else:
            self.fail(f"expected WorkflowDefinitionError({rule!r}), nothing was raised")
        self.assertIsInstance(error, cls)
        if cls is WorkflowDefinitionError:
            self.assertNotIsInstance(error, TypeError, f"{rule}: expected a ValueError, got a TypeError")
        self.assertIsInstance(error, ValueError)
        self.assertEqual(error.rule, rule, str(error))
        self.assertIsNotNone(error.site, str(error))
        assert error.site is not None
        self.assertEqual(error.site["line"], expected_line, str(error))
        self.assertEqual(error.site["file"], os.path.abspath(thunk.__code__.co_filename))  # type: ignore[attr-defined]
        frame = last_user_frame(error)
        self.assertEqual(frame.lineno, expected_line, f"last user frame of {rule}")
        if node != "<any>":
            self.assertEqual(error.node, node)
        if says is not None:
            self.assertIn(says, str(error))
        return error


def start_runtime(test: unittest.TestCase, workflow: Any, channel: Any) -> Any:
    """An in-process worker runtime for a built ``workflow``, answering on ``channel``, with an event loop of
    its own (``runtime.loop``, closed when ``test`` ends). The test files are the author's files."""
    import asyncio

    from chrys.workflows import _tracebacks as tb
    from chrys.workflows._runtime import Runtime

    runtime = Runtime(
        channel,
        workflow.definition.to_manifest(),
        dict(workflow._callables),
        tb.UserFiles(SDK_ROOT, os.path.dirname(os.path.abspath(__file__))),
    )
    runtime.loop = asyncio.new_event_loop()
    test.addCleanup(runtime.loop.close)
    return runtime
