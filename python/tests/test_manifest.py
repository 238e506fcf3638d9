"""The manifest (``Workflow.definition.to_manifest()``) of real workflow files: exactly the JSON shape of
``DefinitionSchema`` in ``packages/graph/src/schema.ts``, plus the callables registry the worker uses."""

from __future__ import annotations

import copy
import json
import os
import runpy
import unittest
from typing import Any, Dict, Optional

from chrys.workflows import Workflow, WorkflowBuilder
from chrys.workflows._definition import EdgeDefinition, NodeDefinition, WorkflowDefinition

from ._support import HAS_COLUMNS, always, ident

HERE = os.path.dirname(os.path.abspath(__file__))
WORKFLOWS = os.path.join(HERE, "workflows")


def load(name: str) -> Workflow:
    namespace = runpy.run_path(os.path.join(WORKFLOWS, name), run_name=f"fixture_{name[:-3]}")
    workflow = namespace["workflow"]
    assert isinstance(workflow, Workflow)
    return workflow


def site(name: str, needle: str) -> Dict[str, Any]:
    """The expected site of the one call in ``name`` whose line contains ``needle`` (where the call starts)."""
    path = os.path.join(WORKFLOWS, name)
    with open(path, encoding="utf-8") as file:
        lines = file.read().split("\n")
    found = [(number, text) for number, text in enumerate(lines, 1) if needle in text]
    assert len(found) == 1, (needle, found)
    number, text = found[0]
    start = text.index(needle)
    depth = 0
    end: Optional[int] = None
    for index in range(text.index("(", start), len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            end = index + 1
            break
    assert end is not None
    return {
        "file": path,
        "line": number,
        "column": start + 1 if HAS_COLUMNS else None,
        "end_line": number if HAS_COLUMNS else None,
        "end_column": end + 1 if HAS_COLUMNS else None,
    }


def python_node(node_id: str, site: Dict[str, Any], **fields: Any) -> Dict[str, Any]:
    node = {"id": node_id, "scope": None, "site": site, "kind": "python", "timeout": 300.0, "retry": None}
    node.update({"is_async": False, "takes_context": False})
    node.update(fields)
    return node


def agent_node(node_id: str, site: Dict[str, Any], profile: str, **fields: Any) -> Dict[str, Any]:
    node = {"id": node_id, "scope": None, "site": site, "kind": "agent", "profile": profile, "model": None}
    node.update({"instructions_suffix": None, "timeout": None, "retry": None})
    node.update(fields)
    return node


def edge(source: str, target: str, site: Dict[str, Any], condition: Any = None, scope: Any = None) -> Dict[str, Any]:
    return {"source": source, "target": target, "scope": scope, "condition": condition, "site": site}


class SpecExamples(unittest.TestCase):
    maxDiff = None

    def test_echo(self) -> None:
        workflow = load("echo.py")
        s = site("echo.py", 'wf.python("echo"')
        self.assertEqual(
            workflow.definition.to_manifest(),
            {
                "format": 1,
                "title": "Echo",
                "description": None,
                "start": "echo",
                "outputs": ["echo"],
                "nodes": [python_node("echo", s)],
                "edges": [],
                "build_site": site("echo.py", "wf.build()"),
                "sites_truncated": False,
            },
        )
        self.assertEqual(sorted(workflow._callables), ["node:echo"])
        self.assertEqual(workflow._callables["node:echo"].__name__, "echo")

    def test_loop(self) -> None:
        workflow = load("refine.py")
        f = "refine.py"
        crit_fix = site(f, "scope.edge(critique, fix)")
        chain = site(f, "wf.chain(")
        expected = {
            "format": 1,
            "title": "Refine",
            "description": "Draft, then review until approved",
            "start": "draft",
            "outputs": ["publish", "refine"],
            "nodes": [
                python_node("draft", site(f, 'wf.python("draft"')),
                {
                    "id": "refine",
                    "scope": None,
                    "site": site(f, 'wf.loop("refine"'),
                    "kind": "loop",
                    "entry": "critique",
                    "exit": "fix",
                    "max_iterations": 5,
                    "on_exhausted": "fail",
                },
                agent_node(
                    "critique",
                    site(f, 'scope.agent("critique"'),
                    "reviewer",
                    scope="refine",
                    model="fast",
                    instructions_suffix="Say LGTM.",
                ),
                python_node(
                    "fix",
                    site(f, 'scope.python("fix"'),
                    scope="refine",
                    timeout=None,
                    retry={"max_attempts": 2, "backoff": 0.5},
                    takes_context=True,
                ),
                agent_node("publish", site(f, 'wf.agent("publish"'), "writer", timeout=600.0),
            ],
            "edges": [
                edge("critique", "fix", crit_fix, scope="refine"),
                edge("draft", "refine", chain),
                edge("refine", "publish", chain),
            ],
            "build_site": site(f, "wf.build()"),
            "sites_truncated": False,
        }
        self.assertEqual(workflow.definition.to_manifest(), expected)
        self.assertEqual(sorted(workflow._callables), ["node:draft", "node:fix", "until:refine"])
        self.assertEqual(workflow._callables["until:refine"].__name__, "approved")
        self.assertEqual(workflow._callables["node:fix"].__name__, "revise")

    def test_switch(self) -> None:
        workflow = load("triage.py")
        f = "triage.py"
        switch = site(f, "wf.switch(")
        expected = {
            "format": 1,
            "title": "Triage",
            "description": None,
            "start": "triage",
            "outputs": ["report"],
            "nodes": [
                python_node("triage", site(f, 'wf.python("triage"'), timeout=30.0),
                agent_node("bug", site(f, 'wf.agent("bug"'), "debugger"),
                agent_node("feature", site(f, 'wf.agent("feature"'), "planner"),
                python_node("other", site(f, 'wf.python("other"'), is_async=True),
                python_node("report", site(f, 'wf.python("report"')),
            ],
            "edges": [
                edge("triage", "bug", switch, {"kind": "case", "index": 0}),
                edge("triage", "feature", switch, {"kind": "case", "index": 1}),
                edge("triage", "other", switch, {"kind": "default"}),
                edge("bug", "report", site(f, "wf.edge(bug, report"), {"kind": "when"}),
                edge("triage", "report", site(f, "wf.edge(triage, report")),
            ],
            "build_site": site(f, "wf.build()"),
            "sites_truncated": False,
        }
        self.assertEqual(workflow.definition.to_manifest(), expected)
        names = {key: fn.__name__ for key, fn in workflow._callables.items()}
        self.assertEqual(
            names,
            {
                "node:triage": "classify",
                "node:other": "other",
                "node:report": "<lambda>",
                "edge:triage->bug": "is_bug",
                "edge:triage->feature": "is_feature",
                "edge:bug->report": "has_fix",
            },
        )

    def test_join(self) -> None:
        workflow = load("checks.py")
        f = "checks.py"
        join1, join2 = site(f, "wf.join([lint"), site(f, "wf.join((test")
        join_node = {"id": "join:summary", "scope": None, "site": join1, "kind": "join"}
        join_node.update({"sources": ["lint", "test"], "target": "summary", "has_combine": True})
        default_join = {"id": "join:final", "scope": None, "site": join2, "kind": "join"}
        default_join.update({"sources": ["test", "summary", "split"], "target": "final", "has_combine": False})
        expected = {
            "format": 1,
            "title": "Checks",
            "description": "",
            "start": "split",
            "outputs": ["summary", "final"],
            "nodes": [
                python_node("split", site(f, 'wf.python("split"')),
                python_node("lint", site(f, 'wf.python("lint"')),
                python_node("test", site(f, 'wf.python("test"')),
                agent_node("summary", site(f, 'wf.agent("summary"'), "writer"),
                python_node("final", site(f, 'wf.python("final"')),
                join_node,
                default_join,
            ],
            "edges": [
                edge("split", "lint", site(f, "wf.edge(source, lint)")),
                edge("split", "test", site(f, "wf.edge(source, test)")),
                edge("lint", "join:summary", join1),
                edge("test", "join:summary", join1),
                edge("join:summary", "summary", join1),
                edge("test", "join:final", join2),
                edge("summary", "join:final", join2),
                edge("split", "join:final", join2),
                edge("join:final", "final", join2),
            ],
            "build_site": site(f, "wf.build()"),
            "sites_truncated": False,
        }
        self.assertEqual(workflow.definition.to_manifest(), expected)
        self.assertEqual(workflow._callables["combine:join:summary"].__name__, "merge")
        self.assertNotIn("combine:join:final", workflow._callables)

    def test_manifests_are_json(self) -> None:
        for name in ("echo.py", "refine.py", "triage.py", "checks.py"):
            manifest = load(name).definition.to_manifest()
            self.assertEqual(json.loads(json.dumps(manifest, allow_nan=False)), manifest)


class DefinitionObject(unittest.TestCase):
    def test_read_only_views(self) -> None:
        workflow = load("refine.py")
        definition = workflow.definition
        self.assertIsInstance(definition, WorkflowDefinition)
        self.assertEqual(definition.title, "Refine")
        self.assertEqual(definition.description, "Draft, then review until approved")
        self.assertEqual(definition.start, "draft")
        self.assertEqual(definition.outputs, ("publish", "refine"))
        self.assertEqual([node.id for node in definition.nodes], ["draft", "refine", "critique", "fix", "publish"])
        self.assertIsInstance(definition.nodes[0], NodeDefinition)
        self.assertIsInstance(definition.edges[0], EdgeDefinition)
        self.assertEqual(definition.node("refine").entry, "critique")
        self.assertEqual(definition.node("fix").scope, "refine")
        self.assertEqual(definition.edges[0].source, "critique")
        self.assertFalse(definition.sites_truncated)
        self.assertEqual(definition.build_site, definition.to_manifest()["build_site"])
        with self.assertRaises(KeyError):
            definition.node("nope")
        with self.assertRaises(AttributeError):
            definition.nodes[0].nope  # noqa: B018
        for target, field in ((workflow, "definition"), (definition, "title"), (definition.nodes[0], "id")):
            with self.assertRaises(AttributeError):
                setattr(target, field, "x")
        # Views are copies: changing what they return changes nothing.
        manifest = definition.to_manifest()
        manifest["nodes"].clear()
        definition.nodes[1].site["line"] = -1
        self.assertEqual(len(definition.to_manifest()["nodes"]), 5)
        self.assertGreater(definition.nodes[1].site["line"], 0)
        self.assertEqual(definition.nodes[0].to_manifest(), definition.to_manifest()["nodes"][0])
        self.assertEqual(workflow._node_meta("fix"), definition.to_manifest()["nodes"][3])
        with self.assertRaises(KeyError):
            workflow._node_meta("nope")

    def test_workflow_is_made_by_build_only(self) -> None:
        with self.assertRaises(TypeError):
            Workflow()
        with self.assertRaises(TypeError):
            Workflow({}, {}, {})

    def test_builder_state_does_not_leak_into_the_manifest(self) -> None:
        wf = WorkflowBuilder("T")
        a = wf.python("a", ident)
        b = wf.python("b", ident)
        wf.edge(a, b, when=always)
        wf.start(a)
        wf.output(b)
        workflow = wf.build()
        first = copy.deepcopy(workflow.definition.to_manifest())
        wf._graph.nodes[0].site["line"] = 999  # type: ignore[index]
        wf._graph.nodes[0].fields["timeout"] = 1.0
        self.assertEqual(workflow.definition.to_manifest(), first)
        self.assertEqual(workflow._node_meta("a"), first["nodes"][0])


if __name__ == "__main__":
    unittest.main()
