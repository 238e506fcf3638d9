"""Replays the shared graph table ``fixtures/graphs/cases.json`` through the real ``WorkflowBuilder``.

Each case is a list of builder operations followed by ``build()``; ``expect`` is ``"ok"`` or the rule id the
builder must raise. The same table drives the TypeScript validator (``packages/graph``), whose test
interpreter (``packages/graph/test/ops.ts``) turns the operations into a Definition without checking them;
for the ``ok`` cases we check that the builder emits exactly that Definition (sites aside).
"""

from __future__ import annotations

import json
import os
import unittest
from typing import Any, Dict, List, Optional

from chrys.workflows import BuilderScope, NodeHandle, SourceValue, WorkflowBuilder, WorkflowValue
from chrys.workflows._errors import WorkflowDefinitionError

from ._support import REPO_ROOT

CASES_PATH = os.path.join(REPO_ROOT, "fixtures", "graphs", "cases.json")


def ident(value: WorkflowValue) -> WorkflowValue:
    return value


def yes(value: WorkflowValue) -> bool:
    return True


def merge(sources: List[SourceValue]) -> str:
    return ""


class Replay:
    """Runs a case's operations; names resolve to the handles declared so far (unknown names to a
    ``NodeHandle(name)`` of no builder)."""

    def __init__(self, name: str) -> None:
        self.wf = WorkflowBuilder(name)
        self.handles: Dict[str, NodeHandle] = {}

    def handle(self, name: str) -> NodeHandle:
        return self.handles.get(name) or NodeHandle(name)

    def run(self, ops: List[Dict[str, Any]], scope: BuilderScope) -> None:
        for op in ops:
            kind = op["op"]
            if kind == "python":
                self.handles[op["name"]] = scope.python(op["name"], ident)
            elif kind == "agent":
                self.handles[op["name"]] = scope.agent(op["name"], profile=op["profile"])
            elif kind == "edge":
                scope.edge(self.handle(op["src"]), self.handle(op["dst"]), when=yes if op.get("when") else None)
            elif kind == "chain":
                scope.chain(*(self.handle(name) for name in op["nodes"]))
            elif kind == "switch":
                cases = [(yes, self.handle(name)) for name in op["cases"]]
                scope.switch(self.handle(op["src"]), cases, self.handle(op["default"]))
            elif kind == "join":
                sources = [self.handle(name) for name in op["sources"]]
                scope.join(sources, self.handle(op["dst"]), combine=merge if op.get("combine") else None)
            elif kind == "loop":
                self.loop(op)  # a body's scope has no loop(): inside a body this is the builder's, rejected
            elif kind == "start":
                self.wf.start(self.handle(op["node"]))  # likewise only the builder has start() and output()
            elif kind == "output":
                self.wf.output(self.handle(op["node"]))
            else:
                raise AssertionError(f"unknown op {kind!r}")

    def loop(self, op: Dict[str, Any]) -> None:
        def body(scope: BuilderScope) -> Any:
            self.run(op["body"], scope)
            return self.handle(op["entry"]), self.handle(op["exit"])

        self.handles[op["name"]] = self.wf.loop(
            op["name"], body, yes, op["max_iterations"], on_exhausted=op["on_exhausted"]
        )


def definition_from_ops(name: str, ops: List[Dict[str, Any]]) -> Dict[str, Any]:
    """A port of ``definitionFromOps`` in ``packages/graph/test/ops.ts`` (sites left out)."""
    definition: Dict[str, Any] = {
        "format": 1,
        "title": name,
        "description": None,
        "start": "",
        "outputs": [],
        "nodes": [],
        "edges": [],
        "sites_truncated": False,
    }
    nodes, edges = definition["nodes"], definition["edges"]

    def edge(source: str, target: str, scope: Optional[str], condition: Any) -> None:
        edges.append({"source": source, "target": target, "scope": scope, "condition": condition})

    def run(ops: List[Dict[str, Any]], scope: Optional[str]) -> None:
        for op in ops:
            kind = op["op"]
            if kind == "python":
                nodes.append({"id": op["name"], "scope": scope, "kind": "python", "timeout": 300, "retry": None,
                              "is_async": False, "takes_context": False})  # fmt: skip
            elif kind == "agent":
                nodes.append({"id": op["name"], "scope": scope, "kind": "agent", "profile": op["profile"],
                              "model": None, "instructions_suffix": None, "timeout": None, "retry": None})  # fmt: skip
            elif kind == "edge":
                edge(op["src"], op["dst"], scope, {"kind": "when"} if op.get("when") else None)
            elif kind == "chain":
                for source, target in zip(op["nodes"], op["nodes"][1:]):
                    edge(source, target, scope, None)
            elif kind == "switch":
                for index, target in enumerate(op["cases"]):
                    edge(op["src"], target, scope, {"kind": "case", "index": index})
                edge(op["src"], op["default"], scope, {"kind": "default"})
            elif kind == "join":
                join_id = f"join:{op['dst']}"
                nodes.append({"id": join_id, "scope": scope, "kind": "join", "sources": op["sources"],
                              "target": op["dst"], "has_combine": bool(op.get("combine"))})  # fmt: skip
                for source in op["sources"]:
                    edge(source, join_id, scope, None)
                edge(join_id, op["dst"], scope, None)
            elif kind == "loop":
                nodes.append({"id": op["name"], "scope": scope, "kind": "loop", "entry": op["entry"], "exit": op["exit"],
                              "max_iterations": op["max_iterations"], "on_exhausted": op["on_exhausted"]})  # fmt: skip
                run(op["body"], op["name"])
            elif kind == "start":
                definition["start"] = op["node"]
            elif kind == "output":
                definition["outputs"].append(op["node"])

    run(ops, None)
    return definition


def without_sites(manifest: Dict[str, Any]) -> Dict[str, Any]:
    manifest = dict(manifest)
    del manifest["build_site"]
    manifest["nodes"] = [{k: v for k, v in node.items() if k != "site"} for node in manifest["nodes"]]
    manifest["edges"] = [{k: v for k, v in edge.items() if k != "site"} for edge in manifest["edges"]]
    return manifest


class GraphCases(unittest.TestCase):
    maxDiff = None

    def test_every_case(self) -> None:
        with open(CASES_PATH, encoding="utf-8") as file:
            cases = json.load(file)
        self.assertGreaterEqual(len(cases), 25)
        names = [case["name"] for case in cases]
        self.assertEqual(len(names), len(set(names)), "case names are unique")
        for case in cases:
            with self.subTest(case["name"]):
                replay = Replay(case["name"])
                try:
                    replay.run(case["ops"], replay.wf)
                    workflow = replay.wf.build()
                except WorkflowDefinitionError as error:
                    self.assertEqual(case["expect"], error.rule, f"{case['name']}: {error}")
                    continue
                self.assertEqual(case["expect"], "ok", f"{case['name']} built, expected {case['expect']}")
                self.assertEqual(
                    without_sites(workflow.definition.to_manifest()),
                    definition_from_ops(case["name"], case["ops"]),
                )

    def test_every_graph_rule_has_a_case(self) -> None:
        """Every rule a Definition can show. Rules only a Python call can break (``start_twice``: the
        Definition holds one start; ``foreign_handle``: the validator sees an unknown node; argument types
        and values; ``chain_too_short``, ``switch_cases``, ``invalid_loop``, ``built_twice``,
        ``builder_frozen``) cannot be written as ops both sides agree on; test_builder_rules covers them."""
        with open(CASES_PATH, encoding="utf-8") as file:
            expected = {case["expect"] for case in json.load(file)}
        graph_rules = {
            "ok", "invalid_name", "duplicate_name", "not_top_level", "duplicate_output", "self_edge",
            "duplicate_edge", "cross_scope_edge", "nested_loop", "join_destination_edge", "join_sources",
            "switch_twice", "loop_boundary", "no_start", "no_outputs", "unreachable", "cycle",
        }  # fmt: skip
        self.assertEqual(graph_rules - expected, set())


if __name__ == "__main__":
    unittest.main()
