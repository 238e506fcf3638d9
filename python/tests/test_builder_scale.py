"""Large workflows: what the builder remembers between declarations (callable checks, call sites) changes no
rule and no site, the definition shares nothing with the builder, and the worker's loader hands over the built
manifest itself."""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import tempfile
import textwrap
import unittest
import weakref
from typing import Any, List

from chrys.workflows import BuilderScope, Retry, WorkflowBuilder, WorkflowValue
from chrys.workflows._errors import WorkflowDefinitionError
from chrys.workflows import _protocol as proto
from chrys.workflows._loader import LOAD_GC_THRESHOLD, load_workflow

from ._support import HAS_COLUMNS, REPO_ROOT, RuleTestCase, always, fan_out, here, ident


def declare_in_a_helper(scope: BuilderScope, name: str) -> Any:
    return scope.python(name, ident)  # the site of every node this helper declares


class OneFunctionManyDeclarations(RuleTestCase):
    def test_each_declaration_is_checked_in_its_own_role(self) -> None:
        async def fetch(value: WorkflowValue) -> str:
            return value.text

        wf = WorkflowBuilder("T")
        nodes = [wf.python(f"n{i}", fetch) for i in range(3)]
        self.assertEqual([wf._graph.by_id[f"n{i}"].fields["is_async"] for i in range(3)], [True] * 3)
        # The same function, accepted three times as a node, is still refused where async is not allowed.
        self.assert_rule("invalid_callable", lambda: wf.edge(nodes[0], nodes[1], when=fetch), node="n0->n1", says="async def")
        self.assert_rule("invalid_callable", lambda: wf.loop("l", body_of_one, fetch, 1), node="l", says="async def")

    def test_a_rejected_function_is_rejected_at_every_declaration(self) -> None:
        def with_default(value: Any = None) -> str:
            return ""

        wf = WorkflowBuilder("T")
        for name in ("a", "b", "c"):
            error = self.assert_rule("invalid_callable", lambda: wf.python(name, with_default), node=name)
            self.assertIn(f"fn of python({name!r})", str(error))
            self.assertIn("with_default(value: 'Any' = None)", str(error))
        self.assertEqual(wf._graph.nodes, [])

    def test_replaced_defaults_and_code_are_seen(self) -> None:
        def node(value: Any) -> str:
            return ""

        def with_context(value: Any, ctx: Any) -> str:
            return ""

        wf = WorkflowBuilder("T")
        wf.python("before", node)
        node.__defaults__ = ("x",)
        self.assert_rule("invalid_callable", lambda: wf.python("defaulted", node), says="has a default value")
        node.__defaults__ = None
        wf.python("restored", node)
        node.__code__ = with_context.__code__
        wf.python("two", node)
        takes_context = {n.id: n.fields["takes_context"] for n in wf._graph.nodes}
        self.assertEqual(takes_context, {"before": False, "restored": False, "two": True})

    def test_checked_functions_are_not_kept_alive(self) -> None:
        wf = WorkflowBuilder("T")
        refs = []
        for index in range(3):
            fn = eval("lambda value: value", {})  # a new function object each time
            wf.python(f"n{index}", fn)
            refs.append(weakref.ref(fn))
        del fn, wf
        gc.collect()
        self.assertEqual([ref() for ref in refs], [None, None, None])


def body_of_one(scope: BuilderScope) -> Any:
    node = scope.python("inner", ident)
    return node, node


class SitesOfRepeatedCalls(unittest.TestCase):
    def test_one_call_in_a_loop_gives_equal_separate_sites(self) -> None:
        wf = WorkflowBuilder("T")
        line = here() + 1
        handles = [wf.python(f"n{i}", ident) for i in range(3)]
        sites = [node.site for node in wf._graph.nodes]
        self.assertEqual([site["line"] for site in sites], [line] * 3)  # type: ignore[index]
        self.assertEqual(sites[0], sites[2])
        sites[0]["line"] = -1  # type: ignore[index]
        wf.chain(*handles)
        self.assertEqual(sites[1]["line"], line)  # type: ignore[index]

    def test_changing_an_error_site_changes_no_later_site(self) -> None:
        wf = WorkflowBuilder("T")
        errors: List[WorkflowDefinitionError] = []
        line = here() + 3
        for name in ("", "ok"):
            try:
                wf.python(name, ident)
            except WorkflowDefinitionError as error:
                errors.append(error)
                error.site["line"] = -1  # type: ignore[index]
        self.assertEqual(len(errors), 1)
        self.assertEqual(wf._graph.nodes[0].site["line"], line)  # type: ignore[index]

    def test_declarations_alternating_between_functions(self) -> None:
        wf = WorkflowBuilder("T")
        src = wf.python("src", ident)
        helper_line = declare_in_a_helper.__code__.co_firstlineno + 1
        edge_line = here() + 3
        for index in range(3):
            node = declare_in_a_helper(wf, f"n{index}")
            wf.edge(src, node)
        lines = [(node.id, node.site["line"]) for node in wf._graph.nodes[1:]]  # type: ignore[index]
        self.assertEqual(lines, [(f"n{i}", helper_line) for i in range(3)])
        self.assertEqual([edge.site["line"] for edge in wf._graph.edges], [edge_line] * 3)  # type: ignore[index]
        if HAS_COLUMNS:
            self.assertEqual(wf._graph.edges[0].site["column"], 13)  # type: ignore[index]
            self.assertEqual(wf._graph.nodes[1].site["column"], 12)  # type: ignore[index]


class DefinitionSharesNothing(unittest.TestCase):
    def test_nested_fields_are_copied_from_the_builder(self) -> None:
        wf = WorkflowBuilder("T")
        a = wf.python("a", ident, retry=Retry(3, 1.0))
        b = wf.python("b", ident)
        c = wf.python("c", ident)
        wf.switch(a, [(always, b)], default=c)
        d = wf.python("d", ident)
        wf.join([b, c], d)
        wf.start(a)
        wf.output(d)
        workflow = wf.build()
        before = workflow.definition.to_manifest()
        nodes = wf._graph.by_id
        nodes["a"].fields["retry"]["max_attempts"] = 99
        nodes["join:d"].fields["sources"].append("x")
        wf._graph.edges[0].condition["index"] = 99  # type: ignore[index]
        wf._graph.edges[0].site["line"] = -1  # type: ignore[index]
        self.assertEqual(workflow.definition.to_manifest(), before)

    def test_lookups_of_a_large_definition(self) -> None:
        wf = WorkflowBuilder("T")
        handles = [wf.python(f"n{i}", ident) for i in range(2_000)]
        wf.chain(*handles)
        wf.start(handles[0])
        wf.output(handles[-1])
        definition = wf.build().definition
        self.assertEqual(definition.node("n1234").id, "n1234")
        self.assertIs(definition.node("n7"), definition.nodes[7])
        with self.assertRaises(KeyError):
            definition.node("n2000")
        self.assertEqual(len(definition.edges), 1_999)
        self.assertEqual(repr(definition), "WorkflowDefinition(title='T', start='n0', outputs=['n1999'], nodes=2000, edges=1999)")


class LargeGraphs(unittest.TestCase):
    def test_fan_out_and_join(self) -> None:
        manifest = fan_out(4_000).definition.to_manifest()
        self.assertEqual(len(manifest["nodes"]), 4_003)
        self.assertEqual(len(manifest["edges"]), 8_001)
        self.assertEqual(manifest["nodes"][-1]["sources"], [f"b{i}" for i in range(4_000)])
        self.assertEqual([edge["target"] for edge in manifest["edges"][-2:]], ["join:sink", "sink"])
        sites = [node["site"] for node in manifest["nodes"]] + [edge["site"] for edge in manifest["edges"]]
        self.assertEqual(sum(site is not None for site in sites), 10_000)
        self.assertTrue(manifest["sites_truncated"])

    def test_unreachable_node_in_the_last_of_many_loops(self) -> None:
        wf = WorkflowBuilder("T")
        lines: List[int] = []

        def body(scope: BuilderScope) -> Any:
            name = scope._loop
            entry = scope.python(f"{name}.entry", ident)
            if name == "l49":
                lines.append(here() + 1)
                scope.python(f"{name}.stray", ident)
            return entry, entry

        loops = [wf.loop(f"l{i}", body, always, 1) for i in range(50)]
        wf.chain(*loops)
        wf.start(loops[0])
        wf.output(loops[-1])
        with self.assertRaises(WorkflowDefinitionError) as caught:
            wf.build()
        self.assertEqual((caught.exception.rule, caught.exception.node), ("unreachable", "l49.stray"))
        self.assertEqual(caught.exception.site["line"], lines[0])  # type: ignore[index]
        self.assertIn("entry 'l49.entry' of loop 'l49'", str(caught.exception))


class LoaderHandsOverTheManifest(unittest.TestCase):
    def test_loaded_definition_is_the_built_manifest(self) -> None:
        folder = tempfile.mkdtemp(prefix="icode-loader-test-")
        self.addCleanup(shutil.rmtree, folder, True)
        entry = os.path.join(folder, "many.py")
        with open(entry, "w", encoding="utf-8") as handle:
            handle.write(
                textwrap.dedent(
                    """
                    from chrys.workflows import WorkflowBuilder

                    def echo(value):
                        return value

                    wf = WorkflowBuilder("Many")
                    nodes = [wf.python("n%d" % i, echo) for i in range(500)]
                    wf.chain(*nodes)
                    wf.start(nodes[0])
                    wf.output(nodes[-1])
                    workflow = wf.build()
                    """
                )
            )
        loaded, diagnostics, truncated = load_workflow(entry, None, os.path.join(REPO_ROOT, "python"))
        self.assertEqual((diagnostics, truncated), ([], False))
        assert loaded is not None
        workflow = loaded.module.workflow
        self.assertEqual(loaded.definition, workflow.definition.to_manifest())
        self.assertIs(loaded.definition, workflow._shared_manifest())
        self.assertEqual(len(loaded.callables), 500)
        self.assertEqual(loaded.definition["nodes"][499]["site"]["line"], 8)
        self.assertEqual(json.loads(json.dumps(loaded.definition)), loaded.definition)
        # What the worker sends: the same bytes as the encoder that looks for cycles.
        message = proto.loaded(1, loaded.definition, {"text": "", "truncated": False})
        self.assertEqual(proto.encode(message, tree=True), proto.encode(message))


class LoaderCollectsLessOften(unittest.TestCase):
    """While the workflow module runs, the cyclic collector's first threshold is raised; it is put back after
    the run, unless the module set thresholds of its own."""

    def load(self, body: str) -> Any:
        folder = tempfile.mkdtemp(prefix="icode-loader-gc-test-")
        self.addCleanup(shutil.rmtree, folder, True)
        entry = os.path.join(folder, "gc_probe.py")
        with open(entry, "w", encoding="utf-8") as handle:
            handle.write(
                "import gc\n"
                "from chrys.workflows import WorkflowBuilder\n"
                "seen = gc.get_threshold()\n"
                f"{body}\n"
                "wf = WorkflowBuilder('GC')\n"
                "node = wf.python('n', lambda value: value)\n"
                "wf.start(node)\n"
                "wf.output(node)\n"
                "workflow = wf.build()\n"
            )
        self.addCleanup(sys.modules.pop, "gc_probe", None)
        loaded, diagnostics, _ = load_workflow(entry, None, os.path.join(REPO_ROOT, "python"))
        self.assertEqual(diagnostics, [])
        assert loaded is not None
        return loaded.module

    def test_threshold_is_raised_while_the_module_runs_and_put_back(self) -> None:
        saved = gc.get_threshold()
        self.addCleanup(gc.set_threshold, *saved)
        gc.set_threshold(700, 10, 10)
        module = self.load("")
        self.assertEqual(module.seen, (LOAD_GC_THRESHOLD, 10, 10))
        self.assertEqual(gc.get_threshold(), (700, 10, 10))

    def test_thresholds_the_module_sets_are_kept(self) -> None:
        saved = gc.get_threshold()
        self.addCleanup(gc.set_threshold, *saved)
        gc.set_threshold(700, 10, 10)
        self.load("gc.set_threshold(1234, 5, 5)")
        self.assertEqual(gc.get_threshold(), (1234, 5, 5))

    def test_a_module_that_fails_puts_it_back_too(self) -> None:
        saved = gc.get_threshold()
        self.addCleanup(gc.set_threshold, *saved)
        gc.set_threshold(700, 10, 10)
        folder = tempfile.mkdtemp(prefix="icode-loader-gc-test-")
        self.addCleanup(shutil.rmtree, folder, True)
        entry = os.path.join(folder, "gc_fails.py")
        with open(entry, "w", encoding="utf-8") as handle:
            handle.write("raise RuntimeError('top-level failure')\n")
        loaded, diagnostics, _ = load_workflow(entry, None, os.path.join(REPO_ROOT, "python"))
        self.assertIsNone(loaded)
        self.assertEqual(diagnostics[0]["code"], "load_error")
        self.assertEqual(gc.get_threshold(), (700, 10, 10))


if __name__ == "__main__":
    unittest.main()
