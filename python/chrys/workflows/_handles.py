"""``NodeHandle`` (a node reference returned by the builder) and ``Retry`` (a node's retry policy)."""

from __future__ import annotations

import math
from typing import Dict, Union

from ._errors import WorkflowDefinitionError, WorkflowDefinitionTypeError
from ._sites import call_site

MAX_SAFE_INTEGER = 2**53 - 1
"""Counts travel as JSON numbers; larger integers would lose precision on the engine side."""


class NodeHandle:
    """A node reference returned by ``python()``, ``agent()`` or ``loop()``; ``node_id`` is the node name.

    ``NodeHandle("name")`` can be created directly, but such a handle belongs to no builder and every
    builder call rejects it.
    """

    __slots__ = ("_node_id",)
    _node_id: str

    def __init__(self, node_id: str) -> None:
        if not isinstance(node_id, str):
            raise TypeError(f"NodeHandle node_id must be a str, got {type(node_id).__qualname__}")
        object.__setattr__(self, "_node_id", str(node_id))

    @property
    def node_id(self) -> str:
        """The node name (read-only)."""
        return self._node_id

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"NodeHandle is read-only; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"NodeHandle is read-only; cannot delete {name!r}")

    def __repr__(self) -> str:
        return f"NodeHandle({self._node_id!r})"


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Retry:
    """Retry policy of a node: ``max_attempts`` in total (at least 1), a fixed ``backoff`` in seconds between
    attempts (finite, at least 0)."""

    __slots__ = ("_max_attempts", "_backoff")
    _max_attempts: int
    _backoff: float

    def __init__(self, max_attempts: int, backoff: float = 0.0) -> None:
        if not isinstance(max_attempts, int) or isinstance(max_attempts, bool):
            raise WorkflowDefinitionTypeError(
                f"Retry max_attempts must be an int, got {type(max_attempts).__qualname__}: "
                f"{max_attempts!r:.40}; write for example Retry(max_attempts=3).",
                rule="invalid_retry",
                site=call_site(),
            )
        if not 1 <= max_attempts <= MAX_SAFE_INTEGER:
            raise WorkflowDefinitionError(
                f"Retry max_attempts is {max_attempts}; it counts every attempt including the first, so it "
                f"must be at least 1 (and at most {MAX_SAFE_INTEGER}). Use Retry(max_attempts=1) for a "
                "single attempt.",
                rule="invalid_retry",
                site=call_site(),
            )
        if not _is_number(backoff):
            raise WorkflowDefinitionTypeError(
                f"Retry backoff must be a number of seconds, got {type(backoff).__qualname__}: {backoff!r:.40}",
                rule="invalid_retry",
                site=call_site(),
            )
        if not math.isfinite(backoff) or backoff < 0:
            raise WorkflowDefinitionError(
                f"Retry backoff is {backoff!r}; it must be a finite number of seconds, 0 or more.",
                rule="invalid_retry",
                site=call_site(),
            )
        object.__setattr__(self, "_max_attempts", int(max_attempts))
        object.__setattr__(self, "_backoff", float(backoff))

    @property
    def max_attempts(self) -> int:
        """Total attempts, the first included."""
        return self._max_attempts

    @property
    def backoff(self) -> float:
        """Seconds to wait between attempts."""
        return self._backoff

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Retry is read-only; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Retry is read-only; cannot delete {name!r}")

    def __repr__(self) -> str:
        return f"Retry(max_attempts={self._max_attempts!r}, backoff={self._backoff!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Retry):
            return NotImplemented
        return (self._max_attempts, self._backoff) == (other._max_attempts, other._backoff)

    def __hash__(self) -> int:
        return hash((Retry, self._max_attempts, self._backoff))

    def _to_manifest(self) -> Dict[str, Union[int, float]]:
        return {"max_attempts": self._max_attempts, "backoff": self._backoff}
