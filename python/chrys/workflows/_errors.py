"""Errors raised by the builder when a workflow declaration breaks a rule of the workflow reference.

Each error carries a stable snake_case ``rule`` id, the node (or ``source->target`` edge) it concerns, the
author's call ``site`` and ``notes`` such as where ``build()`` was called, mirroring the fields of the
validate report's diagnostics.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

Site = Dict[str, Any]
"""``{"file", "line", "column", "end_line", "end_column"}``; columns are ``None`` before Python 3.11."""

Note = Dict[str, Any]
"""``{"message", "file", "line"}``."""


class WorkflowDefinitionError(ValueError):
    """A workflow declaration or ``build()`` broke a rule; ``rule`` names which one."""

    rule: str
    node: Optional[str]
    site: Optional[Site]
    notes: List[Note]

    def __init__(
        self,
        message: str,
        *,
        rule: str,
        node: Optional[str] = None,
        site: Optional[Site] = None,
        notes: Optional[List[Note]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.node = node
        self.site = site
        self.notes = list(notes) if notes is not None else []

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> Tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.rule, self.node, self.site, self.notes))

    def to_dict(self) -> Dict[str, Any]:
        """The error as JSON-ready data: ``rule``, ``message``, ``node``, ``site`` and ``notes``."""
        return {
            "rule": self.rule,
            "message": self.message,
            "node": self.node,
            "site": dict(self.site) if self.site is not None else None,
            "notes": [dict(note) for note in self.notes],
        }


class WorkflowDefinitionTypeError(WorkflowDefinitionError, TypeError):
    """A declaration received an argument of the wrong type (also a ``TypeError``)."""


def _rebuild(
    cls: type,
    message: str,
    rule: str,
    node: Optional[str],
    site: Optional[Site],
    notes: List[Note],
) -> WorkflowDefinitionError:
    error: WorkflowDefinitionError = cls(message, rule=rule, node=node, site=site, notes=notes)
    return error


class WorkflowValueError(ValueError):
    """A value returned by a node or ``combine`` cannot be passed on; ``code`` is the spec's error class."""

    code: str = "value_error"

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


class ValueNotSerializable(WorkflowValueError):
    """Not a ``str``/``WorkflowValue``, or ``data`` holds something JSON cannot carry (``value_not_serializable``)."""

    code = "value_not_serializable"


class ValueTooLarge(WorkflowValueError):
    """Too deep, too many values or a string too long (``value_too_large``)."""

    code = "value_too_large"
