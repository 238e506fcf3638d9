"""``WorkflowBuilder`` and ``BuilderScope``: declaring nodes, edges, loops, the start and the outputs.

Every rule of the workflow reference is checked at the author's call and raises
:class:`~chrys.workflows._errors.WorkflowDefinitionError` (or its ``TypeError`` twin) naming the rule; a call
that raises leaves the builder unchanged. ``build()`` checks the whole graph and returns a ``Workflow``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence as SequenceABC
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    NoReturn,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from ._callables import check_callable
from ._definition import DEFINITION_FORMAT, Manifest, Workflow, copy_json, make_workflow
from ._errors import Note, Site, WorkflowDefinitionError, WorkflowDefinitionTypeError
from ._handles import MAX_SAFE_INTEGER, NodeHandle, Retry
from ._sites import SiteBudget, call_site
from ._values import SourceValue, WorkflowValue, find_lone_surrogate

Condition = Callable[[WorkflowValue], bool]
NodeFunction = Callable[..., Any]
Combine = Callable[[List[SourceValue]], Union[str, WorkflowValue]]
LoopBody = Callable[["BuilderScope"], Tuple[NodeHandle, NodeHandle]]

_ON_EXHAUSTED = ("continue", "fail")
_INPUT = "the input WorkflowValue"
_CALLABLE_PREFIX = {"python": "node", "loop": "until", "join": "combine"}
"""The key of a node's callable in ``Workflow._callables`` is ``<prefix>:<node id>``."""
_NESTED_FIELDS = {"python": ("retry",), "agent": ("retry",), "join": ("sources",)}
"""The fields of each node kind that hold a dict or a list (the others hold scalars)."""


def _fail(rule: str, message: str, *, node: Optional[str] = None, type_error: bool = False) -> NoReturn:
    cls = WorkflowDefinitionTypeError if type_error else WorkflowDefinitionError
    raise cls(message, rule=rule, node=node, site=call_site())


def _where(site: Optional[Site]) -> str:
    if site is None:
        return ""
    return f" (declared at {site['file']}:{site['line']})"


def _edge_key(source: str, target: str) -> str:
    return f"{source}->{target}"


class _Node:
    __slots__ = ("id", "kind", "scope", "site", "handle", "fields", "fn")

    def __init__(
        self,
        node_id: str,
        kind: str,
        scope: Optional[str],
        site: Optional[Site],
        handle: Optional[NodeHandle],
        fields: Dict[str, Any],
        fn: Optional[Callable[..., Any]],
    ) -> None:
        self.id = node_id
        self.kind = kind
        self.scope = scope
        self.site = site
        self.handle = handle
        self.fields = fields
        self.fn = fn

    def manifest(self) -> Manifest:
        """This node's manifest entry, sharing nothing with the builder (the definition keeps it as is)."""
        site = self.site
        entry = {
            "id": self.id,
            "scope": self.scope,
            "site": None if site is None else dict(site),
            "kind": self.kind,
            **self.fields,
        }
        for field in _NESTED_FIELDS.get(self.kind, ()):
            entry[field] = copy_json(entry[field])
        return entry


class _Edge:
    __slots__ = ("source", "target", "scope", "condition", "site", "fn")

    def __init__(
        self,
        source: str,
        target: str,
        scope: Optional[str],
        condition: Optional[Dict[str, Any]],
        site: Optional[Site],
        fn: Optional[Callable[..., Any]],
    ) -> None:
        self.source = source
        self.target = target
        self.scope = scope
        self.condition = condition
        self.site = site
        self.fn = fn

    def manifest(self) -> Manifest:
        """This edge's manifest entry, sharing nothing with the builder (the definition keeps it as is)."""
        condition, site = self.condition, self.site
        return {
            "source": self.source,
            "target": self.target,
            "scope": self.scope,
            "condition": None if condition is None else dict(condition),
            "site": None if site is None else dict(site),
        }


class _Graph:
    """Everything declared so far, shared by a builder and its loop bodies' scopes."""

    def __init__(self, title: str, description: Optional[str]) -> None:
        self.title = title
        self.description = description
        self.nodes: List[_Node] = []
        self.edges: List[_Edge] = []
        self.start: Optional[str] = None
        self.start_site: Optional[Site] = None
        self.outputs: List[str] = []
        self.output_sites: Dict[str, Optional[Site]] = {}
        self.building: Optional[str] = None  # the loop whose body is being built
        self.built = False
        self.sites = SiteBudget()
        self._reindex()

    def _reindex(self) -> None:
        self.by_id: Dict[str, _Node] = {node.id: node for node in self.nodes}
        self.edge_keys: Set[Tuple[str, str]] = set()
        self.incoming: Dict[str, int] = {}
        self.switch_sources: Set[str] = set()
        for edge in self.edges:
            self._index_edge(edge)
        self.join_targets: Dict[str, str] = {
            node.fields["target"]: node.id for node in self.nodes if node.kind == "join"
        }

    def _index_edge(self, edge: _Edge) -> None:
        self.edge_keys.add((edge.source, edge.target))
        self.incoming[edge.target] = self.incoming.get(edge.target, 0) + 1
        if edge.condition is not None and edge.condition["kind"] in ("case", "default"):
            self.switch_sources.add(edge.source)

    def add_node(self, node: _Node) -> None:
        self.nodes.append(node)
        self.by_id[node.id] = node
        if node.kind == "join":
            self.join_targets[node.fields["target"]] = node.id

    def add_edge(self, edge: _Edge) -> None:
        self.edges.append(edge)
        self._index_edge(edge)

    def snapshot(self) -> Tuple[int, int, int, bool]:
        return (len(self.nodes), len(self.edges), self.sites.used, self.sites.truncated)

    def rollback(self, snapshot: Tuple[int, int, int, bool]) -> None:
        nodes, edges, used, truncated = snapshot
        del self.nodes[nodes:]
        del self.edges[edges:]
        self.sites.used = used
        self.sites.truncated = truncated
        self._reindex()


class BuilderScope:
    """Creates nodes and edges: at the top level through ``WorkflowBuilder``, inside a loop body through the
    scope passed to the ``body`` function of ``loop()``. You do not construct one yourself."""

    _graph: _Graph
    _loop: Optional[str]
    _closed: bool

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError(
            "BuilderScope is passed to the body function of WorkflowBuilder.loop(); create a "
            "WorkflowBuilder(title) for a workflow instead"
        )

    @classmethod
    def _for_body(cls, graph: _Graph, loop_id: str) -> BuilderScope:
        scope = object.__new__(cls)
        scope._graph = graph
        scope._loop = loop_id
        scope._closed = False
        return scope

    def __repr__(self) -> str:
        if self._loop is None:
            return f"BuilderScope(top level of {self._graph.title!r})"
        return f"BuilderScope(body of loop {self._loop!r})"

    if not TYPE_CHECKING:  # hidden from type checkers, which should still flag unknown attributes

        def __getattr__(self, name: str) -> Any:
            if name == "loop":
                raise AttributeError(
                    "a loop body's BuilderScope has no loop(): nested loops are not supported. Move the "
                    "inner loop to the top level, or unroll it into the body"
                )
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- checks shared by the declarations ---------------------------------------------------------------

    def _check_open(self, call: str) -> None:
        graph = self._graph
        if graph.built:
            _fail(
                "builder_frozen",
                f"{call} was called after build(): the workflow is already built and frozen. Declare every "
                "node and edge before calling build().",
            )
        if self._loop is not None and self._closed:
            _fail(
                "scope_closed",
                f"{call} was called on the scope of loop {self._loop!r} after its body function returned. "
                "Declare the body's nodes and edges inside the body function.",
            )

    def _check_name(self, name: object, call: str) -> str:
        if not isinstance(name, str):
            _fail(
                "invalid_name",
                f"{call}: the node name must be a str, got {type(name).__qualname__}: {name!r:.60}.",
                type_error=True,
            )
        if not name:
            _fail("invalid_name", f"{call}: the node name is empty; give the node a name such as 'review'.")
        if name.startswith("join:"):
            _fail(
                "invalid_name",
                f"{call}: the node name {name!r} starts with 'join:', which is reserved for the nodes join() "
                "creates; rename the node.",
                node=name,
            )
        if "->" in name:
            _fail(
                "invalid_name",
                f"{call}: the node name {name!r} contains '->', which is reserved for naming edges; rename "
                "the node.",
                node=name,
            )
        if find_lone_surrogate(name) is not None:
            _fail(
                "invalid_name",
                f"{call}: the node name {name!r} holds an unpaired surrogate, which is not valid Unicode; "
                "rename the node.",
                node=name,
            )
        existing = self._graph.by_id.get(name)
        if existing is not None:
            _fail(
                "duplicate_name",
                f"{call}: a node named {name!r} already exists{_where(existing.site)}. Node names must be "
                "unique across the whole workflow, loop bodies included; rename one of them.",
                node=name,
            )
        return str.__str__(name)

    def _check_timeout(self, timeout: object, call: str, node: str) -> Optional[float]:
        if timeout is None:
            return None
        if type(timeout) is float and 0.0 < timeout < math.inf:  # the usual case, in one test
            return timeout
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool):
            _fail(
                "invalid_timeout",
                f"{call}: timeout must be a number of seconds or None, got {type(timeout).__qualname__}: "
                f"{timeout!r:.40}.",
                node=node,
                type_error=True,
            )
        if not math.isfinite(timeout) or timeout <= 0:
            _fail(
                "invalid_timeout",
                f"{call}: timeout is {timeout!r}; it must be a finite number of seconds greater than 0, or "
                "None for no deadline.",
                node=node,
            )
        return float(timeout)

    def _check_retry(self, retry: object, call: str, node: str) -> Optional[Dict[str, Union[int, float]]]:
        if retry is None:
            return None
        if not isinstance(retry, Retry):
            _fail(
                "invalid_retry",
                f"{call}: retry must be a Retry or None, got {type(retry).__qualname__}: {retry!r:.40}; "
                "write for example retry=Retry(max_attempts=3, backoff=1.0).",
                node=node,
                type_error=True,
            )
        return retry._to_manifest()

    def _node_of(self, handle: object, call: str, role: str) -> _Node:
        if not isinstance(handle, NodeHandle):
            _fail(
                "invalid_handle",
                f"{call}: {role} must be a NodeHandle returned by python(), agent() or loop(), got "
                f"{type(handle).__qualname__}: {handle!r:.60}.",
                type_error=True,
            )
        node_id = handle._node_id
        node = self._graph.by_id.get(node_id)
        if node is None or node.handle is not handle:
            _fail(
                "foreign_handle",
                f"{call}: {role} {handle!r} was not returned by this workflow's builder. Use the handle that "
                "python(), agent() or loop() of this builder returned; a NodeHandle created directly or "
                "taken from another builder cannot be used.",
                node=node_id,
            )
        return node

    def _scope_name(self, scope: Optional[str]) -> str:
        return "the top level" if scope is None else f"the body of loop {scope!r}"

    def _check_scope(self, node: _Node, call: str, edge: str) -> None:
        if node.scope == self._loop:
            return
        if self._loop is None:
            fix = (
                f"Connect it inside that body with the scope passed to body(), and connect the loop node "
                f"{node.scope!r} itself at the top level."
            )
        elif node.scope is None:
            fix = f"Connect the loop node {self._loop!r} to {node.id!r} at the top level instead."
        else:
            fix = "Each loop body connects only its own nodes."
        _fail(
            "cross_scope_edge",
            f"{call}: node {node.id!r} belongs to {self._scope_name(node.scope)}, but this call declares "
            f"edges in {self._scope_name(self._loop)}; edges cannot cross a loop boundary. {fix}",
            node=edge,
        )

    def _plan_edges(self, call: str, planned: Sequence[Tuple[_Node, _Node]]) -> None:
        """Checks edges before any is added, so that a rejected call adds none of them."""
        graph = self._graph
        loop = self._loop
        batch: Set[Tuple[str, str]] = set()
        for source, target in planned:
            # The edge's name (``src->dst``) is only made for a message: this runs once per edge.
            if source.scope != loop or target.scope != loop:
                self._check_scope(source, call, _edge_key(source.id, target.id))
                self._check_scope(target, call, _edge_key(source.id, target.id))
            if source is target:
                _fail(
                    "self_edge",
                    f"{call}: node {source.id!r} cannot connect to itself. To repeat work, wrap it in a "
                    "loop() instead.",
                    node=_edge_key(source.id, target.id),
                )
            pair = (source.id, target.id)
            if pair in graph.edge_keys or pair in batch:
                key = _edge_key(source.id, target.id)
                _fail(
                    "duplicate_edge",
                    f"{call}: the edge {key} is declared twice; an edge from the same source to the same "
                    "destination can be declared only once (edge(), chain(), switch() and join() included). "
                    "Remove the repeated one.",
                    node=key,
                )
            join_id = graph.join_targets.get(target.id)
            if join_id is not None and join_id != source.id:
                _fail(
                    "join_destination_edge",
                    f"{call}: {target.id!r} is the destination of a join() (node {join_id!r}), so it cannot "
                    f"have other incoming edges. Add {source.id!r} to the join's sources instead.",
                    node=_edge_key(source.id, target.id),
                )
            batch.add(pair)

    def _add_edges(
        self,
        edges: Sequence[Tuple[_Node, _Node, Optional[Dict[str, Any]], Optional[Callable[..., Any]]]],
        site: Optional[Site],
    ) -> None:
        graph = self._graph
        for source, target, condition, fn in edges:
            graph.add_edge(_Edge(source.id, target.id, self._loop, condition, graph.sites.take(site), fn))

    def _check_condition(self, fn: object, role: str, node: str) -> None:
        check_callable(
            fn, role=role, node=node, min_positional=1, max_positional=1, expects=_INPUT, allow_async=False
        )

    # -- nodes --------------------------------------------------------------------------------------------

    def python(
        self,
        name: str,
        fn: NodeFunction,
        *,
        timeout: Optional[float] = 300.0,
        retry: Optional[Retry] = None,
    ) -> NodeHandle:
        """Declares a node running ``fn(value)`` or ``fn(value, ctx)`` (sync or ``async def``); returns its
        handle. ``timeout`` is seconds per attempt (``None``: no deadline); ``retry`` a :class:`Retry`."""
        call = "python()"
        self._check_open(call)
        name = self._check_name(name, call)
        call = f"python({name!r})"
        is_async, count = check_callable(
            fn,
            role=f"fn of {call}",
            node=name,
            min_positional=1,
            max_positional=2,
            expects="the input WorkflowValue, and optionally a NodeContext second",
            allow_async=True,
        )
        seconds = self._check_timeout(timeout, call, name)
        policy = self._check_retry(retry, call, name)
        graph = self._graph
        handle = NodeHandle(name)
        fields = {"timeout": seconds, "retry": policy, "is_async": is_async, "takes_context": count == 2}
        graph.add_node(_Node(name, "python", self._loop, graph.sites.take(call_site()), handle, fields, fn))
        return handle

    def agent(
        self,
        name: str,
        *,
        profile: str,
        model: Optional[str] = None,
        instructions_suffix: Optional[str] = None,
        timeout: Optional[float] = None,
        retry: Optional[Retry] = None,
    ) -> NodeHandle:
        """Declares a node running an agent task with agent profile ``profile``; returns its handle.
        ``timeout`` defaults to no deadline; ``retry=None`` means the agent default (three attempts)."""
        call = "agent()"
        self._check_open(call)
        name = self._check_name(name, call)
        call = f"agent({name!r})"
        for field, value, required in (
            ("profile", profile, True),
            ("model", model, False),
            ("instructions_suffix", instructions_suffix, False),
        ):
            if value is None and not required:
                continue
            if not isinstance(value, str):
                _fail(
                    "invalid_agent",
                    f"{call}: {field} must be a str{'' if required else ' or None'}, got "
                    f"{type(value).__qualname__}: {value!r:.60}.",
                    node=name,
                    type_error=True,
                )
            if field != "instructions_suffix" and not value.strip():
                _fail(
                    "invalid_agent",
                    f"{call}: {field} is blank; give the ID or name of an existing "
                    f"{'agent profile (see icode agents)' if field == 'profile' else 'model profile (see icode models)'}"
                    f"{'' if required else ', or leave it out'}.",
                    node=name,
                )
            if find_lone_surrogate(value) is not None:
                _fail(
                    "invalid_agent",
                    f"{call}: {field} holds an unpaired surrogate, which is not valid Unicode.",
                    node=name,
                )
        seconds = self._check_timeout(timeout, call, name)
        policy = self._check_retry(retry, call, name)
        graph = self._graph
        handle = NodeHandle(name)
        fields = {
            "profile": str.__str__(profile),
            "model": None if model is None else str.__str__(model),
            "instructions_suffix": None if instructions_suffix is None else str.__str__(instructions_suffix),
            "timeout": seconds,
            "retry": policy,
        }
        graph.add_node(_Node(name, "agent", self._loop, graph.sites.take(call_site()), handle, fields, None))
        return handle

    # -- edges --------------------------------------------------------------------------------------------

    def edge(self, src: NodeHandle, dst: NodeHandle, *, when: Optional[Condition] = None) -> None:
        """Passes ``src``'s output to ``dst``; with ``when``, only if ``when(output)`` returns ``True``."""
        call = "edge()"
        self._check_open(call)
        source = self._node_of(src, call, "src")
        target = self._node_of(dst, call, "dst")
        call = f"edge({source.id!r}, {target.id!r})"
        if when is not None:
            self._check_condition(when, f"when of {call}", _edge_key(source.id, target.id))
        self._plan_edges(call, ((source, target),))
        condition = None if when is None else {"kind": "when"}
        graph = self._graph
        graph.add_edge(_Edge(source.id, target.id, self._loop, condition, graph.sites.take(call_site()), when))

    def chain(self, *nodes: NodeHandle) -> None:
        """Connects the nodes in order: ``chain(a, b, c)`` is ``edge(a, b)`` then ``edge(b, c)``."""
        call = "chain()"
        self._check_open(call)
        if len(nodes) < 2:
            _fail(
                "chain_too_short",
                f"chain() needs at least two nodes, got {len(nodes)}; for example chain(a, b, c) connects "
                "a -> b -> c.",
            )
        resolved = [self._node_of(handle, call, f"node {index}") for index, handle in enumerate(nodes)]
        pairs = list(zip(resolved, resolved[1:]))
        self._plan_edges(call, pairs)
        self._add_edges([(source, target, None, None) for source, target in pairs], call_site())

    def switch(
        self,
        src: NodeHandle,
        cases: Sequence[Tuple[Condition, NodeHandle]],
        default: NodeHandle,
    ) -> None:
        """Passes ``src``'s output to the destination of the first case whose condition returns ``True``, or
        to ``default`` when none does. A source can have only one ``switch()``."""
        call = "switch()"
        self._check_open(call)
        source = self._node_of(src, call, "src")
        call = f"switch({source.id!r})"
        if source.id in self._graph.switch_sources:
            _fail(
                "switch_twice",
                f"{call}: node {source.id!r} already has a switch(); a source can have only one. Merge the "
                "cases into one switch() call.",
                node=source.id,
            )
        if isinstance(cases, (str, bytes)) or not isinstance(cases, SequenceABC):
            _fail(
                "switch_cases",
                f"{call}: cases must be a list or tuple of (condition, destination) pairs, got "
                f"{type(cases).__qualname__}.",
                node=source.id,
                type_error=True,
            )
        planned: List[Tuple[_Node, _Node, Optional[Dict[str, Any]], Optional[Callable[..., Any]]]] = []
        for index, case in enumerate(cases):
            if isinstance(case, (str, bytes)) or not isinstance(case, SequenceABC):
                _fail(
                    "switch_cases",
                    f"{call}: cases[{index}] must be a (condition, destination) pair, got "
                    f"{type(case).__qualname__}: {case!r:.60}.",
                    node=source.id,
                    type_error=True,
                )
            if len(case) != 2:
                _fail(
                    "switch_cases",
                    f"{call}: cases[{index}] has {len(case)} items; each case is a (condition, destination) "
                    "pair.",
                    node=source.id,
                )
            condition, destination = case[0], case[1]
            if isinstance(condition, NodeHandle):
                _fail(
                    "switch_cases",
                    f"{call}: cases[{index}] starts with the node {condition!r}; write each case as "
                    "(condition, destination), the condition first.",
                    node=source.id,
                    type_error=True,
                )
            if not isinstance(destination, NodeHandle):
                _fail(
                    "switch_cases",
                    f"{call}: the destination of cases[{index}] must be a NodeHandle, got "
                    f"{type(destination).__qualname__}: {destination!r:.60}.",
                    node=source.id,
                    type_error=True,
                )
            target = self._node_of(destination, call, f"the destination of cases[{index}]")
            key = _edge_key(source.id, target.id)
            self._check_condition(condition, f"the condition of cases[{index}] of {call}", key)
            planned.append((source, target, {"kind": "case", "index": index}, condition))
        fallback = self._node_of(default, call, "default")
        planned.append((source, fallback, {"kind": "default"}, None))
        self._plan_edges(call, [(source, target) for source, target, _, _ in planned])
        self._add_edges(planned, call_site())

    def join(
        self,
        sources: Sequence[NodeHandle],
        dst: NodeHandle,
        *,
        combine: Optional[Combine] = None,
    ) -> None:
        """Combines the results of ``sources`` into ``dst`` through a new node ``join:<dst>``; ``dst`` can
        have no other incoming edge. ``combine(list[SourceValue])`` replaces the default merge."""
        call = "join()"
        self._check_open(call)
        if isinstance(sources, (str, bytes)) or not isinstance(sources, SequenceABC):
            _fail(
                "join_sources",
                f"join(): sources must be a list or tuple of NodeHandle, got {type(sources).__qualname__}.",
                type_error=True,
            )
        target = self._node_of(dst, call, "dst")
        join_id = f"join:{target.id}"
        call = f"join(..., {target.id!r})"
        if not sources:
            _fail(
                "join_sources",
                f"{call}: sources is empty; pass at least one source node, for example join([a, b], "
                f"{target.id}).",
                node=join_id,
            )
        resolved = [self._node_of(handle, call, f"sources[{index}]") for index, handle in enumerate(sources)]
        seen: Set[str] = set()
        for node in resolved:
            if node.id in seen:
                _fail(
                    "join_sources",
                    f"{call}: {node.id!r} is listed twice in sources; list each source once.",
                    node=join_id,
                )
            seen.add(node.id)
        if combine is not None:
            check_callable(
                combine,
                role=f"combine of {call}",
                node=join_id,
                min_positional=1,
                max_positional=1,
                expects="the list of SourceValue",
                allow_async=False,
            )
        graph = self._graph
        for node in resolved:
            if node.scope != self._loop:  # the edge's name is made for the message only
                self._check_scope(node, call, _edge_key(node.id, join_id))
        self._check_scope(target, call, _edge_key(join_id, target.id))
        existing_join = graph.join_targets.get(target.id)
        if existing_join is not None or graph.incoming.get(target.id, 0) > 0:
            incoming = [edge.source for edge in graph.edges if edge.target == target.id]
            _fail(
                "join_destination_edge",
                f"{call}: {target.id!r} already has incoming edges (from {', '.join(map(repr, incoming))}), "
                "but a join() destination can have no other incoming edge. Make those nodes sources of "
                "this join instead.",
                node=target.id,
            )
        site = call_site()
        fields = {"sources": [node.id for node in resolved], "target": target.id, "has_combine": combine is not None}
        graph.add_node(_Node(join_id, "join", self._loop, graph.sites.take(site), None, fields, combine))
        for node in resolved:
            graph.add_edge(_Edge(node.id, join_id, self._loop, None, graph.sites.take(site), None))
        graph.add_edge(_Edge(join_id, target.id, self._loop, None, graph.sites.take(site), None))


class WorkflowBuilder(BuilderScope):
    """Builds a workflow: top-level nodes and edges (inherited from :class:`BuilderScope`), loops, the start
    node and the outputs; ``build()`` returns the ``Workflow`` to assign to the module's ``workflow``."""

    def __init__(self, title: str, *, description: Optional[str] = None) -> None:
        if not isinstance(title, str):
            _fail(
                "invalid_title",
                f"WorkflowBuilder title must be a str, got {type(title).__qualname__}: {title!r:.60}.",
                type_error=True,
            )
        if not title.strip():
            _fail("invalid_title", "WorkflowBuilder title is blank; give the workflow a title such as 'Echo'.")
        if find_lone_surrogate(title) is not None:
            _fail("invalid_title", "WorkflowBuilder title holds an unpaired surrogate, which is not valid Unicode.")
        if description is not None:
            if not isinstance(description, str):
                _fail(
                    "invalid_description",
                    f"WorkflowBuilder description must be a str or None, got {type(description).__qualname__}.",
                    type_error=True,
                )
            if find_lone_surrogate(description) is not None:
                _fail(
                    "invalid_description",
                    "WorkflowBuilder description holds an unpaired surrogate, which is not valid Unicode.",
                )
        self._graph = _Graph(str.__str__(title), None if description is None else str.__str__(description))
        self._loop = None
        self._closed = False

    def __repr__(self) -> str:
        return f"WorkflowBuilder({self._graph.title!r})"

    def _check_top_level_call(self, call: str) -> None:
        building = self._graph.building
        if building is not None:
            _fail(
                "not_top_level",
                f"{call} was called while the body of loop {building!r} is being built; call it at the top "
                "level, after loop() returns.",
            )

    def loop(
        self,
        name: str,
        body: LoopBody,
        until: Condition,
        max_iterations: int,
        on_exhausted: str = "continue",
    ) -> NodeHandle:
        """Declares a loop node repeating the body built by ``body(scope) -> (entry, exit)`` until
        ``until(exit_output)`` returns ``True`` or ``max_iterations`` runs are done; then ``on_exhausted``
        (``"continue"`` or ``"fail"``) decides. Returns the loop node's handle."""
        call = "loop()"
        self._check_open(call)
        building = self._graph.building
        if building is not None:
            _fail(
                "nested_loop",
                f"loop() was called while the body of loop {building!r} is being built: nested loops are "
                "not supported. Move the inner loop to the top level, or unroll it into the body.",
                node=building,
            )
        name = self._check_name(name, call)
        call = f"loop({name!r})"
        check_callable(
            body,
            role=f"body of {call}",
            node=name,
            min_positional=1,
            max_positional=1,
            expects="the BuilderScope of the body",
            allow_async=False,
        )
        self._check_condition(until, f"until of {call}", name)
        if not isinstance(max_iterations, int) or isinstance(max_iterations, bool):
            _fail(
                "invalid_loop",
                f"{call}: max_iterations must be an int, got {type(max_iterations).__qualname__}: "
                f"{max_iterations!r:.40}.",
                node=name,
                type_error=True,
            )
        if not 1 <= max_iterations <= MAX_SAFE_INTEGER:
            _fail(
                "invalid_loop",
                f"{call}: max_iterations is {max_iterations}; it must be at least 1 (and at most "
                f"{MAX_SAFE_INTEGER}).",
                node=name,
            )
        if not isinstance(on_exhausted, str):
            _fail(
                "invalid_loop",
                f"{call}: on_exhausted must be 'continue' or 'fail', got {type(on_exhausted).__qualname__}: "
                f"{on_exhausted!r:.40}.",
                node=name,
                type_error=True,
            )
        if on_exhausted not in _ON_EXHAUSTED:
            _fail(
                "invalid_loop",
                f"{call}: on_exhausted is {on_exhausted!r}; it must be 'continue' (use the last value and go "
                "on) or 'fail' (end the run with loop_exhausted).",
                node=name,
            )
        graph = self._graph
        snapshot = graph.snapshot()
        fields: Dict[str, Any] = {
            "entry": "",
            "exit": "",
            "max_iterations": int(max_iterations),
            "on_exhausted": str.__str__(on_exhausted),
        }
        handle = NodeHandle(name)
        loop_node = _Node(name, "loop", None, graph.sites.take(call_site()), handle, fields, until)
        graph.add_node(loop_node)
        scope = BuilderScope._for_body(graph, name)
        graph.building = name
        try:
            result = body(scope)
            graph.building = None
            entry, exit_ = self._loop_ends(result, name, call)
        except BaseException:
            graph.rollback(snapshot)
            raise
        finally:
            graph.building = None
            scope._closed = True
        fields["entry"] = entry
        fields["exit"] = exit_
        return handle

    def _loop_ends(self, result: object, name: str, call: str) -> Tuple[str, str]:
        if isinstance(result, (str, bytes)) or not isinstance(result, (tuple, list)) or len(result) != 2:
            _fail(
                "invalid_loop",
                f"{call}: body must return the pair (entry, exit) of node handles it declared, got "
                f"{type(result).__qualname__}: {result!r:.80}. End the body with 'return entry, exit'.",
                node=name,
                type_error=True,
            )
        ends = []
        for role, handle in zip(("entry", "exit"), result):
            if not isinstance(handle, NodeHandle):
                _fail(
                    "invalid_loop",
                    f"{call}: the {role} returned by body must be a NodeHandle, got "
                    f"{type(handle).__qualname__}: {handle!r:.60}.",
                    node=name,
                    type_error=True,
                )
            node = self._node_of(handle, call, f"the {role} returned by body")
            if node.scope != name:
                _fail(
                    "loop_boundary",
                    f"{call}: the {role} {node.id!r} belongs to {self._scope_name(node.scope)}, not to the "
                    "body of this loop. Return nodes that body declared through its scope argument.",
                    node=name,
                )
            ends.append(node.id)
        return ends[0], ends[1]

    def start(self, node: NodeHandle) -> None:
        """Declares the single top-level start node."""
        call = "start()"
        self._check_open(call)
        self._check_top_level_call(call)
        target = self._node_of(node, call, "node")
        self._check_top_level_node(target, call)
        graph = self._graph
        if graph.start is not None:
            _fail(
                "start_twice",
                f"start() was already called with {graph.start!r}{_where(graph.start_site)}; a workflow has "
                "exactly one start node. Remove one of the start() calls.",
                node=target.id,
            )
        graph.start = target.id
        graph.start_site = call_site()

    def output(self, node: NodeHandle) -> None:
        """Collects ``node``'s result as a workflow output (in declaration order)."""
        call = "output()"
        self._check_open(call)
        self._check_top_level_call(call)
        target = self._node_of(node, call, "node")
        self._check_top_level_node(target, call)
        graph = self._graph
        if target.id in graph.output_sites:
            _fail(
                "duplicate_output",
                f"output() was already called with {target.id!r}{_where(graph.output_sites[target.id])}; "
                "each node can be an output once. Remove the repeated call.",
                node=target.id,
            )
        graph.outputs.append(target.id)
        graph.output_sites[target.id] = call_site()

    def _check_top_level_node(self, node: _Node, call: str) -> None:
        if node.scope is not None:
            _fail(
                "not_top_level",
                f"{call}: {node.id!r} belongs to the body of loop {node.scope!r}; only top-level nodes can be "
                f"the start or an output. Use the loop node {node.scope!r} instead.",
                node=node.id,
            )

    # -- build --------------------------------------------------------------------------------------------

    def build(self) -> Workflow:
        """Validates and freezes the workflow and returns it; a builder is built only once."""
        graph = self._graph
        if graph.built:
            _fail(
                "built_twice",
                "build() was already called successfully on this builder; a builder is built only once. "
                "Reuse the Workflow the first build() returned.",
            )
        self._check_top_level_call("build()")
        site = call_site()
        notes: List[Note] = []
        if site is not None:
            notes.append({"message": "build() called here", "file": site["file"], "line": site["line"]})
        if graph.start is None:
            _fail("no_start", "build(): no start node was declared; call wf.start(node) with the first node.")
        if not graph.outputs:
            _fail(
                "no_outputs",
                "build(): no output was declared; call wf.output(node) for each node whose result the "
                "workflow returns.",
            )
        successors: Dict[str, List[str]] = {node.id: [] for node in graph.nodes}
        for edge in graph.edges:
            successors[edge.source].append(edge.target)
        self._check_reachable(graph.start, successors, notes)
        self._check_acyclic(successors, notes)
        build_site = graph.sites.take(site)
        manifest: Manifest = {
            "format": DEFINITION_FORMAT,
            "title": graph.title,
            "description": graph.description,
            "start": graph.start,
            "outputs": list(graph.outputs),
            "nodes": [node.manifest() for node in graph.nodes],
            "edges": [edge.manifest() for edge in graph.edges],
            "build_site": build_site,
            "sites_truncated": graph.sites.truncated,
        }
        callables: Dict[str, Callable[..., Any]] = {}
        for node in graph.nodes:
            if node.fn is None:
                continue
            callables[f"{_CALLABLE_PREFIX[node.kind]}:{node.id}"] = node.fn
        for edge in graph.edges:
            if edge.fn is not None:
                callables[f"edge:{_edge_key(edge.source, edge.target)}"] = edge.fn
        workflow = make_workflow(manifest, callables)
        graph.built = True
        return workflow

    def _graph_error(self, rule: str, message: str, node: _Node, notes: List[Note]) -> NoReturn:
        raise WorkflowDefinitionError(message, rule=rule, node=node.id, site=node.site, notes=notes)

    def _check_reachable(self, start: str, successors: Dict[str, List[str]], notes: List[Note]) -> None:
        graph = self._graph
        roots: List[Tuple[Optional[str], str]] = [(None, start)]
        roots += [(node.id, node.fields["entry"]) for node in graph.nodes if node.kind == "loop"]
        members: Dict[Optional[str], List[_Node]] = {}  # by scope: one pass, not one per loop
        for node in graph.nodes:
            members.setdefault(node.scope, []).append(node)
        for scope, root in roots:
            seen = {root}
            pending = [root]
            while pending:
                for following in successors[pending.pop()]:
                    if following not in seen:
                        seen.add(following)
                        pending.append(following)
            for node in members.get(scope, ()):
                if node.id not in seen:
                    if scope is None:
                        where = f"from the start node {root!r}"
                        fix = f"Connect it with edge() from a node reachable from {root!r}, or remove it."
                    else:
                        where = f"from the entry {root!r} of loop {scope!r}"
                        fix = f"Connect it inside the body from a node reachable from {root!r}, or remove it."
                    self._graph_error(
                        "unreachable",
                        f"build(): node {node.id!r} cannot be reached {where}; every node must be reachable "
                        f"along the edges. {fix}",
                        node,
                        notes,
                    )

    def _check_acyclic(self, successors: Dict[str, List[str]], notes: List[Note]) -> None:
        graph = self._graph
        done: Set[str] = set()
        for root in graph.nodes:
            if root.id in done:
                continue
            on_path = {root.id: 0}
            path = [root.id]
            stack = [iter(successors[root.id])]
            while stack:
                following = next(stack[-1], None)
                if following is None:
                    stack.pop()
                    finished = path.pop()
                    del on_path[finished]
                    done.add(finished)
                    continue
                if following in on_path:
                    cycle = path[on_path[following] :]
                    order = {node.id: index for index, node in enumerate(graph.nodes)}
                    first = min(range(len(cycle)), key=lambda i: order[cycle[i]])
                    cycle = cycle[first:] + cycle[:first]
                    shown = " -> ".join([*cycle, cycle[0]])
                    self._graph_error(
                        "cycle",
                        f"build(): the edges form a cycle {shown}. Edges cannot lead back to an earlier "
                        "node; to repeat a group of nodes, wrap them in a loop() instead.",
                        graph.by_id[cycle[0]],
                        notes,
                    )
                if following not in done:
                    on_path[following] = len(path)
                    path.append(following)
                    stack.append(iter(successors[following]))
