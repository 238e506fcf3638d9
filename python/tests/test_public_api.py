"""The public surface of ``chrys.workflows``: names, version, typing marker and the spec's signatures."""

from __future__ import annotations

import inspect
import os
import unittest
from typing import Dict

import chrys.workflows as sdk
from chrys.workflows import BuilderScope, WorkflowBuilder

P = inspect.Parameter


def shape(fn: object) -> Dict[str, object]:
    """``{name: (kind, default)}`` of a callable's parameters, ``self`` left out."""
    parameters = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    return {p.name: (p.kind, p.default) for p in parameters if p.name != "self"}


E = P.empty


class PublicApi(unittest.TestCase):
    def test_names(self) -> None:
        self.assertEqual(
            sorted(sdk.__all__),
            sorted(
                [
                    "WorkflowBuilder", "BuilderScope", "NodeHandle", "Workflow", "WorkflowValue", "SourceValue",
                    "NodeContext", "Question", "Option", "Answer", "Retry", "__version__",
                ]
            ),
        )  # fmt: skip
        for name in sdk.__all__:
            self.assertTrue(hasattr(sdk, name), name)
        self.assertEqual(sdk.__version__, "0.1.0")

    def test_typed_package(self) -> None:
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(sdk.__file__), "py.typed")))

    def test_spec_signatures(self) -> None:
        KW, POS = P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD
        self.assertEqual(shape(WorkflowBuilder.__init__), {"title": (POS, E), "description": (KW, None)})
        self.assertEqual(shape(WorkflowBuilder.start), {"node": (POS, E)})
        self.assertEqual(shape(WorkflowBuilder.output), {"node": (POS, E)})
        self.assertEqual(shape(WorkflowBuilder.build), {})
        self.assertEqual(
            shape(WorkflowBuilder.loop),
            {
                "name": (POS, E),
                "body": (POS, E),
                "until": (POS, E),
                "max_iterations": (POS, E),
                "on_exhausted": (POS, "continue"),
            },
        )
        self.assertEqual(
            shape(BuilderScope.python),
            {"name": (POS, E), "fn": (POS, E), "timeout": (KW, 300.0), "retry": (KW, None)},
        )
        self.assertEqual(
            shape(BuilderScope.agent),
            {
                "name": (POS, E),
                "profile": (KW, E),
                "model": (KW, None),
                "instructions_suffix": (KW, None),
                "timeout": (KW, None),
                "retry": (KW, None),
            },
        )
        self.assertEqual(shape(BuilderScope.edge), {"src": (POS, E), "dst": (POS, E), "when": (KW, None)})
        self.assertEqual(shape(BuilderScope.chain), {"nodes": (P.VAR_POSITIONAL, E)})
        self.assertEqual(shape(BuilderScope.switch), {"src": (POS, E), "cases": (POS, E), "default": (POS, E)})
        self.assertEqual(shape(BuilderScope.join), {"sources": (POS, E), "dst": (POS, E), "combine": (KW, None)})
        self.assertEqual(shape(sdk.Retry.__init__), {"max_attempts": (POS, E), "backoff": (POS, 0.0)})
        self.assertEqual(
            shape(sdk.Question.__init__),
            {"question": (POS, E), "header": (POS, ""), "options": (POS, ()), "multi_select": (POS, False)},
        )
        self.assertEqual(shape(sdk.Option.__init__), {"label": (POS, E), "description": (POS, "")})
        self.assertEqual(shape(sdk.Answer.__init__), {"selected": (POS, ()), "text": (POS, "")})
        self.assertEqual(shape(sdk.WorkflowValue.__init__), {"text": (POS, E), "data": (POS, None)})
        self.assertEqual(shape(sdk.NodeContext.emit), {"text": (POS, E)})
        self.assertEqual(shape(sdk.NodeContext.ask), {"prompt": (POS, E)})

    def test_builder_is_a_scope_and_a_body_scope_has_no_loop(self) -> None:
        self.assertTrue(issubclass(WorkflowBuilder, BuilderScope))
        for method in ("python", "agent", "edge", "chain", "switch", "join"):
            self.assertTrue(callable(getattr(BuilderScope, method)), method)
        for method in ("loop", "start", "output", "build"):
            self.assertFalse(hasattr(BuilderScope, method), method)
            self.assertTrue(callable(getattr(WorkflowBuilder, method)), method)

    def test_internal_objects_are_not_constructed_by_authors(self) -> None:
        with self.assertRaises(TypeError):
            BuilderScope()
        with self.assertRaises(TypeError):
            sdk.Workflow()


if __name__ == "__main__":
    unittest.main()
