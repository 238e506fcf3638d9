"""The worker's half of the wire protocol: framing, limits, and the messages it sends and accepts.

The protocol is defined once, in zod, in ``@icode/python-bridge`` (``src/protocol.ts``); its JSON Schema and
golden messages live in ``fixtures/protocol/`` and ``python/tests/test_worker_protocol.py`` checks this module
against them. See ``docs/protocol.md`` for the message list.

Messages are JSON objects, one per line, UTF-8, each at most :data:`MAX_MESSAGE_BYTES` including the newline.
Every message starts with ``type`` (and then ``id`` when it has one), so a receiver can name the call of a
message it has to refuse after reading only its first bytes.
"""

from __future__ import annotations

import gc
import itertools
import json
import re
import threading
from typing import Any, Callable, Container, Dict, List, Optional, Tuple, Union

from ._values import LARGE_STRING_CHARS

PROTOCOL_VERSION = 3

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""One message between the processes, UTF-8, newline included, counting every large string it carries or
names by reference at its full UTF-8 size."""
KEPT_STRING_BYTES = 128 * 1024 * 1024
"""Large strings the two sides keep in common for later messages (see :class:`StringTable`), in UTF-8 bytes."""
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


_TREE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)
"""``_ENCODER`` without the cycle check (~10% of encoding a Definition): for messages the SDK builds itself."""


def encode(message: Dict[str, Any], tree: bool = False) -> bytes:
    """One framed message: compact JSON, UTF-8, newline. Unpaired surrogates become ``?`` (never invalid UTF-8).
    ``tree``: the message is known to hold no reference cycle (a ``loaded`` one: the builder makes the
    Definition of copies of checked JSON values), so it is encoded without looking for one."""
    text = (_TREE_ENCODER.encode if tree else _encode)(message)
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


class LargeValue:
    """A checked value with large strings, ready to send: its JSON with ``""`` in place of each large string,
    and the strings with their paths (``["data", 0]``), which travel as string frames (:class:`StringTable`)."""

    __slots__ = ("json", "strings")

    def __init__(self, json_text: str, strings: List[Tuple[List[Union[int, str]], str]]) -> None:
        self.json = json_text
        self.strings = strings


def encode_large_value(text: str, data: Any, strings: List[Tuple[List[Union[int, str]], str]]) -> LargeValue:
    """:func:`encode_value` of a value whose ``strings`` (from ``check_value_strings``) go by reference."""
    root: List[Any] = [{"text": text, "data": data}]
    copied = set()
    for path in strings:
        holder, key = root, 0
        for step in path[0]:
            child = holder[key]
            if id(child) not in copied:  # copy the containers on the way, never the caller's own
                child = list(child) if isinstance(child, list) else dict(child)
                copied.add(id(child))
                holder[key] = child
            holder, key = child, step
        holder[key] = ""
    return LargeValue(_encode(root[0]), strings)


def node_result_bytes(
    call_id: int, value_json: str, passed: List[str], captured: Dict[str, Any], leaked_threads: int, refs: str = ""
) -> bytes:
    """The framed :func:`node_result` with its value already encoded (the hot path: no re-encoding);
    ``refs`` is ``,"strings":[…]`` when the value names large strings (:meth:`StringTable.prepare`)."""
    return _utf8(
        '{"type":"result","id":%d,"ok":true,"kind":"node","passed":%s,"output":%s,"leaked_threads":%d,"value":%s%s}\n'
        % (call_id, _encode(passed) if passed else "[]", _output_json(captured), leaked_threads, value_json, refs)
    )


def combine_result_bytes(
    call_id: int, value_json: str, captured: Dict[str, Any], leaked_threads: int, refs: str = ""
) -> bytes:
    """The framed :func:`combine_result` with its value already encoded."""
    return _utf8(
        '{"type":"result","id":%d,"ok":true,"kind":"combine","output":%s,"leaked_threads":%d,"value":%s%s}\n'
        % (call_id, _output_json(captured), leaked_threads, value_json, refs)
    )


# --- large strings ------------------------------------------------------------------------------------------


class StringTable:
    """The large strings (``LARGE_STRING_CHARS`` characters or more) this worker and the engine hold in common.

    A large string in a value crosses the pipe once, as a string frame: the line
    ``{"type":"string","ref":R,"bytes":B,"keep":K}``, then its ``B`` bytes of UTF-8, then a newline. The message
    that uses it has ``""`` in its place and lists it in ``"strings": [{"ref": R, "at": [path…]}]``. With
    ``keep: true`` both sides keep the string for the rest of the worker's life, and later messages name it by
    ``ref`` alone: a value that passes through a chain of nodes is sent once, not once per node. Strings are
    immutable on both sides, so sharing them is safe. The sender keeps strings while both tables hold at most
    :data:`KEPT_STRING_BYTES`; past that its frames say ``keep: false`` and serve the next message only. The
    engine numbers its strings with odd refs, the worker with even ones.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        """Held while a message with new strings is prepared and sent, so that no other message can name a
        string before its frame is on its way."""
        self._kept: Dict[int, Tuple[str, int]] = {}
        self._refs: Dict[int, int] = {}
        """``id(string)`` → ref, for the kept strings (kept alive by ``_kept``, so their ids stay theirs)."""
        self.known: Container[int] = self._refs
        """``id()`` of the kept strings: all valid Unicode (decoded from UTF-8, or checked before they were sent)."""
        self._transient: Dict[int, Tuple[str, int]] = {}
        self.kept_bytes = 0
        self._next = itertools.count(2, 2)

    def receive(self, ref: int, text: str, size: int, keep: bool) -> None:
        """A string frame from the engine."""
        if keep:
            if ref not in self._kept:
                self.kept_bytes += size
            self._kept[ref] = (text, size)
            self._refs[id(text)] = ref
        else:
            self._transient[ref] = (text, size)

    def resolve(self, message: Dict[str, Any]) -> None:
        """Puts the strings a message names in their places. A frame sent for one message alone
        (``keep: false``) is dropped once a message has used it."""
        refs = message.pop("strings", None)
        if refs is None:
            return
        call_id = message.get("id") if type(message.get("id")) is int else None
        if type(refs) is not list:
            raise ProtocolError(f"'strings' must be a list of {{ref, at}}, got {refs!r:.60}", call_id)
        transient = self._transient
        used = []
        try:
            for entry in refs:
                ref = entry.get("ref") if type(entry) is dict else None
                at = entry.get("at") if type(entry) is dict else None
                found = None
                if type(ref) is int:
                    found = self._kept.get(ref)
                    if found is None:
                        found = transient.get(ref)
                        used.append(ref)
                if found is None:
                    raise ProtocolError(f"the message names an unknown string {entry!r:.60}", call_id)
                if type(at) is not list or not at or not _place(message, at, found[0]):
                    raise ProtocolError(f"the string {ref} has no place {at!r:.60} holding \"\" in the message", call_id)
        finally:
            for ref in used:
                transient.pop(ref, None)

    def prepare(
        self, strings: List[Tuple[List[Union[int, str]], str]], prefix: str
    ) -> Tuple[List[bytes], str, int, List[int]]:
        """For a message with ``strings`` under ``prefix`` (``"value"``): the string frames to send before it,
        its ``,"strings":[…]`` field, the UTF-8 bytes of all its strings, and the refs kept anew (pass them
        to :meth:`forget` if the message is not sent). Call with :attr:`lock` held until the message is sent."""
        frames: List[bytes] = []
        entries: List[str] = []
        total = 0
        added: List[int] = []
        here: Dict[int, Tuple[int, int]] = {}
        for path, text in strings:
            ref = self._refs.get(id(text))
            if ref is not None and self._kept[ref][0] is text:
                size = self._kept[ref][1]
            elif id(text) in here:  # twice in this message, not kept
                ref, size = here[id(text)]
            else:
                encoded = str.encode(text, "utf-8")  # a str subclass goes as its characters, as in JSON
                size = len(encoded)
                ref = next(self._next)
                here[id(text)] = (ref, size)
                keep = self.kept_bytes + size <= KEPT_STRING_BYTES
                keep_json = b"true" if keep else b"false"
                frames.append(b'{"type":"string","ref":%d,"bytes":%d,"keep":%s}\n' % (ref, size, keep_json))
                frames.append(encoded)
                frames.append(b"\n")
                if keep:
                    self._kept[ref] = (text, size)
                    self._refs[id(text)] = ref
                    self.kept_bytes += size
                    added.append(ref)
            total += size
            entries.append('{"ref":%d,"at":%s}' % (ref, _encode([prefix, *path])))
        return frames, ',"strings":[%s]' % ",".join(entries), total, added

    def forget(self, refs: List[int]) -> None:
        """Undoes :meth:`prepare` for a message that was not sent."""
        for ref in refs:
            text, size = self._kept.pop(ref)
            self._refs.pop(id(text), None)
            self.kept_bytes -= size


def _place(message: Dict[str, Any], at: List[Any], text: str) -> bool:
    holder: Any = message
    for step in at[:-1]:
        holder = _child(holder, step)
        if holder is None:
            return False
    last = at[-1]
    if type(holder) is dict and type(last) is str and holder.get(last) == "":
        holder[last] = text
        return True
    if type(holder) is list and type(last) is int and 0 <= last < len(holder) and holder[last] == "":
        holder[last] = text
        return True
    return False


def _child(holder: Any, step: Any) -> Any:
    if type(holder) is dict and type(step) is str:
        child = holder.get(step)
    elif type(holder) is list and type(step) is int and 0 <= step < len(holder):
        child = holder[step]
    else:
        return None
    return child if type(child) in (dict, list) else None


STRINGS = StringTable()
"""The worker's table (one engine per worker process)."""


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
    """Splits a byte stream into lines; a line over ``limit`` bytes is skipped and reported, never buffered.

    String frames (see :class:`StringTable`) are taken in here: their strings go to ``strings``, and only a
    broken one comes out, as a ``{"type":"string","error":…}`` line that :func:`decode_request` refuses."""

    __slots__ = ("_parts", "_size", "_limit", "_skipping", "_skipped_prefix", "_strings", "_raw", "_raw_need", "_raw_got")

    def __init__(self, limit: int = MAX_MESSAGE_BYTES, strings: Optional[StringTable] = None) -> None:
        self._parts: List[bytes] = []
        self._size = 0
        self._limit = limit
        self._skipping = False
        self._skipped_prefix = b""
        self._strings = strings if strings is not None else STRINGS
        self._raw: Optional[Tuple[int, int, bool]] = None
        """The string frame being read: ``(ref, bytes, keep)``; its body is in ``_parts``."""
        self._raw_need = 0
        self._raw_got = 0

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete line or string frame held (or skipped), waiting for the rest of it."""
        if self._raw is not None:
            return self._raw_need
        return self._limit if self._skipping else self._size

    def feed(self, chunk: bytes) -> List[Tuple[Optional[bytes], bytes]]:
        """The complete lines in ``chunk`` as ``(line, b"")``, or ``(None, prefix)`` for each oversized line."""
        out: List[Tuple[Optional[bytes], bytes]] = []
        start = 0
        while True:
            if self._raw is not None:
                start = self._take_raw(chunk, start, out)
                if self._raw is not None:
                    return out
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
            if line.startswith(_STRING_FRAME):
                problem = self._start_raw(line)
                if problem is not None:
                    out.append((_string_error(problem), b""))
                continue
            out.append((line, b""))

    def _start_raw(self, header: bytes) -> Optional[str]:
        try:
            fields = json.loads(header)
        except ValueError as error:
            return f"a string frame header that is not JSON: {error}"
        ref, size, keep = fields.get("ref"), fields.get("bytes"), fields.get("keep")
        if type(ref) is not int or ref <= 0 or type(size) is not int or not 0 <= size <= self._limit or type(keep) is not bool:
            return f"a string frame header needs a positive ref, bytes (at most {self._limit:,}) and keep: {header[:_PREFIX]!r}"
        self._raw = (ref, size, keep)
        self._raw_need = size + 1  # the string, then a newline
        self._raw_got = 0
        return None

    def _take_raw(self, chunk: bytes, start: int, out: List[Tuple[Optional[bytes], bytes]]) -> int:
        """Reads a string frame's body from ``chunk[start:]``; returns where the rest of the chunk begins."""
        take = min(self._raw_need - self._raw_got, len(chunk) - start)
        if take:
            self._parts.append(chunk[start : start + take] if start or take < len(chunk) else chunk)
            self._raw_got += take
        if self._raw_got < self._raw_need:
            return start + take
        ref, size, keep = self._raw  # type: ignore[misc]
        body = b"".join(self._parts) if len(self._parts) > 1 else self._parts[0]
        self._parts = []
        self._raw = None
        if body[size:] != b"\n":
            out.append((_string_error(f"string frame {ref} is not followed by a newline after its {size:,} bytes"), b""))
        else:
            try:
                text = body[:size].decode("utf-8")
            except UnicodeDecodeError as error:
                out.append((_string_error(f"string frame {ref} is not UTF-8: {error}"), b""))
            else:
                self._strings.receive(ref, text, size, keep)
        return start + take

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


_STRING_FRAME = b'{"type":"string",'


def _string_error(problem: str) -> bytes:
    return _encode({"type": "string", "error": problem}).encode("utf-8")


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


def decode_request(line: bytes, strings: Optional[StringTable] = None) -> Dict[str, Any]:
    """Parses and checks one engine → worker message, with the large strings it names (from ``strings``, by
    default the worker's table) in their places; raises :class:`ProtocolError` when it is not one."""
    try:
        message = _parse(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise ProtocolError(f"not a JSON message: {error}", call_id_of(line)) from None
    if type(message) is not dict:
        raise ProtocolError(f"a message must be a JSON object, got {type(message).__name__}")
    (STRINGS if strings is None else strings).resolve(message)
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
    elif kind == "string":  # a string frame the reader could not take (a good one never gets here)
        raise ProtocolError(str(message.get("error", "a string frame out of place")))
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
    """The ``load_result`` of a built workflow. Each distinct site goes once into ``sites``, and every ``site``
    of a node or edge, and ``build_site``, becomes its index there (or stays ``None``): nodes and edges
    declared in a loop share one site, so this halves the message of a large fan-out, and the time to write
    and read it. The bridge puts the sites back before anything else sees the Definition."""
    sites: List[Dict[str, Any]] = []
    indexes: Dict[Tuple[Any, ...], int] = {}

    def index_of(site: Optional[Dict[str, Any]]) -> Optional[int]:
        if site is None:
            return None
        key = (site["file"], site["line"], site["column"], site["end_line"], site["end_column"])
        index = indexes.get(key)
        if index is None:
            index = indexes[key] = len(sites)
            sites.append(site)
        return index

    # Copies: the loaded workflow keeps its own Definition as it is. An item without a site (past MAX_SITES)
    # goes as it is.
    wire = dict(definition)
    wire["nodes"] = [
        node if node["site"] is None else {**node, "site": index_of(node["site"])} for node in definition["nodes"]
    ]
    wire["edges"] = [
        edge if edge["site"] is None else {**edge, "site": index_of(edge["site"])} for edge in definition["edges"]
    ]
    wire["build_site"] = index_of(definition["build_site"])
    return {"type": "load_result", "id": call_id, "ok": True, "definition": wire, "sites": sites, "output": captured}


def loaded_bytes(call_id: int, definition: Dict[str, Any], captured: Dict[str, Any]) -> bytes:
    """``encode(loaded(...))`` with the cyclic garbage collector paused. The copies made for the message hold
    no cycle and go with it, so a collection would find nothing to free; yet on a large graph one would walk
    every object the load built (~10 ms of encoding a fan-out of 10,000)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return encode(loaded(call_id, definition, captured), tree=True)
    finally:
        if enabled:
            gc.enable()


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
