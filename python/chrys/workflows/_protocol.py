"""The worker's half of the wire protocol: framing, limits, and the messages it sends and accepts.

The protocol is defined once, in zod, in ``@icode/python-bridge`` (``src/protocol.ts``); its JSON Schema and
golden messages live in ``fixtures/protocol/`` and ``python/tests/test_worker_protocol.py`` checks this module
against them. See ``docs/protocol.md`` for the message list.

Messages are JSON objects, one per line, UTF-8, each at most :data:`MAX_MESSAGE_BYTES` including the newline.
Every message starts with ``type`` (and then ``id`` when it has one), so a receiver can name the call of a
message it has to refuse after reading only its first bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

PROTOCOL_VERSION = 1

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""One message between the processes, UTF-8, newline included."""
CAPTURE_LIMIT_BYTES = 64 * 1024
"""Kept per capture (load output, one call's output): the first 64 KiB of UTF-8."""
EMIT_MAX_PER_SECOND = 200
EMIT_MAX_COUNT = 10_000
EMIT_MAX_BYTES = 8 * 1024 * 1024
DEFAULT_CALLABLE_TIMEOUT_MS = 30_000
"""The shared limit of one outgoing-condition batch, and of each ``until`` and ``combine`` call."""
MAX_LOAD_DIAGNOSTICS = 50
"""At most this many syntax errors are reported for a folder; the rest set ``diagnostics_truncated``."""

#: The ``error.code`` values of a failed call.
CALL_ERROR_CODES = (
    "exception",
    "invalid_result",
    "value_not_serializable",
    "value_too_large",
    "protocol_limit",
    "ask_unavailable",
    "timeout",
    "cancelled",
    "protocol_error",
)

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_encode = _ENCODER.encode
_encode_string: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]
"""A ``str`` as JSON, as ``_ENCODER`` writes it (``ensure_ascii=False``)."""
_DECODER = json.JSONDecoder()
_decode = _DECODER.decode
_scan = _DECODER.scan_once
"""The C scanner behind ``json.loads``: one JSON value at an offset, as ``(value, end)``."""
_PREFIX = 120
"""Bytes kept of a message refused for its size: enough to read its ``type`` and ``id``."""
_ID_PREFIX = re.compile(rb'^\{\s*"type"\s*:\s*"[a-z_]+"\s*,\s*"id"\s*:\s*(\d{1,15})\s*[,}]')


class ProtocolError(Exception):
    """A message that breaks the protocol; ``call_id`` names its call when it could be read."""

    def __init__(self, message: str, call_id: Optional[int] = None) -> None:
        super().__init__(message)
        self.call_id = call_id


def encode(message: Dict[str, Any]) -> bytes:
    """One framed message: compact JSON, UTF-8, newline. Unpaired surrogates become ``?`` (never invalid UTF-8)."""
    text = _encode(message)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = text.encode("utf-8", "replace")
    return data + b"\n"


def encode_value(text: str, data: Any) -> str:
    """The JSON of a checked value ``{"text", "data"}``; raises ``ValueError``/``TypeError`` if it has none."""
    if data is None:  # most values: no dict to build, no encoder pass
        return '{"text":%s,"data":null}' % _encode_string(text)
    return _encode({"text": text, "data": data})


_EMPTY_OUTPUT = '{"text":"","truncated":false}'


def _output_json(captured: Dict[str, Any]) -> str:
    if not captured["text"] and not captured["truncated"]:
        return _EMPTY_OUTPUT
    return _encode(captured)


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def node_result_bytes(
    call_id: int, value_json: str, passed: List[str], captured: Dict[str, Any], leaked_threads: int
) -> bytes:
    """The framed :func:`node_result` with its value already encoded (the hot path: no re-encoding)."""
    return _utf8(
        '{"type":"result","id":%d,"ok":true,"kind":"node","passed":%s,"output":%s,"leaked_threads":%d,"value":%s}\n'
        % (call_id, _encode(passed) if passed else "[]", _output_json(captured), leaked_threads, value_json)
    )


def combine_result_bytes(call_id: int, value_json: str, captured: Dict[str, Any], leaked_threads: int) -> bytes:
    """The framed :func:`combine_result` with its value already encoded."""
    return _utf8(
        '{"type":"result","id":%d,"ok":true,"kind":"combine","output":%s,"leaked_threads":%d,"value":%s}\n'
        % (call_id, _output_json(captured), leaked_threads, value_json)
    )


def sanitize(text: str) -> str:
    """``text`` with unpaired surrogates replaced, so it is valid Unicode."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def call_id_of(prefix: bytes) -> Optional[int]:
    """The ``id`` of a message from its first bytes (``{"type":"…","id":N``), or ``None``."""
    match = _ID_PREFIX.match(prefix[:_PREFIX])
    return int(match.group(1)) if match else None


class LineReader:
    """Splits a byte stream into lines; a line over ``limit`` bytes is skipped and reported, never buffered."""

    __slots__ = ("_parts", "_size", "_limit", "_skipping", "_skipped_prefix")

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._parts: List[bytes] = []
        self._size = 0
        self._limit = limit
        self._skipping = False
        self._skipped_prefix = b""

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete line held (or skipped), waiting for the rest of it."""
        return self._limit if self._skipping else self._size

    def feed(self, chunk: bytes) -> List[Tuple[Optional[bytes], bytes]]:
        """The complete lines in ``chunk`` as ``(line, b"")``, or ``(None, prefix)`` for each oversized line."""
        out: List[Tuple[Optional[bytes], bytes]] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                rest = chunk[start:]
                if rest:
                    self._add(rest)
                return out
            piece = chunk[start:end]
            start = end + 1
            if self._skipping:
                out.append((None, self._skipped_prefix))
                self._skipping = False
                self._skipped_prefix = b""
                continue
            if self._size + len(piece) + 1 > self._limit:
                prefix = (b"".join(self._parts) + piece[:_PREFIX])[:_PREFIX] if self._parts else piece[:_PREFIX]
                self._parts = []
                self._size = 0
                out.append((None, prefix))
                continue
            if self._parts:
                self._parts.append(piece)
                line = b"".join(self._parts)
                self._parts = []
                self._size = 0
            else:
                line = piece
            out.append((line, b""))

    def _add(self, rest: bytes) -> None:
        if self._skipping:
            return
        if self._size + len(rest) + 1 > self._limit:
            self._skipped_prefix = (b"".join(self._parts) + rest[:_PREFIX])[:_PREFIX]
            self._parts = []
            self._size = 0
            self._skipping = True
            return
        self._parts.append(rest)
        self._size += len(rest)


# --- requests (engine → worker) ----------------------------------------------------------------------------


def _need(message: Dict[str, Any], key: str, check: Callable[[Any], bool], what: str) -> Any:
    value = message.get(key)
    if not check(value):
        raise ProtocolError(
            f"{message.get('type')!r} message: {key!r} must be {what}, got {value!r:.60}",
            message.get("id") if _is_int(message.get("id")) else None,
        )
    return value


def _is_int(value: object) -> bool:
    return type(value) is int


def _is_str(value: object) -> bool:
    return type(value) is str


def _is_bool(value: object) -> bool:
    return value is True or value is False


def _is_opt_str(value: object) -> bool:
    return value is None or type(value) is str


def _is_opt_ms(value: object) -> bool:
    return value is None or (type(value) in (int, float) and value > 0)


def _is_value(value: object) -> bool:
    return type(value) is dict and type(value.get("text")) is str and "data" in value


def _is_edges(value: object) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


def _is_conditions(value: object) -> bool:
    if value is None:
        return True
    if type(value) is not dict or not _is_edges(value.get("when")):
        return False
    switch = value.get("switch")
    if switch is None:
        return True
    return type(switch) is dict and _is_edges(switch.get("cases")) and type(switch.get("default")) is str


def _is_sources(value: object) -> bool:
    if type(value) is not list:
        return False
    for item in value:
        if type(item) is not dict or type(item.get("node_id")) is not str:
            return False
        if type(item.get("activation_id")) is not str or not _is_value(item.get("value")):
            return False
    return True


def _parse(text: str) -> Any:
    """``json.loads(text)``. A message the engine sends is one bare JSON value, read by the C scanner
    directly (the full decoder adds two Python calls and two regex matches); anything else (surrounding
    whitespace, trailing data, an error) goes through the full decoder, for the same value or error."""
    try:
        value, end = _scan(text, 0)
    except (StopIteration, ValueError):
        return _decode(text)
    if end != len(text):
        return _decode(text)
    return value


def decode_request(line: bytes) -> Dict[str, Any]:
    """Parses and checks one engine → worker message; raises :class:`ProtocolError` when it is not one."""
    try:
        message = _parse(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise ProtocolError(f"not a JSON message: {error}", call_id_of(line)) from None
    if type(message) is not dict:
        raise ProtocolError(f"a message must be a JSON object, got {type(message).__name__}")
    kind = message.get("type")
    if kind == "invoke" and message.get("kind") == "node":  # the hot path: the checks below, inline
        value = message.get("input")
        timeout = message.get("timeout_ms", 0)
        conditions = message.get("conditions", 0)
        conditions_timeout = message.get("conditions_timeout_ms", 0)
        if (
            type(message.get("id")) is int
            and type(message.get("node")) is str
            and type(value) is dict
            and type(value.get("text")) is str
            and "data" in value
            and (timeout is None or (type(timeout) in (int, float) and timeout > 0))
            and (conditions is None or _is_conditions(conditions))
            and (conditions_timeout is None or _is_opt_ms(conditions_timeout))
        ):
            return message
    if kind == "invoke":
        _need(message, "id", _is_int, "an integer")
        what = _need(
            message, "kind", lambda v: v in ("node", "conditions", "until", "combine"), "node, conditions, until or combine"
        )
        _need(message, "timeout_ms", _is_opt_ms, "a positive number or null")
        if what == "node":
            _need(message, "node", _is_str, "a node ID")
            _need(message, "input", _is_value, "a value {text, data}")
            _need(message, "conditions", _is_conditions, "null or {when: [edge…], switch: {cases, default} | null}")
            _need(message, "conditions_timeout_ms", _is_opt_ms, "a positive number or null")
        elif what == "conditions":
            _need(message, "source", _is_str, "the source node ID")
            _need(message, "input", _is_value, "a value {text, data}")
            _need(message, "conditions", lambda v: v is not None and _is_conditions(v), "{when: [edge…], switch: {cases, default} | null}")
        elif what == "until":
            _need(message, "loop", _is_str, "a loop node ID")
            _need(message, "input", _is_value, "a value {text, data}")
        else:
            _need(message, "join", _is_str, "a join node ID")
            _need(message, "sources", _is_sources, "a list of sources {node_id, activation_id, value}")
    elif kind == "cancel":
        _need(message, "id", _is_int, "an integer")
    elif kind == "answer":
        _need(message, "id", _is_int, "an integer")
        _need(message, "ask_id", _is_int, "an integer")
        if _need(message, "ok", _is_bool, "a boolean"):
            _need(message, "answers", lambda v: type(v) is list, "a list of answers")
        else:
            _need(message, "error", lambda v: v == "ask_unavailable", '"ask_unavailable"')
            _need(message, "message", _is_str, "a string")
    elif kind == "load":
        _need(message, "id", _is_int, "an integer")
        _need(message, "entry", _is_str, "the entry file's path")
        _need(message, "package_dir", _is_opt_str, "a folder path or null")
    elif kind == "shutdown":
        pass
    else:
        raise ProtocolError(f"unknown message type {kind!r}", message.get("id") if _is_int(message.get("id")) else None)
    return message


# --- messages (worker → engine) ----------------------------------------------------------------------------


def hello(sdk_version: str, python: Dict[str, Any], pid: int, pycache_prefix: Optional[str]) -> Dict[str, Any]:
    return {
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "sdk_version": sdk_version,
        "pid": pid,
        "python": python,
        "pycache_prefix": pycache_prefix,
    }


def output(text: str, truncated: bool) -> Dict[str, Any]:
    return {"text": text, "truncated": truncated}


def load_output(call_id: int, text: str) -> Dict[str, Any]:
    return {"type": "load_output", "id": call_id, "text": text}


def loaded(call_id: int, definition: Dict[str, Any], captured: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "load_result", "id": call_id, "ok": True, "definition": definition, "output": captured}


def load_failed(
    call_id: int, diagnostics: List[Dict[str, Any]], truncated: bool, captured: Dict[str, Any]
) -> Dict[str, Any]:
    return {
        "type": "load_result",
        "id": call_id,
        "ok": False,
        "diagnostics": diagnostics,
        "diagnostics_truncated": truncated,
        "output": captured,
    }


def call_error(
    code: str,
    message: str,
    *,
    phase: str,
    edge: Optional[str] = None,
    traceback: Optional[str] = None,
    file: Optional[str] = None,
    line: Optional[int] = None,
) -> Dict[str, Any]:
    """The ``error`` object of a failed call; ``phase`` is ``node``, ``conditions``, ``until`` or ``combine``."""
    return {
        "code": code,
        "message": sanitize(message),
        "phase": phase,
        "edge": edge,
        "traceback": sanitize(traceback) if traceback is not None else None,
        "file": file,
        "line": line,
    }


def emit(call_id: int, text: str) -> Dict[str, Any]:
    return {"type": "emit", "id": call_id, "text": text}


def ask(call_id: int, ask_id: int, questions: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {"type": "ask", "id": call_id, "ask_id": ask_id, "questions": questions}


def protocol_error(call_id: Optional[int], message: str) -> Dict[str, Any]:
    return {"type": "protocol_error", "id": call_id, "message": sanitize(message)}


def node_result(
    call_id: int,
    value: Dict[str, Any],
    passed: List[str],
    captured: Dict[str, Any],
    leaked_threads: int,
) -> Dict[str, Any]:
    return {
        "type": "result",
        "id": call_id,
        "ok": True,
        "kind": "node",
        "value": value,
        "passed": passed,
        "output": captured,
        "leaked_threads": leaked_threads,
    }


def conditions_result(call_id: int, passed: List[str], captured: Dict[str, Any], leaked_threads: int) -> Dict[str, Any]:
    return {
        "type": "result",
        "id": call_id,
        "ok": True,
        "kind": "conditions",
        "passed": passed,
        "output": captured,
        "leaked_threads": leaked_threads,
    }


def until_result(call_id: int, stop: bool, captured: Dict[str, Any], leaked_threads: int) -> Dict[str, Any]:
    return {
        "type": "result",
        "id": call_id,
        "ok": True,
        "kind": "until",
        "stop": stop,
        "output": captured,
        "leaked_threads": leaked_threads,
    }


def combine_result(
    call_id: int, value: Dict[str, Any], captured: Dict[str, Any], leaked_threads: int
) -> Dict[str, Any]:
    return {
        "type": "result",
        "id": call_id,
        "ok": True,
        "kind": "combine",
        "value": value,
        "output": captured,
        "leaked_threads": leaked_threads,
    }


def failed_result(
    call_id: int, error: Dict[str, Any], captured: Dict[str, Any], leaked_threads: int
) -> Dict[str, Any]:
    return {
        "type": "result",
        "id": call_id,
        "ok": False,
        "error": error,
        "output": captured,
        "leaked_threads": leaked_threads,
    }
