"""Values passed between nodes, and the data rules and limits they must meet to be passed on.

``WorkflowValue(...)`` does not validate when constructed; :func:`check_value` applies the rules once a node
or ``combine`` returned, and :func:`to_wire` / :func:`from_wire` convert to and from the JSON shape
``{"text": str, "data": JSON}``.
"""

from __future__ import annotations

import math
import re
from typing import Any, Container, Dict, List, Mapping, Optional, Set, Tuple, Union, cast

from ._errors import ValueNotSerializable, ValueTooLarge, WorkflowValueError
from ._names import with_article

__all__ = [
    "JsonValue",
    "MAX_DEPTH",
    "MAX_STRING_CHARS",
    "MAX_VALUES",
    "SourceValue",
    "ValueNotSerializable",
    "ValueTooLarge",
    "WorkflowValue",
    "WorkflowValueError",
    "check_value",
    "check_value_strings",
    "find_lone_surrogate",
    "from_wire",
    "to_wire",
]

JsonValue = Union[Dict[str, Any], List[Any], str, int, float, bool, None]
"""What ``data`` may hold, as the spec writes it (nested values follow the same rules, see :func:`check_value`)."""

MAX_DEPTH = 64
"""``data`` is level 0; each list element or dictionary value is one level deeper, scalars included."""
MAX_VALUES = 200_000
"""Every list, dictionary and scalar in ``data`` counts as one value; dictionary keys do not."""
MAX_STRING_CHARS = 4_194_304
"""Longest string allowed in ``text`` or anywhere in ``data``, in characters."""
LARGE_STRING_CHARS = 65_536
"""Strings at least this long are collected by :func:`check_value_strings`: they travel between the processes
by reference (see ``_protocol.StringTable``), not inside the JSON of each message."""

# Python refuses to turn integers with more digits than this into text (3.11+ default), so JSON can't carry them.
_MAX_INT_DIGITS = 4300
_INT_LIMIT = 10**_MAX_INT_DIGITS

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def find_lone_surrogate(text: str) -> Optional[int]:
    """The index of the first unpaired surrogate in ``text`` (not valid Unicode), or ``None``."""
    if text.isascii():  # most text, checked in one quick pass
        return None
    match = _LONE_SURROGATE.search(text)
    return match.start() if match is not None else None


class WorkflowValue:
    """A value passed between nodes: ``text`` and optional JSON-like ``data``."""

    __slots__ = ("text", "data")

    text: str
    data: Any
    """JSON data; typed ``Any`` so that author code can read ``value.data["key"]`` without casts."""

    def __init__(self, text: str, data: JsonValue = None) -> None:
        self.text = text
        self.data = data

    def __repr__(self) -> str:
        return f"WorkflowValue(text={self.text!r}, data={self.data!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WorkflowValue):
            return NotImplemented
        return self.text == other.text and _same_data(self.data, other.data)

    __hash__ = None  # type: ignore[assignment]

    def to_wire(self) -> Dict[str, JsonValue]:
        """``{"text": ..., "data": ...}``; see :func:`to_wire`."""
        return to_wire(self)

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> WorkflowValue:
        """The value of a ``{"text": ..., "data": ...}`` object; see :func:`from_wire`."""
        return from_wire(message)


def _same_data(left: object, right: object) -> bool:
    # `True == 1` in Python, but they are different JSON values.
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_same_data(a, b) for a, b in zip(left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same_data(left[k], right[k]) for k in left)
    return left == right


class SourceValue:
    """One source's result as a ``combine`` function receives it."""

    __slots__ = ("_node_id", "_activation_id", "_value")
    _node_id: str
    _activation_id: str
    _value: WorkflowValue

    def __init__(self, node_id: str, activation_id: str, value: WorkflowValue) -> None:
        object.__setattr__(self, "_node_id", node_id)
        object.__setattr__(self, "_activation_id", activation_id)
        object.__setattr__(self, "_value", value)

    @property
    def node_id(self) -> str:
        """The source node's name."""
        return self._node_id

    @property
    def activation_id(self) -> str:
        """This execution of the source node in the run (differs per loop iteration)."""
        return self._activation_id

    @property
    def value(self) -> WorkflowValue:
        """The ``WorkflowValue`` that execution produced."""
        return self._value

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"SourceValue is read-only; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"SourceValue is read-only; cannot delete {name!r}")

    def __repr__(self) -> str:
        return (
            f"SourceValue(node_id={self._node_id!r}, activation_id={self._activation_id!r}, "
            f"value={self._value!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceValue):
            return NotImplemented
        return (self._node_id, self._activation_id, self._value) == (
            other._node_id,
            other._activation_id,
            other._value,
        )

    __hash__ = None  # type: ignore[assignment]


def _type_name(value: object) -> str:
    return type(value).__qualname__


def _check_string(text: str, where: str) -> None:
    if len(text) > MAX_STRING_CHARS:
        raise ValueTooLarge(
            f"{where} is a string of {len(text):,} characters; at most {MAX_STRING_CHARS:,} are allowed. "
            "Pass large content by file path instead, or shorten it.",
            path=where,
        )
    index = find_lone_surrogate(text)
    if index is not None:
        raise ValueNotSerializable(
            f"{where} holds an unpaired surrogate {text[index]!r} at index {index}, which is not valid "
            "Unicode; decode the text properly (for example with errors='replace') before returning it.",
            path=where,
        )


_Path = Optional[Tuple[Any, Union[int, str]]]
"""A path into data, built lazily as ``(parent path, index or key)``; formatted only for messages."""


def _format_path(path: _Path) -> str:
    keys: List[Union[int, str]] = []
    while path is not None:
        path, key = path
        keys.append(key)
    return "data" + "".join(f"[{key!r}]" for key in reversed(keys))


def _plain_leaf(value: object) -> bool:
    """True for the values that need no further check: ``None``, ``bool``, a small ``int``, a finite
    ``float``, or a ``str`` shorter than ``LARGE_STRING_CHARS`` without unpaired surrogates. Everything else
    (containers, subclasses, large strings, other types, values breaking a rule) takes the full check."""
    kind = type(value)
    if kind is str:
        text = cast(str, value)
        return len(text) < LARGE_STRING_CHARS and (text.isascii() or _LONE_SURROGATE.search(text) is None)
    if kind is int:
        return cast(int, value).bit_length() <= 14_000
    if kind is float:
        return math.isfinite(cast(float, value))
    return value is None or kind is bool


class _DataChecker:
    __slots__ = ("count", "active", "large", "known")

    def __init__(self, known: Container[int] = ()) -> None:
        self.count = 0
        self.active: Set[int] = set()
        self.large: List[Tuple[_Path, str]] = []
        """Where the strings of ``LARGE_STRING_CHARS`` or more are, with each string."""
        self.known = known
        """``id()`` of large strings known to be valid Unicode (no need to scan them again)."""

    def too_deep(self, path: _Path, depth: int) -> ValueTooLarge:
        where = _format_path(path)
        return ValueTooLarge(
            f"{where} is nested {depth} levels deep in data; at most {MAX_DEPTH} levels are allowed "
            "(data itself is level 0). Flatten the structure.",
            path=where,
        )

    def too_many(self, path: _Path) -> ValueTooLarge:
        return ValueTooLarge(
            f"data holds more than {MAX_VALUES:,} values (lists, dictionaries and scalars each count "
            "as one); return less data or pass it by file path.",
            path=_format_path(path),
        )

    def check(self, value: object, path: _Path, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise self.too_deep(path, depth)
        self.count += 1
        if self.count > MAX_VALUES:
            raise self.too_many(path)
        if _plain_leaf(value):
            return
        if isinstance(value, list):
            self._enter(value, path)
            child_depth = depth + 1
            if child_depth > MAX_DEPTH and value:
                raise self.too_deep((path, 0), child_depth)
            for index, item in enumerate(value):
                if _plain_leaf(item):  # the common leaves, without a call and a path per item
                    self.count += 1
                    if self.count > MAX_VALUES:
                        raise self.too_many((path, index))
                    continue
                self.check(item, (path, index), child_depth)
            self.active.discard(id(value))
            return
        if isinstance(value, dict):
            self._enter(value, path)
            child_depth = depth + 1
            if child_depth > MAX_DEPTH and value:
                raise self.too_deep((path, next(iter(value))), child_depth)
            for key, item in value.items():
                if type(key) is not str or not _plain_leaf(key):
                    if not isinstance(key, str):
                        where = _format_path(path)
                        raise ValueNotSerializable(
                            f"{where} has a key {key!r} of type {_type_name(key)}; data dictionaries need "
                            "string keys. Convert the key with str().",
                            path=where,
                        )
                    _check_string(key, f"the key {_format_path((path, key))}")
                if _plain_leaf(item):
                    self.count += 1
                    if self.count > MAX_VALUES:
                        raise self.too_many((path, key))
                    continue
                self.check(item, (path, key), child_depth)
            self.active.discard(id(value))
            return
        self.scalar(value, path)

    def scalar(self, value: object, path: _Path) -> None:
        """The full check of a value outside the fast paths: subclasses, big ints, non-finite floats, others."""
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, str):
            size = len(value)
            if size > MAX_STRING_CHARS or (
                not value.isascii() and id(value) not in self.known and _LONE_SURROGATE.search(value) is not None
            ):
                _check_string(value, _format_path(path))
            if size >= LARGE_STRING_CHARS:
                self.large.append((path, value))
            return
        where = _format_path(path)
        if isinstance(value, int):
            if value.bit_length() > 14_000 and abs(value) >= _INT_LIMIT:
                raise ValueNotSerializable(
                    f"{where} is an integer with more than {_MAX_INT_DIGITS} digits, which cannot be "
                    "serialized; return it as a string.",
                    path=where,
                )
            return
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueNotSerializable(
                    f"{where} is {value!r}; data allows only finite numbers (no NaN or infinity). "
                    "Use None or a string instead.",
                    path=where,
                )
            return
        hint = {
            "tuple": "use a list instead",
            "set": "use a sorted list instead",
            "frozenset": "use a sorted list instead",
            "bytes": "decode it to a string, or encode it as base64 text",
            "bytearray": "decode it to a string, or encode it as base64 text",
        }.get(type(value).__name__, "convert it to a dict, list, str, int, float, bool or None")
        raise ValueNotSerializable(
            f"{where} is {with_article(_type_name(value))}, which data cannot carry; {hint}. data allows only "
            "str, int, finite float, bool, None, lists, and dicts with string keys.",
            path=where,
        )

    def _enter(self, container: object, path: _Path) -> None:
        if id(container) in self.active:
            where = _format_path(path)
            raise ValueNotSerializable(
                f"{where} contains itself (a circular reference), which cannot be serialized.",
                path=where,
            )
        self.active.add(id(container))


def check_value(value: object) -> WorkflowValue:
    """Checks a node's or ``combine``'s return value against the data rules and limits.

    A ``str`` becomes ``WorkflowValue(text=value, data=None)``. Raises :class:`ValueNotSerializable` for
    anything else than ``str``/``WorkflowValue``, non-JSON data, NaN/infinity, non-string keys or unpaired
    surrogates, and :class:`ValueTooLarge` for data deeper than 64 levels, more than 200,000 values, or a
    string over 4,194,304 characters.
    """
    if isinstance(value, str):
        _check_string(value, "the returned text")
        return WorkflowValue(str.__str__(value))
    if not isinstance(value, WorkflowValue):
        raise ValueNotSerializable(
            f"the function returned {with_article(_type_name(value))}; it must return a str or a WorkflowValue. "
            "Wrap structured results as WorkflowValue(text=..., data=...).",
        )
    if not isinstance(value.text, str):
        raise ValueNotSerializable(
            f"WorkflowValue.text is {with_article(_type_name(value.text))}; it must be a str. "
            "Put structured content in data and a readable summary in text.",
            path="text",
        )
    _check_string(value.text, "WorkflowValue.text")
    _DataChecker().check(value.data, None, 0)
    return value


def check_value_strings(
    value: object, known: Container[int] = ()
) -> Tuple[WorkflowValue, List[Tuple[List[Union[int, str]], str]]]:
    """:func:`check_value`, and the large strings of the value (``LARGE_STRING_CHARS`` or more) with their
    paths in the wire shape: ``["text"]`` or ``["data", key or index, …]``. ``known`` holds the ``id()`` of
    large strings known to be valid Unicode, which are not scanned again (a value passed along a chain)."""
    if isinstance(value, str):
        if id(value) not in known or len(value) > MAX_STRING_CHARS:  # known: valid Unicode, not short
            _check_string(value, "the returned text")
        value = WorkflowValue(str.__str__(value))
    elif not isinstance(value, WorkflowValue) or not isinstance(value.text, str):
        return check_value(value), []  # raises
    if id(value.text) not in known or len(value.text) > MAX_STRING_CHARS:
        _check_string(value.text, "WorkflowValue.text")
    checker = _DataChecker(known)
    checker.check(value.data, None, 0)
    large: List[Tuple[List[Union[int, str]], str]] = []
    if len(value.text) >= LARGE_STRING_CHARS:
        large.append((["text"], value.text))
    for path, text in checker.large:
        keys: List[Union[int, str]] = []
        while path is not None:
            path, key = path
            keys.append(key)
        keys.append("data")
        keys.reverse()
        large.append((keys, text))
    return value, large


def _plain(value: object) -> JsonValue:
    # Subclasses of the JSON types (an IntEnum, an OrderedDict) become the plain types.
    if value is None or type(value) in (bool, int, float, str):
        return value  # type: ignore[return-value]
    if isinstance(value, bool):
        return bool(value)
    # The base types' own conversions: a subclass may override __str__, __int__ or __float__.
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str.__str__(key): _plain(item) for key, item in value.items()}
    raise ValueNotSerializable(f"{_type_name(value)} cannot be serialized; call check_value() first.")


def to_wire(value: WorkflowValue) -> Dict[str, JsonValue]:
    """``{"text": str, "data": JSON}`` with plain JSON types; call :func:`check_value` first."""
    return {"text": str.__str__(value.text), "data": _plain(value.data)}


def from_wire(message: Mapping[str, Any]) -> WorkflowValue:
    """The ``WorkflowValue`` of a ``{"text": str, "data": JSON}`` object (``data`` may be absent)."""
    if not isinstance(message, Mapping):
        raise TypeError(f"a wire value must be an object with 'text' and 'data', got {_type_name(message)}")
    text = message.get("text")
    if not isinstance(text, str):
        raise TypeError(f"a wire value needs a string 'text', got {_type_name(text)}")
    return WorkflowValue(text, message.get("data"))
