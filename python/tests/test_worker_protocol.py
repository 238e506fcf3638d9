"""The worker's protocol against the engine's truth: ``fixtures/protocol/`` is generated from the zod schemas
in ``packages/python-bridge/src/protocol.ts``. The worker must accept every golden engine → worker message,
and every message it builds must match the JSON Schema of worker → engine messages."""

from __future__ import annotations

import json
import os
import unittest
from typing import Any, Dict, List

from chrys.workflows import _protocol as proto

from ._support import fan_out

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO_ROOT, "fixtures", "protocol")


def _fixture(name: str) -> Dict[str, Any]:
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        data: Dict[str, Any] = json.load(handle)
    return data


SCHEMA = _fixture("schema.json")
MESSAGES = _fixture("messages.json")

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def schema_errors(value: Any, schema: Dict[str, Any], path: str = "$") -> List[str]:
    """Errors of ``value`` against the subset of JSON Schema (2020-12) that zod's ``toJSONSchema`` emits."""
    errors: List[str] = []
    if "oneOf" in schema or "anyOf" in schema:
        options = schema.get("oneOf") or schema.get("anyOf")
        matches = [option for option in options if not schema_errors(value, option, path)]
        if "oneOf" in schema and len(matches) != 1:
            return [f"{path}: matches {len(matches)} of the oneOf options, expected exactly 1"]
        if "anyOf" in schema and not matches:
            return [f"{path}: matches none of the anyOf options"]
    kinds = schema.get("type")
    if kinds is not None:
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if not any(_TYPES[kind](value) for kind in kinds):
            return [f"{path}: {value!r:.60} is not of type {kinds}"]
    if "const" in schema and (value != schema["const"] or type(value) is not type(schema["const"])):
        errors.append(f"{path}: {value!r:.60} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r:.60} is not one of {schema['enum']}")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} > {schema['maximum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            errors.append(f"{path}: {value} <= {schema['exclusiveMinimum']}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing {key!r}")
        for key, item in value.items():
            if key in properties:
                errors.extend(schema_errors(item, properties[key], f"{path}.{key}"))
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected field {key!r}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
        prefix = schema.get("prefixItems", [])
        for index, item in enumerate(value):
            if index < len(prefix):
                errors.extend(schema_errors(item, prefix[index], f"{path}[{index}]"))
            elif isinstance(schema.get("items"), dict):
                errors.extend(schema_errors(item, schema["items"], f"{path}[{index}]"))
    return errors


def assert_from_worker(test: unittest.TestCase, message: Any) -> None:
    """``message`` (a dict, or framed bytes) is a valid worker → engine message."""
    if isinstance(message, bytes):
        test.assertTrue(message.endswith(b"\n"))
        test.assertNotIn(b"\n", message[:-1])
        message = json.loads(message)
    test.assertEqual(schema_errors(message, SCHEMA["from_worker"]), [], message)
    test.assertEqual(list(message)[0], "type")
    if "id" in message:
        test.assertEqual(list(message)[1], "id")


OUTPUT = {"text": "printed\n", "truncated": False}


class SchemaValidatorTest(unittest.TestCase):
    """The validator itself: it accepts the golden messages and can fail."""

    def test_golden_worker_messages_are_valid(self) -> None:
        for message in MESSAGES["from_worker"]:
            assert_from_worker(self, message)

    def test_golden_engine_messages_are_valid(self) -> None:
        for message in MESSAGES["to_worker"]:
            self.assertEqual(schema_errors(message, SCHEMA["to_worker"]), [], message)

    def test_broken_messages_are_not(self) -> None:
        hello = dict(MESSAGES["from_worker"][0])
        self.assertNotEqual(schema_errors({**hello, "protocol": proto.PROTOCOL_VERSION + 1}, SCHEMA["from_worker"]), [])
        self.assertNotEqual(schema_errors({**hello, "extra": 1}, SCHEMA["from_worker"]), [])
        self.assertNotEqual(schema_errors({"type": "emit", "id": 1}, SCHEMA["from_worker"]), [])
        self.assertNotEqual(schema_errors({"type": "emit", "id": -1, "text": ""}, SCHEMA["from_worker"]), [])


class ConstantsTest(unittest.TestCase):
    def test_version_and_limits_match_the_engine(self) -> None:
        limits = SCHEMA["limits"]
        self.assertEqual(proto.PROTOCOL_VERSION, SCHEMA["protocol"])
        self.assertEqual(proto.PROTOCOL_VERSION, MESSAGES["protocol"])
        self.assertEqual(proto.MAX_MESSAGE_BYTES, limits["messageBytes"])
        self.assertEqual(proto.CAPTURE_LIMIT_BYTES, limits["captureBytes"])
        self.assertEqual(proto.EMIT_MAX_PER_SECOND, limits["emitPerSecond"])
        self.assertEqual(proto.EMIT_MAX_COUNT, limits["emitCount"])
        self.assertEqual(proto.EMIT_MAX_BYTES, limits["emitBytes"])
        self.assertEqual(proto.DEFAULT_CALLABLE_TIMEOUT_MS, limits["callableTimeoutMs"])
        self.assertEqual(proto.LARGE_STRING_CHARS, limits["largeStringChars"])
        self.assertEqual(proto.KEPT_STRING_BYTES, limits["keptStringBytes"])

    def test_error_codes_match_the_engine(self) -> None:
        failed = [m for m in MESSAGES["from_worker"] if m["type"] == "result" and not m["ok"]][0]
        schema = [
            option
            for option in _flatten(SCHEMA["from_worker"])
            if option.get("properties", {}).get("error") and option["properties"]["ok"].get("const") is False
        ][0]
        self.assertEqual(tuple(schema["properties"]["error"]["properties"]["code"]["enum"]), proto.CALL_ERROR_CODES)
        self.assertIn(failed["error"]["code"], proto.CALL_ERROR_CODES)


def _flatten(schema: Dict[str, Any]) -> List[Dict[str, Any]]:
    options = schema.get("oneOf") or schema.get("anyOf")
    if not options:
        return [schema]
    return [leaf for option in options for leaf in _flatten(option)]


class DecodeRequestTest(unittest.TestCase):
    def test_accepts_every_golden_engine_message(self) -> None:
        for message in MESSAGES["to_worker"]:
            line = json.dumps(message, ensure_ascii=False).encode("utf-8")
            self.assertEqual(proto.decode_request(line), message)

    def test_refuses_broken_messages_naming_their_call(self) -> None:
        invoke = [m for m in MESSAGES["to_worker"] if m["type"] == "invoke" and m["kind"] == "node"][0]
        cases = [
            ({**invoke, "input": {"text": 1, "data": None}}, "input"),
            ({**invoke, "timeout_ms": 0}, "timeout_ms"),
            ({**invoke, "conditions": {"when": "a->b", "switch": None}}, "conditions"),
            ({**invoke, "kind": "other"}, "kind"),
            ({k: v for k, v in invoke.items() if k != "node"}, "node"),
        ]
        for message, field in cases:
            with self.subTest(field=field):
                with self.assertRaises(proto.ProtocolError) as caught:
                    proto.decode_request(json.dumps(message).encode())
                self.assertIn(field, str(caught.exception))
                self.assertEqual(caught.exception.call_id, invoke["id"])

    def test_refuses_non_json_and_unknown_types(self) -> None:
        with self.assertRaises(proto.ProtocolError) as caught:
            proto.decode_request(b'{"type":"invoke","id":12,"kind":')
        self.assertEqual(caught.exception.call_id, 12)
        with self.assertRaises(proto.ProtocolError) as caught:
            proto.decode_request(b'{"type":"bogus","id":3}')
        self.assertEqual(caught.exception.call_id, 3)
        with self.assertRaises(proto.ProtocolError):
            proto.decode_request(b"[1, 2]")
        with self.assertRaises(proto.ProtocolError):
            proto.decode_request(b"\xff\xfe")


def _fan_out_definition(width: int) -> Dict[str, Any]:
    """The Definition of ``fan_out(width)``, as ``to_manifest()`` gives it."""
    manifest: Dict[str, Any] = fan_out(width).definition.to_manifest()
    return manifest


class LoadResultSitesTest(unittest.TestCase):
    """``load_result`` sends each distinct site once and refers to it by index (protocol version 3)."""

    def test_each_site_is_sent_once_and_the_definition_refers_to_it_by_index(self) -> None:
        definition = _fan_out_definition(50)
        before = json.dumps(definition, sort_keys=True)
        message = json.loads(proto.encode(proto.loaded(1, definition, OUTPUT), tree=True))
        sites, wire = message["sites"], message["definition"]
        distinct = {json.dumps(item["site"], sort_keys=True) for item in definition["nodes"] + definition["edges"]}
        distinct.add(json.dumps(definition["build_site"], sort_keys=True))
        # Six sites for 154 nodes and edges: src, the branches, the edges' loop, sink, join() (its node and all
        # its edges), and build().
        self.assertEqual(len(definition["nodes"]) + len(definition["edges"]), 53 + 101)
        self.assertEqual(len(sites), len(distinct))
        self.assertEqual(len(sites), 6)
        self.assertEqual(len({json.dumps(site, sort_keys=True) for site in sites}), len(sites))
        # Putting the sites back, as the bridge does, gives the Definition itself.
        for item in wire["nodes"] + wire["edges"]:
            self.assertIsInstance(item["site"], int)
            item["site"] = sites[item["site"]]
        wire["build_site"] = sites[wire["build_site"]]
        self.assertEqual(wire, definition)
        # The loaded workflow's own Definition is left as it was.
        self.assertEqual(json.dumps(definition, sort_keys=True), before)

    def test_the_message_is_built_with_the_collector_paused_and_the_collector_is_left_as_it_was(self) -> None:
        import gc

        definition = _fan_out_definition(2000)
        collections = [0]

        def seen(phase: str, info: Dict[str, Any]) -> None:
            if phase == "start":
                collections[0] += 1

        was = gc.get_threshold()
        try:
            for enabled in (True, False):
                (gc.enable if enabled else gc.disable)()
                gc.set_threshold(1)  # without the pause, building the message's copies would collect
                gc.callbacks.append(seen)
                try:
                    data = proto.loaded_bytes(1, definition, OUTPUT)
                finally:
                    gc.callbacks.remove(seen)
                    gc.set_threshold(*was)
                self.assertEqual(gc.isenabled(), enabled)
                self.assertEqual(json.loads(data), proto.loaded(1, definition, OUTPUT))
        finally:
            gc.enable()
        self.assertEqual(collections[0], 0)

    def test_a_missing_site_stays_null(self) -> None:
        definition = _fan_out_definition(1)
        definition["nodes"][0]["site"] = None
        definition["build_site"] = None
        message = proto.loaded(1, definition, OUTPUT)
        self.assertIsNone(message["definition"]["nodes"][0]["site"])
        self.assertIsNone(message["definition"]["build_site"])
        self.assertIsInstance(message["definition"]["nodes"][1]["site"], int)
        assert_from_worker(self, message)


class MessageBuildersTest(unittest.TestCase):
    """Every message the worker builds matches the engine's schema."""

    def test_builders(self) -> None:
        from chrys.workflows._loader import diagnostic
        from chrys.workflows._serve import python_info

        value = {"text": "é", "data": {"k": [1, None]}}
        error = proto.call_error(
            "exception", "ValueError: x", phase="conditions", edge="a->b", traceback="tb", file="/f.py", line=3
        )
        messages = [
            proto.hello("0.1.0", python_info(), os.getpid(), "/cache"),
            proto.hello("0.1.0", python_info(), os.getpid(), None),
            proto.load_output(1, "x"),
            proto.loaded(1, _fan_out_definition(3), OUTPUT),
            proto.load_failed(1, [diagnostic("syntax_error", "SyntaxError: x", file="/f.py", line=1)], False, OUTPUT),
            proto.node_result(2, value, ["a->b"], OUTPUT, 0),
            proto.until_result(3, False, OUTPUT, 2),
            proto.combine_result(4, value, OUTPUT, 0),
            proto.failed_result(5, error, OUTPUT, 0),
            proto.failed_result(5, proto.call_error("timeout", "late", phase="node"), OUTPUT, 1),
            proto.emit(6, "progress"),
            proto.ask(6, 1, [{"question": "Q?", "header": "", "options": [], "multi_select": False}]),
            proto.protocol_error(None, "bad"),
            proto.protocol_error(7, "bad"),
        ]
        for message in messages:
            with self.subTest(type=message["type"]):
                assert_from_worker(self, message)
                assert_from_worker(self, proto.encode(message))

    def test_hot_path_results_equal_the_builders(self) -> None:
        value = {"text": "é\u2028", "data": {"k": [1, 2.5, True, None]}}
        value_json = proto.encode_value(value["text"], value["data"])
        for captured in (OUTPUT, {"text": "", "truncated": False}, {"text": "", "truncated": True}):
            for passed in ([], ["a->b", "a->c"]):
                fast = proto.node_result_bytes(9, value_json, passed, captured, 3)
                assert_from_worker(self, fast)
                self.assertEqual(json.loads(fast), proto.node_result(9, value, passed, captured, 3))
            fast = proto.combine_result_bytes(9, value_json, captured, 0)
            assert_from_worker(self, fast)
            self.assertEqual(json.loads(fast), proto.combine_result(9, value, captured, 0))

    def test_encode_never_produces_invalid_utf8(self) -> None:
        data = proto.encode(proto.emit(1, "lone \ud800 surrogate"))
        self.assertEqual(json.loads(data.decode("utf-8"))["text"], "lone ? surrogate")
        self.assertEqual(proto.sanitize("ok \udfff"), "ok ?")
        self.assertEqual(proto.call_error("exception", "bad \ud800", phase="node")["message"], "bad ?")


class LineReaderTest(unittest.TestCase):
    def test_lines_across_chunks(self) -> None:
        reader = proto.LineReader(1024)
        self.assertEqual(reader.feed(b'{"a":'), [])
        self.assertEqual(reader.feed(b'1}\n{"b":2}\n{"c"'), [(b'{"a":1}', b""), (b'{"b":2}', b"")])
        self.assertEqual(reader.feed(b":3}\n"), [(b'{"c":3}', b"")])

    def test_oversized_lines_are_skipped_with_their_prefix(self) -> None:
        reader = proto.LineReader(16)
        self.assertEqual(reader.feed(b'{"type":"invoke","id":8,'), [])
        self.assertEqual(reader.feed(b"x" * 100), [])
        lines = reader.feed(b'"end"}\n{"ok":1}\n')
        self.assertEqual(lines, [(None, b'{"type":"invoke","id":8,'), (b'{"ok":1}', b"")])
        self.assertEqual(proto.call_id_of(lines[0][1]), 8)
        self.assertEqual(reader.feed(b"0123456789abcdefXYZ\nok\n"), [(None, b"0123456789abcdefXYZ"), (b"ok", b"")])

    def test_the_limit_counts_the_newline(self) -> None:
        reader = proto.LineReader(8)
        self.assertEqual(reader.feed(b"1234567\n12345678\n"), [(b"1234567", b""), (None, b"12345678")])


if __name__ == "__main__":
    unittest.main()


class StringFrameHeaderTest(unittest.TestCase):
    """``LineReader`` checks string frame headers by hand: it must take exactly what the schema accepts."""

    HEADERS = [
        {"type": "string", "ref": 1, "bytes": 0, "keep": True},
        {"type": "string", "ref": 2, "bytes": 5, "keep": False},
        {"type": "string", "ref": 0, "bytes": 1, "keep": True},
        {"type": "string", "ref": -2, "bytes": 1, "keep": True},
        {"type": "string", "ref": 1.5, "bytes": 1, "keep": True},
        {"type": "string", "ref": "1", "bytes": 1, "keep": True},
        {"type": "string", "ref": True, "bytes": 1, "keep": True},
        {"type": "string", "ref": 1, "bytes": -1, "keep": True},
        {"type": "string", "ref": 1, "bytes": proto.MAX_MESSAGE_BYTES + 1, "keep": True},
        {"type": "string", "ref": 1, "bytes": 1, "keep": "yes"},
        {"type": "string", "ref": 1, "bytes": 1},
    ]

    def test_the_reader_and_the_schema_agree(self) -> None:
        for header in self.HEADERS:
            with self.subTest(header=header):
                table = proto.StringTable()
                reader = proto.LineReader(strings=table)
                size = header["bytes"] if type(header.get("bytes")) is int and 0 < header["bytes"] < 64 else 0
                lines = reader.feed(json.dumps(header, separators=(",", ":")).encode() + b"\n" + b"a" * size + b"\n")
                accepted = schema_errors(header, SCHEMA["string_frame_header"]) == []
                taken = not any(line is not None and line.startswith(b'{"type":"string"') for line, _ in lines)
                self.assertEqual(taken, accepted)
