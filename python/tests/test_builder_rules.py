"""One test per builder rule: each checks the exception class, ``rule`` and that the recorded site (and the
last traceback frame outside the SDK) is the author's line."""

from __future__ import annotations

import functools
import unittest
from typing import Any, List

from chrys.workflows import (
    BuilderScope,
    NodeHandle,
    Retry,
    SourceValue,
    WorkflowBuilder,
    WorkflowValue,
)
from chrys.workflows._errors import WorkflowDefinitionError, WorkflowDefinitionTypeError

from ._support import RuleTestCase, always, here, ident, with_ctx

TE = WorkflowDefinitionTypeError


def two(value: WorkflowValue, other: WorkflowValue) -> bool:
    return True


async def async_fn(value: WorkflowValue) -> str:
    return value.text


async def async_cond(value: WorkflowValue) -> bool:
    return True


def combine(sources: List[SourceValue]) -> str:
    return "x"


def body_one(scope: BuilderScope) -> Any:
    node = scope.python("inner", ident)
    return node, node


class NamesAndTitles(RuleTestCase):
    def test_title_must_be_a_nonblank_str(self) -> None:
        self.assert_rule("invalid_title", lambda: WorkflowBuilder(""))
        self.assert_rule("invalid_title", lambda: WorkflowBuilder("   "))
        self.assert_rule("invalid_title", lambda: WorkflowBuilder(None), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_title", lambda: WorkflowBuilder("bad \ud800"))

    def test_description_must_be_a_str_or_none(self) -> None:
        self.assert_rule("invalid_description", lambda: WorkflowBuilder("T", description=3), cls=TE)  # type: ignore[arg-type]
        WorkflowBuilder("T", description="")

    def test_name_rules(self) -> None:
        wf = WorkflowBuilder("T")
        self.assert_rule("invalid_name", lambda: wf.python("", ident), says="empty")
        self.assert_rule("invalid_name", lambda: wf.python("join:x", ident), node="join:x", says="join:")
        self.assert_rule("invalid_name", lambda: wf.agent("a->b", profile="p"), node="a->b", says="->")
        self.assert_rule("invalid_name", lambda: wf.python(3, ident), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_name", lambda: wf.python("x\udc00", ident))
        self.assert_rule("invalid_name", lambda: wf.loop("", body_one, always, 1))
        # Allowed: any other nonempty name, "join" alone, ":" and "-" and ">" apart.
        for name in ("join", "a-b", "a>b", "x:join:", " padded ", "名前"):
            wf.python(name, ident)

    def test_duplicate_names_across_the_whole_workflow(self) -> None:
        wf = WorkflowBuilder("T")
        wf.python("a", ident)
        self.assert_rule("duplicate_name", lambda: wf.python("a", ident), node="a", says="already exists")
        self.assert_rule("duplicate_name", lambda: wf.agent("a", profile="p"), node="a")
        self.assert_rule("duplicate_name", lambda: wf.loop("a", body_one, always, 1), node="a")
        wf.loop("l1", body_one, always, 1)  # declares "inner" inside the body
        self.assert_rule("duplicate_name", lambda: wf.python("inner", ident), node="inner")
        self.assert_rule("duplicate_name", lambda: wf.python("l1", ident), node="l1")

        def body(scope: BuilderScope) -> Any:
            scope.python("inner", ident)
            raise AssertionError("not reached")

        line = here() - 3
        self.assert_rule("duplicate_name", lambda: wf.loop("l2", body, always, 1), line=line, node="inner")

        def body_uses_own_loop_name(scope: BuilderScope) -> Any:
            node = scope.python("l3", ident)
            return node, node

        line = here() - 3
        self.assert_rule("duplicate_name", lambda: wf.loop("l3", body_uses_own_loop_name, always, 1), line=line)


class Handles(RuleTestCase):
    def test_node_handle_is_constructible_but_rejected(self) -> None:
        wf = WorkflowBuilder("T")
        a = wf.python("a", ident)
        fake = NodeHandle("a")
        self.assertEqual(fake.node_id, "a")
        self.assert_rule("foreign_handle", lambda: wf.start(fake), node="a")
        self.assert_rule("foreign_handle", lambda: wf.output(fake))
        self.assert_rule("foreign_handle", lambda: wf.edge(a, NodeHandle("b")), node="b")
        self.assert_rule("foreign_handle", lambda: wf.chain(a, fake))
        self.assert_rule("foreign_handle", lambda: wf.switch(fake, [], a))
        self.assert_rule("foreign_handle", lambda: wf.switch(a, [(always, fake)], a))
        self.assert_rule("foreign_handle", lambda: wf.join([fake], a))
        self.assert_rule("foreign_handle", lambda: wf.join([a], NodeHandle("zzz")))

        def body(scope: BuilderScope) -> Any:
            return NodeHandle("x"), NodeHandle("x")

        self.assert_rule("foreign_handle", lambda: wf.loop("l", body, always, 1))

    def test_handle_of_another_builder_is_foreign(self) -> None:
        wf, other = WorkflowBuilder("T"), WorkflowBuilder("U")
        a = wf.python("a", ident)
        b = other.python("b", ident)
        other_a = other.python("a", ident)
        self.assert_rule("foreign_handle", lambda: wf.edge(a, b))
        self.assert_rule("foreign_handle", lambda: wf.edge(a, other_a), node="a")
        self.assert_rule("foreign_handle", lambda: wf.start(other_a))

    def test_arguments_that_are_not_handles(self) -> None:
        wf = WorkflowBuilder("T")
        a = wf.python("a", ident)
        self.assert_rule("invalid_handle", lambda: wf.start("a"), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_handle", lambda: wf.output(None), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_handle", lambda: wf.edge(a, "b"), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_handle", lambda: wf.chain(a, 1), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_handle", lambda: wf.switch(a, [], "d"), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_handle", lambda: wf.join([a, "b"], a), cls=TE)  # type: ignore[list-item]

    def test_node_id_is_read_only(self) -> None:
        handle = WorkflowBuilder("T").python("a", ident)
        with self.assertRaises(AttributeError):
            handle.node_id = "b"  # type: ignore[misc]
        with self.assertRaises(AttributeError):
            del handle.node_id  # type: ignore[misc]
        self.assertEqual(handle.node_id, "a")
        self.assertEqual(repr(handle), "NodeHandle('a')")
        with self.assertRaises(TypeError):
            NodeHandle(1)  # type: ignore[arg-type]


class StartAndOutputs(RuleTestCase):
    def test_start_once(self) -> None:
        wf = WorkflowBuilder("T")
        a, b = wf.python("a", ident), wf.python("b", ident)
        wf.start(a)
        error = self.assert_rule("start_twice", lambda: wf.start(b), node="b")
        self.assertIn("'a'", str(error))
        self.assert_rule("start_twice", lambda: wf.start(a))

    def test_start_and_output_must_be_top_level(self) -> None:
        wf = WorkflowBuilder("T")
        captured: List[NodeHandle] = []

        def body(scope: BuilderScope) -> Any:
            node = scope.python("inner", ident)
            captured.append(node)
            return node, node

        wf.loop("l", body, always, 2)
        self.assert_rule("not_top_level", lambda: wf.start(captured[0]), node="inner", says="loop 'l'")
        self.assert_rule("not_top_level", lambda: wf.output(captured[0]), node="inner")

    def test_start_output_and_build_inside_a_body_are_rejected(self) -> None:
        wf = WorkflowBuilder("T")
        top = wf.python("top", ident)
        for call in ("start", "output", "build"):

            def body(scope: BuilderScope) -> Any:
                node = scope.python("inner", ident)
                if call == "build":
                    wf.build()
                else:
                    getattr(wf, call)(top)
                return node, node

            line = here() - (5 if call == "build" else 3)
            self.assert_rule("not_top_level", lambda: wf.loop("l", body, always, 1), line=line)
        # The rejected loops left nothing behind: the names are free and the start is unset.
        wf.start(top)
        wf.output(top)
        wf.loop("l", body_one, always, 1)

    def test_output_once_per_node(self) -> None:
        wf = WorkflowBuilder("T")
        a, b = wf.python("a", ident), wf.python("b", ident)
        wf.output(a)
        wf.output(b)
        self.assert_rule("duplicate_output", lambda: wf.output(a), node="a")


class Edges(RuleTestCase):
    def setUp(self) -> None:
        self.wf = WorkflowBuilder("T")
        self.a = self.wf.python("a", ident)
        self.b = self.wf.python("b", ident)
        self.c = self.wf.python("c", ident)

    def test_no_self_edge(self) -> None:
        wf, a = self.wf, self.a
        self.assert_rule("self_edge", lambda: wf.edge(a, a), node="a->a")
        self.assert_rule("self_edge", lambda: wf.chain(a, a))
        self.assert_rule("self_edge", lambda: wf.switch(a, [(always, a)], self.b))
        self.assert_rule("self_edge", lambda: wf.switch(a, [], a))

    def test_no_duplicate_edge(self) -> None:
        wf, a, b, c = self.wf, self.a, self.b, self.c
        wf.edge(a, b)
        self.assert_rule("duplicate_edge", lambda: wf.edge(a, b), node="a->b")
        self.assert_rule("duplicate_edge", lambda: wf.edge(a, b, when=always), node="a->b")
        self.assert_rule("duplicate_edge", lambda: wf.chain(c, a, b))
        self.assert_rule("duplicate_edge", lambda: wf.switch(a, [(always, c)], b), node="a->b")
        self.assert_rule("duplicate_edge", lambda: wf.switch(c, [(always, a), (always, a)], b), node="c->a")
        self.assert_rule("duplicate_edge", lambda: wf.switch(c, [(always, a)], a), node="c->a")
        self.assert_rule("duplicate_edge", lambda: wf.chain(c, a, c, a), node="c->a")
        d = wf.python("d", ident)
        # The opposite direction is another edge (a cycle, caught by build()).
        wf.edge(b, a)

    def test_rejected_calls_add_nothing(self) -> None:
        wf, a, b, c = self.wf, self.a, self.b, self.c
        wf.edge(b, c)
        self.assert_rule("duplicate_edge", lambda: wf.chain(a, b, c))
        self.assert_rule("duplicate_edge", lambda: wf.switch(a, [(always, b)], b))
        wf.chain(a, b)  # a->b was not added by the rejected calls
        wf.switch(a, [(always, c)], wf.python("d", ident))  # and a has no switch yet
        wf.start(a)
        wf.output(c)
        definition = wf.build().definition
        self.assertEqual([(e.source, e.target) for e in definition.edges], [("b", "c"), ("a", "b"), ("a", "c"), ("a", "d")])

    def test_edges_cannot_cross_a_loop_boundary(self) -> None:
        wf, a, b = self.wf, self.a, self.b
        inner: List[NodeHandle] = []

        def body(scope: BuilderScope) -> Any:
            x = scope.python("x", ident)
            y = scope.python("y", ident)
            inner.extend([x, y])
            scope.edge(x, y)
            return x, y

        wf.loop("l", body, always, 3)
        x, y = inner
        self.assert_rule("cross_scope_edge", lambda: wf.edge(a, x), node="a->x", says="loop boundary")
        self.assert_rule("cross_scope_edge", lambda: wf.edge(y, b), node="y->b")
        self.assert_rule("cross_scope_edge", lambda: wf.chain(x, y), node="x->y")  # body nodes, top-level call
        self.assert_rule("cross_scope_edge", lambda: wf.join([a, y], b))
        self.assert_rule("cross_scope_edge", lambda: wf.switch(a, [(always, x)], b), node="a->x")

        def body2(scope: BuilderScope) -> Any:
            z = scope.python("z", ident)
            scope.edge(z, a)
            return z, z

        line = here() - 3
        self.assert_rule("cross_scope_edge", lambda: wf.loop("l2", body2, always, 3), line=line, node="z->a")

        def body3(scope: BuilderScope) -> Any:
            z = scope.python("z", ident)
            scope.edge(z, x)
            return z, z

        line = here() - 3
        self.assert_rule("cross_scope_edge", lambda: wf.loop("l3", body3, always, 3), line=line, node="z->x")

    def test_join_destination_has_no_other_incoming_edge(self) -> None:
        wf, a, b, c = self.wf, self.a, self.b, self.c
        d = wf.python("d", ident)
        wf.edge(a, c)
        self.assert_rule("join_destination_edge", lambda: wf.join([a, b], c), node="c")
        wf.join([a, b], d)
        self.assert_rule("join_destination_edge", lambda: wf.edge(c, d), node="c->d")
        self.assert_rule("join_destination_edge", lambda: wf.chain(c, d))
        self.assert_rule("join_destination_edge", lambda: wf.switch(c, [], d))
        self.assert_rule("join_destination_edge", lambda: wf.join([c], d), node="d")

    def test_join_sources(self) -> None:
        wf, a, b = self.wf, self.a, self.b
        self.assert_rule("join_sources", lambda: wf.join([], b), node="join:b")
        self.assert_rule("join_sources", lambda: wf.join((), b))
        self.assert_rule("join_sources", lambda: wf.join(a, b), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("join_sources", lambda: wf.join("a", b), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("join_sources", lambda: wf.join({a}, b), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("join_sources", lambda: wf.join([a, wf.python("c2", ident), a], b), node="join:b", says="twice")
        wf.join((a,), b)

    def test_one_switch_per_source(self) -> None:
        wf, a, b, c = self.wf, self.a, self.b, self.c
        wf.switch(a, [(always, b)], c)
        d = wf.python("d", ident)
        self.assert_rule("switch_twice", lambda: wf.switch(a, [], d), node="a")
        wf.edge(a, d)  # a switch and ordinary edges coexist

    def test_switch_cases_are_condition_destination_pairs(self) -> None:
        wf, a, b, c = self.wf, self.a, self.b, self.c
        self.assert_rule("switch_cases", lambda: wf.switch(a, None, c), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("switch_cases", lambda: wf.switch(a, (always, b), c), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("switch_cases", lambda: wf.switch(a, [(b, always)], c), cls=TE, says="condition first")  # type: ignore[list-item]
        self.assert_rule("switch_cases", lambda: wf.switch(a, [(always,)], c))  # type: ignore[list-item]
        self.assert_rule("switch_cases", lambda: wf.switch(a, [(always, b, c)], c))  # type: ignore[list-item]
        self.assert_rule("switch_cases", lambda: wf.switch(a, [(always, "b")], c), cls=TE)  # type: ignore[list-item]
        self.assert_rule("switch_cases", lambda: wf.switch(a, ["ab"], c), cls=TE)  # type: ignore[list-item]
        self.assert_rule("invalid_callable", lambda: wf.switch(a, [(None, b)], c), cls=TE)  # type: ignore[list-item]
        self.assert_rule("invalid_callable", lambda: wf.switch(a, [(async_cond, b)], c), node="a->b")
        self.assert_rule("invalid_callable", lambda: wf.switch(a, [(always, b), (two, c)], a), node="a->c")
        wf.switch(a, [[always, b]], c)  # type: ignore[list-item]  # a list pair is a pair too

    def test_chain_needs_two_nodes(self) -> None:
        wf, a = self.wf, self.a
        self.assert_rule("chain_too_short", lambda: wf.chain())
        self.assert_rule("chain_too_short", lambda: wf.chain(a))


class Callables(RuleTestCase):
    def test_fn_signatures(self) -> None:
        wf = WorkflowBuilder("T")

        def none() -> str:
            return ""

        def three(a: Any, b: Any, c: Any) -> str:
            return ""

        def default(value: Any = None) -> str:
            return ""

        def second_default(value: Any, ctx: Any = None) -> str:
            return ""

        def star(value: Any, *rest: Any) -> str:
            return ""

        def stars(value: Any, **rest: Any) -> str:
            return ""

        def required_kw(value: Any, *, flag: bool) -> str:
            return ""

        def generator(value: Any) -> Any:
            yield value

        async def async_generator(value: Any) -> Any:
            yield value

        for fn in (none, three, default, second_default, star, stars, required_kw, generator, async_generator):
            self.assert_rule("invalid_callable", lambda: wf.python("n", fn), node="n")
        self.assert_rule("invalid_callable", lambda: wf.python("n", "ident"), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_callable", lambda: wf.python("n", None), cls=TE)  # type: ignore[arg-type]

    def test_accepted_fn_shapes(self) -> None:
        wf = WorkflowBuilder("T")

        def optional_kw(value: Any, *, flag: bool = False) -> str:
            return ""

        def positional_only(value: Any, ctx: Any, /) -> str:  # noqa: E225 (3.8+ syntax)
            return ""

        class Node:
            def method(self, value: Any) -> str:
                return ""

            def __call__(self, value: Any, ctx: Any) -> str:
                return ""

        class AsyncNode:
            async def __call__(self, value: Any) -> str:
                return ""

        accepted = {
            "ident": (ident, False, False),
            "ctx": (with_ctx, False, True),
            "async": (async_fn, True, False),
            "lambda": (lambda v: v, False, False),
            "optional_kw": (optional_kw, False, False),
            "positional_only": (positional_only, False, True),
            "method": (Node().method, False, False),
            "object": (Node(), False, True),
            "async_object": (AsyncNode(), True, False),
            "partial": (functools.partial(three_args, 1), False, True),
            "async_partial": (functools.partial(async_two, 1), True, False),
        }
        for name, (fn, _, _) in accepted.items():
            wf.python(name, fn)
        nodes = {node.id: node.manifest() for node in wf._graph.nodes}
        for name, (_, is_async, takes_context) in accepted.items():
            self.assertEqual((nodes[name]["is_async"], nodes[name]["takes_context"]), (is_async, takes_context), name)

    def test_conditions_until_combine_and_body(self) -> None:
        wf = WorkflowBuilder("T")
        a, b = wf.python("a", ident), wf.python("b", ident)

        def default(value: Any = None) -> bool:
            return True

        for bad in (two, default, async_cond, lambda: True, lambda *v: True):
            self.assert_rule("invalid_callable", lambda: wf.edge(a, b, when=bad), node="a->b")
            self.assert_rule("invalid_callable", lambda: wf.loop("l", body_one, bad, 1), node="l")
            self.assert_rule("invalid_callable", lambda: wf.join([a], b, combine=bad), node="join:b")
            self.assert_rule("invalid_callable", lambda: wf.loop("l", bad, always, 1), node="l")
        self.assert_rule("invalid_callable", lambda: wf.edge(a, b, when=True), cls=TE)  # type: ignore[arg-type]

        async def async_combine(sources: Any) -> str:
            return ""

        async def async_body(scope: Any) -> Any:
            return None

        self.assert_rule("invalid_callable", lambda: wf.join([a], b, combine=async_combine), says="async def")
        self.assert_rule("invalid_callable", lambda: wf.loop("l", async_body, always, 1), says="async def")
        # Nothing was declared by the rejected calls.
        wf.edge(a, b, when=lambda value: True)
        wf.loop("l", body_one, always, 1)


def three_args(x: Any, value: Any, ctx: Any) -> str:
    return ""


async def async_two(x: Any, value: Any) -> str:
    return ""


class Options(RuleTestCase):
    def test_timeout(self) -> None:
        wf = WorkflowBuilder("T")
        for bad in (0, -1, 0.0, float("nan"), float("inf"), -float("inf")):
            self.assert_rule("invalid_timeout", lambda: wf.python("n", ident, timeout=bad), node="n")
            self.assert_rule("invalid_timeout", lambda: wf.agent("n", profile="p", timeout=bad), node="n")
        for bad_type in ("5", True, [5]):
            self.assert_rule("invalid_timeout", lambda: wf.python("n", ident, timeout=bad_type), cls=TE)  # type: ignore[arg-type]
        wf.python("none", ident, timeout=None)
        wf.python("int", ident, timeout=5)
        wf.python("small", ident, timeout=0.001)
        wf.agent("agent", profile="p", timeout=1e9)
        fields = {n.id: n.fields["timeout"] for n in wf._graph.nodes}
        self.assertEqual(fields, {"none": None, "int": 5.0, "small": 0.001, "agent": 1e9})

    def test_retry(self) -> None:
        wf = WorkflowBuilder("T")
        self.assert_rule("invalid_retry", lambda: wf.python("n", ident, retry=3), cls=TE, node="n")  # type: ignore[arg-type]
        self.assert_rule("invalid_retry", lambda: wf.agent("n", profile="p", retry={"max_attempts": 3}), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_retry", lambda: Retry(0))
        self.assert_rule("invalid_retry", lambda: Retry(-2))
        self.assert_rule("invalid_retry", lambda: Retry(2**53))
        self.assert_rule("invalid_retry", lambda: Retry(1.0), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_retry", lambda: Retry(True), cls=TE)
        self.assert_rule("invalid_retry", lambda: Retry("3"), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_retry", lambda: Retry(1, -0.5))
        self.assert_rule("invalid_retry", lambda: Retry(1, float("inf")))
        self.assert_rule("invalid_retry", lambda: Retry(1, float("nan")))
        self.assert_rule("invalid_retry", lambda: Retry(1, "1"), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_retry", lambda: Retry(1, False), cls=TE)
        retry = Retry(3, 2)
        self.assertEqual((retry.max_attempts, retry.backoff), (3, 2.0))
        self.assertEqual(Retry(1), Retry(max_attempts=1, backoff=0.0))
        with self.assertRaises(AttributeError):
            retry.max_attempts = 4  # type: ignore[misc]
        wf.python("n", ident, retry=retry)
        self.assertEqual(wf._graph.nodes[0].fields["retry"], {"max_attempts": 3, "backoff": 2.0})

    def test_agent_options(self) -> None:
        wf = WorkflowBuilder("T")
        self.assert_rule("invalid_agent", lambda: wf.agent("n", profile=""), node="n")
        self.assert_rule("invalid_agent", lambda: wf.agent("n", profile="  "))
        self.assert_rule("invalid_agent", lambda: wf.agent("n", profile=None), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_agent", lambda: wf.agent("n", profile="p", model=""))
        self.assert_rule("invalid_agent", lambda: wf.agent("n", profile="p", model=3), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_agent", lambda: wf.agent("n", profile="p", instructions_suffix=b"x"), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_agent", lambda: wf.agent("n", profile="p\ud800"))
        with self.assertRaises(TypeError):
            wf.agent("n")  # type: ignore[call-arg]  # profile is a required keyword
        wf.agent("n", profile="p", instructions_suffix="")


class Loops(RuleTestCase):
    def test_no_nested_loops(self) -> None:
        wf = WorkflowBuilder("T")

        def outer(scope: BuilderScope) -> Any:
            node = scope.python("a", ident)
            wf.loop("inner", body_one, always, 1)
            return node, node

        line = here() - 3
        error = self.assert_rule("nested_loop", lambda: wf.loop("outer", outer, always, 1), line=line, node="outer")
        self.assertIn("nested loops are not supported", str(error))
        self.assertFalse(hasattr(BuilderScope, "loop"))
        seen: List[str] = []

        def probe(scope: BuilderScope) -> Any:
            self.assertFalse(hasattr(scope, "loop"))
            try:
                scope.loop  # type: ignore[attr-defined]  # noqa: B018
            except AttributeError as error:
                seen.append(str(error))
            node = scope.python("p", ident)
            return node, node

        wf.loop("probe", probe, always, 1)
        self.assertIn("nested loops are not supported", seen[0])

    def test_loop_parameters(self) -> None:
        wf = WorkflowBuilder("T")
        self.assert_rule("invalid_loop", lambda: wf.loop("l", body_one, always, 0), node="l")
        self.assert_rule("invalid_loop", lambda: wf.loop("l", body_one, always, -1))
        self.assert_rule("invalid_loop", lambda: wf.loop("l", body_one, always, 2**53))
        self.assert_rule("invalid_loop", lambda: wf.loop("l", body_one, always, True), cls=TE)
        self.assert_rule("invalid_loop", lambda: wf.loop("l", body_one, always, 2.0), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_loop", lambda: wf.loop("l", body_one, always, None), cls=TE)  # type: ignore[arg-type]
        self.assert_rule("invalid_loop", lambda: wf.loop("l", body_one, always, 1, "stop"))
        self.assert_rule("invalid_loop", lambda: wf.loop("l", body_one, always, 1, on_exhausted="Fail"))
        self.assert_rule("invalid_loop", lambda: wf.loop("l", body_one, always, 1, None), cls=TE)  # type: ignore[arg-type]
        for shape in (None, "ab", (), [1, 2, 3]):

            def body(scope: BuilderScope) -> Any:
                scope.python("x", ident)
                return shape

            self.assert_rule("invalid_loop", lambda: wf.loop("l", body, always, 1), cls=TE, says="(entry, exit)")

        def half(scope: BuilderScope) -> Any:
            node = scope.python("x", ident)
            return node, "x"

        self.assert_rule("invalid_loop", lambda: wf.loop("l", half, always, 1), cls=TE)
        handle = wf.loop("l", body_one, always, 1, "fail")
        self.assertEqual(handle.node_id, "l")

    def test_entry_and_exit_belong_to_the_body(self) -> None:
        wf = WorkflowBuilder("T")
        top = wf.python("top", ident)
        captured: List[NodeHandle] = []

        def keep(scope: BuilderScope) -> Any:
            node = scope.python("kept", ident)
            captured.append(node)
            return node, node

        wf.loop("first", keep, always, 1)

        def returns_top(scope: BuilderScope) -> Any:
            node = scope.python("x", ident)
            return top, node

        def returns_other_body(scope: BuilderScope) -> Any:
            node = scope.python("x", ident)
            return node, captured[0]

        def empty(scope: BuilderScope) -> Any:
            return top, top

        self.assert_rule("loop_boundary", lambda: wf.loop("l", returns_top, always, 1), node="l", says="entry 'top'")
        self.assert_rule("loop_boundary", lambda: wf.loop("l", returns_other_body, always, 1), says="exit 'kept'")
        self.assert_rule("loop_boundary", lambda: wf.loop("l", empty, always, 1))

    def test_failed_body_leaves_nothing_behind(self) -> None:
        wf = WorkflowBuilder("T")
        start = wf.python("start", ident)

        def failing(scope: BuilderScope) -> Any:
            x = scope.python("x", ident)
            y = scope.python("y", ident)
            scope.edge(x, y)
            raise RuntimeError("author's bug")

        with self.assertRaises(RuntimeError):
            wf.loop("l", failing, always, 1)

        def fine(scope: BuilderScope) -> Any:
            x = scope.python("x", ident)
            y = scope.python("y", ident)
            scope.edge(x, y)
            return x, y

        loop = wf.loop("l", fine, always, 1)
        wf.edge(start, loop)
        wf.start(start)
        wf.output(loop)
        manifest = wf.build().definition.to_manifest()
        self.assertEqual([node["id"] for node in manifest["nodes"]], ["start", "l", "x", "y"])
        self.assertEqual(len(manifest["edges"]), 2)

    def test_scope_is_closed_after_the_body_returns(self) -> None:
        wf = WorkflowBuilder("T")
        kept: List[Any] = []

        def keep(scope: BuilderScope) -> Any:
            node = scope.python("x", ident)
            kept.extend([scope, node])
            return node, node

        wf.loop("l", keep, always, 1)
        scope, x = kept
        self.assert_rule("scope_closed", lambda: scope.python("late", ident))
        self.assert_rule("scope_closed", lambda: scope.edge(x, x))
        with self.assertRaises(TypeError):
            BuilderScope()


class Build(RuleTestCase):
    def test_no_start(self) -> None:
        wf = WorkflowBuilder("T")
        wf.output(wf.python("a", ident))
        self.assert_rule("no_start", lambda: wf.build())

    def test_no_outputs(self) -> None:
        wf = WorkflowBuilder("T")
        wf.start(wf.python("a", ident))
        self.assert_rule("no_outputs", lambda: wf.build())

    def _graph_error(self, rule: str, wf: WorkflowBuilder, node: str, node_line: int) -> WorkflowDefinitionError:
        build_line = here() + 1
        with self.assertRaises(WorkflowDefinitionError) as caught:
            wf.build()
        error = caught.exception
        self.assertNotIsInstance(error, TypeError)
        self.assertEqual(error.rule, rule, str(error))
        self.assertEqual(error.node, node)
        assert error.site is not None
        self.assertEqual(error.site["line"], node_line, "the site is the offending node's declaration")
        self.assertEqual(error.notes, [{"message": "build() called here", "file": __file__, "line": build_line + 1}])
        return error

    def test_unreachable_top_level_node(self) -> None:
        wf = WorkflowBuilder("T")
        a = wf.python("a", ident)
        line = here() + 1
        wf.python("island", ident)
        wf.start(a)
        wf.output(a)
        self._graph_error("unreachable", wf, "island", line)

    def test_unreachable_body_node(self) -> None:
        wf = WorkflowBuilder("T")
        lines: List[int] = []

        def body(scope: BuilderScope) -> Any:
            x = scope.python("x", ident)
            y = scope.python("y", ident)
            lines.append(here() + 1)
            stray = scope.python("stray", ident)
            scope.edge(x, y)
            scope.edge(stray, y)
            return x, y

        loop = wf.loop("l", body, always, 2)
        wf.start(loop)
        wf.output(loop)
        error = self._graph_error("unreachable", wf, "stray", lines[0])
        self.assertIn("entry 'x' of loop 'l'", str(error))

    def test_unreachable_island_cycle_is_reported_as_unreachable(self) -> None:
        wf = WorkflowBuilder("T")
        a = wf.python("a", ident)
        line = here() + 1
        p = wf.python("p", ident)
        q = wf.python("q", ident)
        wf.chain(p, q, p)
        wf.start(a)
        wf.output(a)
        self._graph_error("unreachable", wf, "p", line)

    def test_cycle(self) -> None:
        wf = WorkflowBuilder("T")
        a = wf.python("a", ident)
        line = here() + 1
        b = wf.python("b", ident)
        c = wf.python("c", ident)
        wf.chain(a, b, c)
        wf.edge(c, b, when=always)
        wf.start(a)
        wf.output(c)
        error = self._graph_error("cycle", wf, "b", line)
        self.assertIn("b -> c -> b", str(error))

    def test_cycle_through_a_join(self) -> None:
        wf = WorkflowBuilder("T")
        line = here() + 1
        a = wf.python("a", ident)
        b = wf.python("b", ident)
        wf.edge(a, b)
        wf.join([a, b], a)  # a -> join:a -> a
        wf.start(a)
        wf.output(b)
        error = self._graph_error("cycle", wf, "a", line)
        self.assertIn("a -> b -> join:a -> a", str(error))

    def test_cycle_in_a_body(self) -> None:
        wf = WorkflowBuilder("T")
        lines: List[int] = []

        def body(scope: BuilderScope) -> Any:
            x = scope.python("x", ident)
            lines.append(here() + 1)
            y = scope.python("y", ident)
            z = scope.python("z", ident)
            scope.chain(x, y, z, y)
            return x, z

        loop = wf.loop("l", body, always, 2)
        wf.start(loop)
        wf.output(loop)
        self._graph_error("cycle", wf, "y", lines[0])

    def test_built_once_and_frozen(self) -> None:
        wf = WorkflowBuilder("T")
        a = wf.python("a", ident)
        wf.start(a)
        wf.output(a)
        self.assertEqual(wf.build().definition.start, "a")
        self.assert_rule("built_twice", lambda: wf.build())
        self.assert_rule("builder_frozen", lambda: wf.python("b", ident))
        self.assert_rule("builder_frozen", lambda: wf.agent("b", profile="p"))
        self.assert_rule("builder_frozen", lambda: wf.loop("l", body_one, always, 1))
        self.assert_rule("builder_frozen", lambda: wf.edge(a, a))
        self.assert_rule("builder_frozen", lambda: wf.chain(a))
        self.assert_rule("builder_frozen", lambda: wf.switch(a, [], a))
        self.assert_rule("builder_frozen", lambda: wf.join([a], a))
        self.assert_rule("builder_frozen", lambda: wf.start(a))
        self.assert_rule("builder_frozen", lambda: wf.output(a))

    def test_a_failed_build_can_be_fixed_and_retried(self) -> None:
        wf = WorkflowBuilder("T")
        a = wf.python("a", ident)
        wf.start(a)
        self.assert_rule("no_outputs", lambda: wf.build())
        wf.output(a)
        self.assertEqual(wf.build().definition.outputs, ("a",))

    def test_errors_are_value_errors_with_fields(self) -> None:
        with self.assertRaises(ValueError) as caught:
            WorkflowBuilder("")
        error = caught.exception
        assert isinstance(error, WorkflowDefinitionError)
        self.assertEqual(error.to_dict()["rule"], "invalid_title")
        self.assertEqual(error.notes, [])
        import pickle

        again = pickle.loads(pickle.dumps(error))
        self.assertEqual((type(again), again.rule, again.site, str(again)), (type(error), error.rule, error.site, str(error)))
        self.assertTrue(issubclass(WorkflowDefinitionTypeError, TypeError))
        self.assertTrue(issubclass(WorkflowDefinitionTypeError, WorkflowDefinitionError))


if __name__ == "__main__":
    unittest.main()

