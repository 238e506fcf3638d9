"""The built workflow: ``Workflow`` and its read-only ``WorkflowDefinition``.

``WorkflowDefinition.to_manifest()`` returns exactly the JSON shape of ``DefinitionSchema`` in
``@icode/workflow-graph`` (``packages/graph/src/schema.ts``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, cast

from ._errors import Site

DEFINITION_FORMAT = 1

Manifest = Dict[str, Any]


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars): much cheaper than ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if kind is list:
        return [copy_json(item) for item in value]
    return value


class _Record:
    """A read-only view of one manifest object; its fields read as attributes."""

    __slots__ = ("_fields",)
    _fields: Dict[str, Any]

    def __init__(self, fields: Mapping[str, Any]) -> None:
        # Only the SDK creates these, from data it owns and never changes again: no copy needed.
        object.__setattr__(self, "_fields", fields)

    def __getattr__(self, name: str) -> Any:
        fields: Dict[str, Any] = object.__getattribute__(self, "_fields")
        if name in fields:
            return copy_json(fields[name])
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only; cannot delete {name!r}")

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._fields))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return bool(self._fields == cast(_Record, other)._fields)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self._fields.items() if key != "site")
        return f"{type(self).__name__}({shown})"

    def to_manifest(self) -> Manifest:
        """This object as JSON-ready data (a copy)."""
        return copy_json(self._fields)


class NodeDefinition(_Record):
    """One node: ``id``, ``kind`` (python, agent, loop or join), ``scope`` (loop ID or ``None``), ``site``
    and the fields of its kind (see ``DefinitionSchema``)."""

    __slots__ = ()
    id: str
    kind: str
    scope: Optional[str]
    site: Optional[Site]


class EdgeDefinition(_Record):
    """One edge: ``source``, ``target``, ``scope``, ``condition`` and ``site``."""

    __slots__ = ()
    source: str
    target: str
    scope: Optional[str]
    condition: Optional[Dict[str, Any]]
    site: Optional[Site]


class WorkflowDefinition:
    """The built workflow definition: title, description, start, outputs, nodes and edges."""

    __slots__ = ("_manifest", "_views")
    _manifest: Manifest
    _views: Optional[Tuple[Tuple[NodeDefinition, ...], Tuple[EdgeDefinition, ...], Dict[str, NodeDefinition]]]

    def __init__(self, manifest: Manifest) -> None:
        self._own(copy_json(manifest))

    @classmethod
    def _owning(cls, manifest: Manifest) -> WorkflowDefinition:
        """A definition that keeps ``manifest`` itself: the caller made it for this definition alone and
        never changes it (copying a large manifest again would double the cost of ``build()``)."""
        definition = object.__new__(cls)
        definition._own(manifest)
        return definition

    def _own(self, manifest: Manifest) -> None:
        object.__setattr__(self, "_manifest", manifest)
        object.__setattr__(self, "_views", None)  # made when first asked for: the worker never reads them

    def _get_views(
        self,
    ) -> Tuple[Tuple[NodeDefinition, ...], Tuple[EdgeDefinition, ...], Dict[str, NodeDefinition]]:
        views = self._views
        if views is None:
            nodes = tuple(NodeDefinition(node) for node in self._manifest["nodes"])
            edges = tuple(EdgeDefinition(edge) for edge in self._manifest["edges"])
            by_id = {node._fields["id"]: node for node in nodes}
            views = (nodes, edges, by_id)
            object.__setattr__(self, "_views", views)
        return views

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"WorkflowDefinition is read-only; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"WorkflowDefinition is read-only; cannot delete {name!r}")

    @property
    def title(self) -> str:
        return self._manifest["title"]

    @property
    def description(self) -> Optional[str]:
        return self._manifest["description"]

    @property
    def start(self) -> str:
        """The start node's ID."""
        return self._manifest["start"]

    @property
    def outputs(self) -> Tuple[str, ...]:
        """Output node IDs in ``output()`` declaration order."""
        return tuple(self._manifest["outputs"])

    @property
    def nodes(self) -> Tuple[NodeDefinition, ...]:
        """Nodes in declaration order (a loop before its body's nodes; a join node at its ``join()``)."""
        return self._get_views()[0]

    @property
    def edges(self) -> Tuple[EdgeDefinition, ...]:
        """Edges in declaration order."""
        return self._get_views()[1]

    @property
    def build_site(self) -> Optional[Site]:
        """Where ``build()`` was called."""
        return copy_json(self._manifest["build_site"])

    @property
    def sites_truncated(self) -> bool:
        """Too many declarations to record every site: some ``site`` fields are ``None``."""
        return self._manifest["sites_truncated"]

    def node(self, node_id: str) -> NodeDefinition:
        """The node with this ID (``KeyError`` if there is none)."""
        return self._get_views()[2][node_id]

    def to_manifest(self) -> Manifest:
        """The definition as JSON-ready data in the shape of ``DefinitionSchema`` (format 1); a fresh copy."""
        return copy_json(self._manifest)

    def __repr__(self) -> str:
        return (
            f"WorkflowDefinition(title={self.title!r}, start={self.start!r}, outputs={list(self.outputs)!r}, "
            f"nodes={len(self._manifest['nodes'])}, edges={len(self._manifest['edges'])})"
        )


_BUILD_TOKEN = object()


class Workflow:
    """A built workflow, returned by ``WorkflowBuilder.build()``; assign it to the module's ``workflow``."""

    __slots__ = ("_definition", "_callables")
    _definition: WorkflowDefinition

    _callables: Dict[str, Callable[..., Any]]
    """The author's callables by key: ``node:<id>`` (a python node's ``fn``), ``edge:<src>-><dst>`` (a
    ``when`` or switch-case condition), ``until:<loop id>``, ``combine:<join id>``."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        if len(args) != 3 or args[0] is not _BUILD_TOKEN or kwargs:
            raise TypeError("Workflow objects are created by WorkflowBuilder.build(); call wf.build() instead")
        manifest = cast(Manifest, args[1])
        callables = cast(Dict[str, Callable[..., Any]], args[2])
        definition = WorkflowDefinition._owning(manifest)  # build() made it for this workflow
        object.__setattr__(self, "_definition", definition)
        object.__setattr__(self, "_callables", dict(callables))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Workflow is read-only; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Workflow is read-only; cannot delete {name!r}")

    @property
    def definition(self) -> WorkflowDefinition:
        """The built definition (read-only)."""
        return self._definition

    def _shared_manifest(self) -> Manifest:
        """The definition's own manifest, not a copy, for the worker to send and index: never change it."""
        return self._definition._manifest

    def _node_meta(self, node_id: str) -> Manifest:
        """The manifest entry of node ``node_id`` (a copy); ``KeyError`` if the workflow has no such node."""
        return copy_json(self._definition._get_views()[2][node_id]._fields)

    def __repr__(self) -> str:
        definition = self._definition
        manifest = definition._manifest
        return f"Workflow(title={definition.title!r}, nodes={len(manifest['nodes'])}, edges={len(manifest['edges'])})"


def make_workflow(manifest: Manifest, callables: Dict[str, Callable[..., Any]]) -> Workflow:
    """The workflow of a freshly built ``manifest``, which it keeps without a copy: the caller must hold no
    part of it that anything could change later."""
    return Workflow(_BUILD_TOKEN, manifest, callables)
