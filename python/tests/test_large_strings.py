"""Large strings by reference (protocol version 2), the worker's half: string frames read by ``LineReader``,
``StringTable`` (receive, resolve, prepare, forget), ``check_value_strings`` and ``encode_large_value``, and the
runtime answering with string frames in-process (the pipe replaced by a reader playing the engine's part).

The engine's half is tested in ``packages/python-bridge`` (``src/strings.test.ts``, ``src/framing.test.ts``)
and with the real worker in ``test/large-strings.int.test.ts``."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import threading
import time
import unittest
from typing import Any, Dict, List, Optional, Tuple
from unittest import mock

from chrys.workflows import WorkflowBuilder, WorkflowValue
from chrys.workflows import _protocol as proto
from chrys.workflows._errors import ValueNotSerializable, ValueTooLarge
from chrys.workflows._values import LARGE_STRING_CHARS, MAX_STRING_CHARS, check_value, check_value_strings

from ._support import start_runtime


ASCII = "a" * LARGE_STRING_CHARS
"""The shortest large string: 65,536 characters, as many bytes."""
MIXED = ("é€😀" + "x" * 7) * 10_000
"""100,000 characters of 1 to 4 bytes of UTF-8 each: 160,000 bytes."""


def fresh(text: str) -> str:
    """A new ``str`` object equal to ``text`` (never the same object)."""
    copied = "".join([text[:1], text[1:]])
    assert copied == text and copied is not text
    return copied


def string_frame(ref: int, body: bytes, keep: bool = True, size: Optional[int] = None) -> bytes:
    header = b'{"type":"string","ref":%d,"bytes":%d,"keep":%s}\n' % (
        ref,
        len(body) if size is None else size,
        b"true" if keep else b"false",
    )
    return header + body + b"\n"


def line(message: Dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def invoke(
    call_id: int, text: str = "", data: Any = None, strings: Optional[List[Dict[str, Any]]] = None
) -> Dict[str, Any]:
    message: Dict[str, Any] = {
        "type": "invoke",
        "id": call_id,
        "kind": "node",
        "node": "n",
        "input": {"text": text, "data": data},
        "timeout_ms": None,
        "conditions": None,
        "conditions_timeout_ms": None,
    }
    if strings is not None:
        message["strings"] = strings
    return message


class Reader:
    """A ``LineReader`` with its own ``StringTable``, as the worker reads the engine's bytes."""

    def __init__(self, limit: int = proto.MAX_MESSAGE_BYTES) -> None:
        self.table = proto.StringTable()
        self.reader = proto.LineReader(limit, self.table)

    def lines(self, chunks: List[bytes]) -> List[Tuple[Optional[bytes], bytes]]:
        out: List[Tuple[Optional[bytes], bytes]] = []
        for chunk in chunks:
            out.extend(self.reader.feed(chunk))
        return out

    def messages(self, chunks: List[bytes]) -> List[Dict[str, Any]]:
        """Each line decoded as a request (raising ``ProtocolError`` as the worker would)."""
        found = []
        for got, prefix in self.lines(chunks):
            assert got is not None, f"an oversized line {prefix!r}"
            found.append(proto.decode_request(got, self.table))  # type: ignore[arg-type]
        return found


def byte_by_byte(data: bytes) -> List[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


# --- LineReader ---------------------------------------------------------------------------------------------


class LineReaderStringFramesTest(unittest.TestCase):
    def test_a_frame_and_the_message_using_it_in_one_chunk(self) -> None:
        reader = Reader()
        body = MIXED.encode("utf-8")
        data = string_frame(1, body) + line(invoke(7, "", None, [{"ref": 1, "at": ["input", "text"]}]))
        lines = reader.lines([data])
        self.assertEqual(len(lines), 1, "the string frame is taken in, only the message comes out")
        message = proto.decode_request(lines[0][0], reader.table)  # type: ignore[arg-type]
        self.assertEqual(message["input"], {"text": MIXED, "data": None})
        self.assertNotIn("strings", message)
        self.assertEqual(reader.table.kept_bytes, len(body))

    def test_every_split_into_two_chunks(self) -> None:
        # A small body is enough for the reader (it does not care how long the string is): header, body
        # (with multi-byte characters and newlines inside) and the trailing newline are all cut everywhere.
        text = "é\n€😀\n{\"type\":\"string\",x"
        data = (
            string_frame(3, text.encode("utf-8"), keep=False)
            + line(invoke(1, "", ["", 5], [{"ref": 3, "at": ["input", "data", 0]}]))
            + line({"type": "shutdown"})
        )
        for cut in range(len(data) + 1):
            reader = Reader()
            messages = reader.messages([data[:cut], data[cut:]])
            self.assertEqual([m["type"] for m in messages], ["invoke", "shutdown"], f"cut at {cut}")
            self.assertEqual(messages[0]["input"]["data"], [text, 5], f"cut at {cut}")
            self.assertEqual(reader.reader.buffered, 0)

    def test_byte_by_byte(self) -> None:
        reader = Reader()
        data = (
            string_frame(1, ASCII.encode("ascii"))
            + string_frame(3, MIXED.encode("utf-8"), keep=False)
            + line(
                invoke(
                    2,
                    "",
                    {"a": "", "b": [""]},
                    [{"ref": 1, "at": ["input", "text"]}, {"ref": 3, "at": ["input", "data", "b", 0]},
                     {"ref": 1, "at": ["input", "data", "a"]}],
                )
            )
        )
        (message,) = reader.messages(byte_by_byte(data))
        self.assertEqual(message["input"], {"text": ASCII, "data": {"a": ASCII, "b": [MIXED]}})

    def test_buffered_counts_the_frame_being_read(self) -> None:
        reader = Reader()
        data = string_frame(1, b"x" * 1000)
        self.assertEqual(reader.lines([data[:-10]]), [])
        self.assertEqual(reader.reader.buffered, 1001, "the body and its newline")
        self.assertEqual(reader.lines([data[-10:]]), [])
        self.assertEqual(reader.reader.buffered, 0)

    def test_keep_true_serves_every_later_message(self) -> None:
        reader = Reader()
        named = [{"ref": 5, "at": ["input", "text"]}]
        messages = reader.messages([string_frame(5, b"kept"), line(invoke(1, "", None, named)),
                                    line(invoke(2, "", None, named))])
        self.assertEqual([m["input"]["text"] for m in messages], ["kept", "kept"])
        self.assertIs(messages[0]["input"]["text"], messages[1]["input"]["text"], "one string object, shared")
        self.assertEqual(reader.table.kept_bytes, 4)

    def test_keep_false_serves_the_next_message_only(self) -> None:
        reader = Reader()
        named = [{"ref": 5, "at": ["input", "text"]}]
        (first,) = reader.messages([string_frame(5, b"once", keep=False), line(invoke(1, "", None, named))])
        self.assertEqual(first["input"]["text"], "once")
        self.assertEqual(reader.table.kept_bytes, 0)
        with self.assertRaisesRegex(proto.ProtocolError, "unknown string") as caught:
            reader.messages([line(invoke(2, "", None, named))])
        self.assertEqual(caught.exception.call_id, 2)

    def test_keep_false_waits_for_the_message_that_names_it(self) -> None:
        # Messages in between that do not name it leave it: frames may arrive ahead of other messages.
        reader = Reader()
        named = [{"ref": 5, "at": ["input", "text"]}]
        messages = reader.messages([string_frame(5, b"once", keep=False), line({"type": "cancel", "id": 9}),
                                    line(invoke(1, "", None, named))])
        self.assertEqual(messages[1]["input"]["text"], "once")
        with self.assertRaisesRegex(proto.ProtocolError, "unknown string"):
            reader.messages([line(invoke(2, "", None, named))])

    def test_an_empty_body(self) -> None:
        reader = Reader()
        named = [{"ref": 1, "at": ["input", "data", 0]}]
        (message,) = reader.messages([string_frame(1, b""), line(invoke(1, "", [""], named))])
        self.assertEqual(message["input"]["data"], [""])

    def _refused(self, chunks: List[bytes], says: str) -> None:
        """The broken frame comes out as one error line that decode_request refuses; the next message reads."""
        reader = Reader()
        lines = reader.lines(chunks + [line({"type": "cancel", "id": 4})])
        self.assertEqual(len(lines), 2, lines)
        error_line, prefix = lines[0]
        self.assertIsNotNone(error_line)
        self.assertEqual(prefix, b"")
        self.assertEqual(json.loads(error_line)["type"], "string")  # type: ignore[arg-type]
        with self.assertRaisesRegex(proto.ProtocolError, says) as caught:
            proto.decode_request(error_line, reader.table)  # type: ignore[arg-type]
        self.assertIsNone(caught.exception.call_id)
        after = proto.decode_request(lines[1][0], reader.table)  # type: ignore[arg-type]
        self.assertEqual(after, {"type": "cancel", "id": 4})
        self.assertEqual(reader.table.kept_bytes, 0, "nothing of a broken frame is kept")
        self.assertEqual(reader.reader.buffered, 0)

    def test_a_body_that_is_not_utf8(self) -> None:
        data = string_frame(3, b"ok\xff\xfe")
        self._refused([data], "string frame 3 is not UTF-8")
        self._refused(byte_by_byte(data), "string frame 3 is not UTF-8")
        # A multi-byte character cut short at the end of the body.
        self._refused([string_frame(3, "é".encode("utf-8")[:1])], "string frame 3 is not UTF-8")

    def test_a_body_not_followed_by_a_newline(self) -> None:
        # The reader takes `bytes` bytes and one more, which must be the newline.
        data = b'{"type":"string","ref":7,"bytes":2,"keep":true}\nabX'
        self._refused([data], "string frame 7 is not followed by a newline after its 2 bytes")
        self._refused(byte_by_byte(data), "string frame 7 is not followed by a newline")
        # A `bytes` smaller than the body: the body's next byte is not a newline, and the rest of the body
        # is read as a line (then refused as not JSON).
        reader = Reader()
        lines = reader.lines([string_frame(7, b"abcdef", size=3), line({"type": "cancel", "id": 4})])
        self.assertEqual([got for got, _ in lines[1:]], [b"ef", b'{"type":"cancel","id":4}'])
        with self.assertRaisesRegex(proto.ProtocolError, "string frame 7 is not followed by a newline after its 3"):
            proto.decode_request(lines[0][0], reader.table)  # type: ignore[arg-type]
        with self.assertRaisesRegex(proto.ProtocolError, "not a JSON message"):
            proto.decode_request(lines[1][0], reader.table)  # type: ignore[arg-type]

    def test_bad_headers(self) -> None:
        for header, says in [
            (b'{"type":"string","ref":1,"bytes":2,"keep":true', "not JSON"),
            (b'{"type":"string",}', "not JSON"),
            (b'{"type":"string","ref":0,"bytes":2,"keep":true}', "needs a positive ref"),
            (b'{"type":"string","ref":-1,"bytes":2,"keep":true}', "needs a positive ref"),
            (b'{"type":"string","ref":1.5,"bytes":2,"keep":true}', "needs a positive ref"),
            (b'{"type":"string","ref":"1","bytes":2,"keep":true}', "needs a positive ref"),
            (b'{"type":"string","ref":true,"bytes":2,"keep":true}', "needs a positive ref"),
            (b'{"type":"string","bytes":2,"keep":true}', "needs a positive ref"),
            (b'{"type":"string","ref":1,"bytes":-1,"keep":true}', "needs a positive ref"),
            (b'{"type":"string","ref":1,"bytes":"2","keep":true}', "needs a positive ref"),
            (b'{"type":"string","ref":1,"keep":true}', "needs a positive ref"),
            (b'{"type":"string","ref":1,"bytes":2,"keep":1}', "needs a positive ref"),
            (b'{"type":"string","ref":1,"bytes":2}', "needs a positive ref"),
            (b'{"type":"string","ref":1,"bytes":1025,"keep":true}', r"bytes \(at most 1,024\)"),
        ]:
            with self.subTest(header=header):
                reader = Reader(limit=1024)
                lines = reader.lines([header + b"\n", line({"type": "cancel", "id": 4})])
                self.assertEqual(len(lines), 2, lines)
                with self.assertRaisesRegex(proto.ProtocolError, says):
                    proto.decode_request(lines[0][0], reader.table)  # type: ignore[arg-type]
                after = proto.decode_request(lines[1][0], reader.table)  # type: ignore[arg-type]
                self.assertEqual(after["type"], "cancel")

    def test_a_body_of_exactly_the_limit_is_taken(self) -> None:
        reader = Reader(limit=1024)
        (message,) = reader.messages(
            [string_frame(1, b"z" * 1024), line(invoke(1, "", None, [{"ref": 1, "at": ["input", "text"]}]))]
        )
        self.assertEqual(message["input"]["text"], "z" * 1024)

    def test_an_error_line_out_of_place_is_refused(self) -> None:
        with self.assertRaisesRegex(proto.ProtocolError, "string frame out of place"):
            proto.decode_request(b'{"type":"string"}', proto.StringTable())

    def test_a_frame_after_an_oversized_line(self) -> None:
        reader = Reader(limit=64)
        oversized = b'{"type":"cancel","id":1,"pad":"' + b"p" * 100 + b'"}\n'
        for chunks in ([oversized + string_frame(1, b"s" * 64) + line({"type": "cancel", "id": 2})],
                       byte_by_byte(oversized + string_frame(3, b"s" * 64) + line({"type": "cancel", "id": 2}))):
            lines = reader.lines(chunks)
            self.assertEqual(len(lines), 2)
            self.assertIsNone(lines[0][0])
            self.assertTrue(lines[0][1].startswith(b'{"type":"cancel","id":1,'), lines[0][1])
            self.assertEqual(proto.decode_request(lines[1][0], reader.table)["id"], 2)  # type: ignore[arg-type]
        self.assertEqual(reader.table.kept_bytes, 128, "a string frame of the line limit's size is taken")

    def test_a_transient_string_survives_earlier_messages_read_in_the_same_chunk(self) -> None:
        # LineReader.feed takes in every string frame of a chunk before the worker decodes the chunk's lines:
        # a message ahead of a keep: false frame (a cancel, another invoke) must not drop it, nor may one
        # keep: false message drop the next one's. (The engine sends keep: false frames once 128 MiB are
        # kept, and writes messages back to back, so one read often holds several.)
        reader = Reader()
        data = (
            line({"type": "cancel", "id": 1})
            + string_frame(3, b"for the invoke", keep=False)
            + line(invoke(2, "", None, [{"ref": 3, "at": ["input", "text"]}]))
            + string_frame(5, b"for the next invoke", keep=False)
            + line(invoke(4, "", None, [{"ref": 5, "at": ["input", "text"]}]))
        )
        messages = reader.messages([data])  # as the worker does: feed a chunk, then decode its lines in order
        self.assertEqual(
            [m.get("input", {}).get("text") for m in messages], [None, "for the invoke", "for the next invoke"]
        )


# --- StringTable.resolve ------------------------------------------------------------------------------------


class ResolveTest(unittest.TestCase):
    def setUp(self) -> None:
        self.table = proto.StringTable()
        self.table.receive(1, ASCII, len(ASCII), True)
        self.table.receive(3, MIXED, len(MIXED.encode("utf-8")), True)

    def test_nested_places_in_dicts_and_lists(self) -> None:
        message = {
            "type": "invoke",
            "id": 4,
            "kind": "combine",
            "join": "j",
            "timeout_ms": None,
            "sources": [
                {"node_id": "a", "activation_id": "a#1", "value": {"text": "small", "data": None}},
                {
                    "node_id": "b",
                    "activation_id": "b#1",
                    "value": {"text": "", "data": {"k": [1, "", {"x": ""}], "": ""}},
                },
            ],
            "strings": [
                {"ref": 1, "at": ["sources", 1, "value", "text"]},
                {"ref": 3, "at": ["sources", 1, "value", "data", "k", 1]},
                {"ref": 1, "at": ["sources", 1, "value", "data", "k", 2, "x"]},
                {"ref": 3, "at": ["sources", 1, "value", "data", ""]},
            ],
        }
        self.table.resolve(message)
        self.assertNotIn("strings", message)
        value = message["sources"][1]["value"]  # type: ignore[index]
        self.assertEqual(value, {"text": ASCII, "data": {"k": [1, MIXED, {"x": ASCII}], "": MIXED}})
        self.assertIs(value["text"], ASCII, "the kept string itself, not a copy")
        self.assertEqual(message["sources"][0]["value"], {"text": "small", "data": None})  # type: ignore[index]

    def test_data_itself_and_the_until_input(self) -> None:
        message = {"type": "invoke", "id": 5, "kind": "until", "loop": "l", "timeout_ms": None,
                   "input": {"text": "t", "data": ""}, "strings": [{"ref": 3, "at": ["input", "data"]}]}
        self.assertEqual(proto.decode_request(line(message)[:-1], self.table)["input"], {"text": "t", "data": MIXED})

    def test_a_message_without_strings_is_left_alone(self) -> None:
        message = invoke(1, "")
        before = copy.deepcopy(message)
        self.table.resolve(message)
        self.assertEqual(message, before)

    def test_unknown_refs(self) -> None:
        for entry in [{"ref": 99, "at": ["input", "text"]}, {"ref": "1", "at": ["input", "text"]},
                      {"ref": True, "at": ["input", "text"]}, {"ref": 1.0, "at": ["input", "text"]},
                      {"at": ["input", "text"]}, "1", [1, ["input", "text"]], None]:
            with self.subTest(entry=entry):
                with self.assertRaisesRegex(proto.ProtocolError, "unknown string") as caught:
                    proto.decode_request(line(invoke(8, "", None, [entry]))[:-1], self.table)  # type: ignore[list-item]
                self.assertEqual(caught.exception.call_id, 8)

    def test_strings_must_be_a_list(self) -> None:
        for refs in [{"ref": 1, "at": ["input", "text"]}, "1", 1]:
            with self.subTest(refs=refs):
                message = invoke(8, "")
                message["strings"] = refs
                with self.assertRaisesRegex(proto.ProtocolError, "'strings' must be a list") as caught:
                    self.table.resolve(message)
                self.assertEqual(caught.exception.call_id, 8)

    def test_places_that_do_not_hold_an_empty_string_or_do_not_exist(self) -> None:
        for at in [
            ["input", "text", "x"],  # through a string
            ["input", "data", 0],  # data is a dict here
            ["input", "data", "missing"],
            ["input", "data", "list", 2],  # out of range
            ["input", "data", "list", -1],
            ["input", "data", "list", "0"],  # a key into a list
            ["input", "data", "list", True],
            ["input", "data", "full"],  # holds a non-empty string
            ["input", "data", "none"],  # holds null
            ["input", "data", "nested"],  # holds a container
            ["input", "data", "zero"],  # 0 is not ""
            ["input", "missing", "x"],
            ["type"],
            ["id"],
            [],
            "input",
            None,
        ]:
            with self.subTest(at=at):
                data = {"list": ["", ""], "full": "x", "none": None, "nested": {"": ""}, "zero": 0}
                message = invoke(6, "", data, [{"ref": 1, "at": at}])
                with self.assertRaisesRegex(proto.ProtocolError, 'has no place .* holding ""') as caught:
                    proto.decode_request(line(message)[:-1], self.table)
                self.assertEqual(caught.exception.call_id, 6)

    def test_one_place_named_twice(self) -> None:
        message = invoke(6, "", None, [{"ref": 1, "at": ["input", "text"]}, {"ref": 3, "at": ["input", "text"]}])
        with self.assertRaisesRegex(proto.ProtocolError, "the string 3 has no place"):
            self.table.resolve(message)

    def test_a_transient_string_serves_the_next_message_only_even_in_several_places(self) -> None:
        self.table.receive(5, "transient", 9, False)
        first = invoke(1, "", ["", ""], [{"ref": 5, "at": ["input", "data", 0]}, {"ref": 5, "at": ["input", "data", 1]},
                                         {"ref": 1, "at": ["input", "text"]}])
        self.table.resolve(first)
        self.assertEqual(first["input"], {"text": ASCII, "data": ["transient", "transient"]})
        with self.assertRaisesRegex(proto.ProtocolError, "unknown string"):
            self.table.resolve(invoke(2, "", None, [{"ref": 5, "at": ["input", "text"]}]))
        # The kept ones are still there.
        second = invoke(3, "", None, [{"ref": 1, "at": ["input", "text"]}])
        self.table.resolve(second)
        self.assertEqual(second["input"]["text"], ASCII)

    def test_a_refused_message_drops_the_transient_strings_it_used(self) -> None:
        self.table.receive(5, "transient", 9, False)
        with self.assertRaises(proto.ProtocolError):
            named = [{"ref": 5, "at": ["input", "text"]}, {"ref": 99, "at": ["input", "data"]}]
            self.table.resolve(invoke(1, "", None, named))
        with self.assertRaisesRegex(proto.ProtocolError, "unknown string"):
            self.table.resolve(invoke(2, "", None, [{"ref": 5, "at": ["input", "text"]}]))

    def test_receiving_a_kept_ref_again_replaces_it_and_counts_it_once(self) -> None:
        before = self.table.kept_bytes
        self.table.receive(1, "b" * len(ASCII), len(ASCII), True)
        self.assertEqual(self.table.kept_bytes, before)
        message = invoke(1, "", None, [{"ref": 1, "at": ["input", "text"]}])
        self.table.resolve(message)
        self.assertEqual(message["input"]["text"], "b" * len(ASCII))


# --- StringTable.prepare / forget ---------------------------------------------------------------------------


def header(ref: int, size: int, keep: bool) -> bytes:
    return b'{"type":"string","ref":%d,"bytes":%d,"keep":%s}\n' % (ref, size, b"true" if keep else b"false")


class PrepareTest(unittest.TestCase):
    def setUp(self) -> None:
        self.table = proto.StringTable()

    def test_a_new_string_makes_a_frame_exactly_as_specified(self) -> None:
        size = len(MIXED.encode("utf-8"))
        self.assertEqual(size, 100_000 + 10_000 * (1 + 2 + 3), "é, € and 😀 are 2, 3 and 4 bytes")
        frames, refs, total, added = self.table.prepare([(["data", "k", 0], MIXED)], "value")
        self.assertEqual(b"".join(frames), header(2, size, True) + MIXED.encode("utf-8") + b"\n")
        self.assertEqual(refs, ',"strings":[{"ref":2,"at":["value","data","k",0]}]')
        self.assertEqual(total, size)
        self.assertEqual(added, [2])
        self.assertEqual(self.table.kept_bytes, size)

    def test_refs_are_even_and_new_for_each_string(self) -> None:
        strings = [(["text"], ASCII), (["data", 0], MIXED), (["data", 1], fresh(ASCII))]
        frames, refs, total, added = self.table.prepare(strings, "value")
        self.assertEqual(added, [2, 4, 6])
        self.assertEqual(len(frames), 9)
        self.assertEqual(
            json.loads("{%s}" % refs[1:])["strings"],
            [{"ref": 2, "at": ["value", "text"]}, {"ref": 4, "at": ["value", "data", 0]},
             {"ref": 6, "at": ["value", "data", 1]}],
        )
        _, _, _, later = self.table.prepare([(["text"], fresh(MIXED))], "value")
        self.assertEqual(later, [8])

    def test_the_same_object_again_goes_by_ref_alone(self) -> None:
        self.table.prepare([(["text"], MIXED)], "value")
        frames, refs, total, added = self.table.prepare([(["data", "a"], MIXED), (["text"], MIXED)], "value")
        self.assertEqual(frames, [], "no frame for a string the engine keeps")
        self.assertEqual(refs, ',"strings":[{"ref":2,"at":["value","data","a"]},{"ref":2,"at":["value","text"]}]')
        self.assertEqual(total, 2 * len(MIXED.encode("utf-8")), "the size limit counts it at each place")
        self.assertEqual(added, [])
        self.assertEqual(self.table.kept_bytes, len(MIXED.encode("utf-8")))

    def test_the_same_object_twice_in_one_message_makes_one_frame(self) -> None:
        frames, refs, total, added = self.table.prepare([(["data", 0], ASCII), (["data", 1], ASCII)], "value")
        self.assertEqual(b"".join(frames), header(2, len(ASCII), True) + ASCII.encode() + b"\n")
        self.assertEqual(refs, ',"strings":[{"ref":2,"at":["value","data",0]},{"ref":2,"at":["value","data",1]}]')
        self.assertEqual(total, 2 * len(ASCII))
        self.assertEqual(added, [2])

    def test_equal_content_in_another_object_makes_a_new_frame(self) -> None:
        self.table.prepare([(["text"], ASCII)], "value")
        other = fresh(ASCII)
        frames, refs, _, added = self.table.prepare([(["text"], other)], "value")
        self.assertEqual(b"".join(frames), header(4, len(ASCII), True) + ASCII.encode() + b"\n")
        self.assertEqual(added, [4])
        self.assertEqual(self.table.kept_bytes, 2 * len(ASCII))

    def test_a_string_received_from_the_engine_goes_back_by_its_ref(self) -> None:
        reader = proto.LineReader(strings=self.table)
        reader.feed(string_frame(1, MIXED.encode("utf-8")))
        named = [{"ref": 1, "at": ["input", "text"]}]
        message = proto.decode_request(line(invoke(1, "", None, named))[:-1], self.table)
        received = message["input"]["text"]
        frames, refs, total, added = self.table.prepare([(["data", 0], received)], "value")
        self.assertEqual((frames, added), ([], []))
        self.assertEqual(refs, ',"strings":[{"ref":1,"at":["value","data",0]}]')
        self.assertEqual(total, len(MIXED.encode("utf-8")))
        # An equal string the node built itself is not the engine's object: it travels again.
        frames, _, _, added = self.table.prepare([(["text"], fresh(received))], "value")
        self.assertEqual(added, [2])
        self.assertEqual(len(frames), 3)

    def test_past_the_cap_frames_say_keep_false(self) -> None:
        with mock.patch.object(proto, "KEPT_STRING_BYTES", len(ASCII) + len(ASCII) // 2):
            self.table.receive(1, "e" * 1000, 1000, True)  # the engine's strings count toward the cap too
            frames, _, _, added = self.table.prepare([(["text"], ASCII)], "value")
            self.assertEqual(frames[0], header(2, len(ASCII), True))
            self.assertEqual(added, [2])
            second = fresh(ASCII)
            frames, refs, total, added = self.table.prepare([(["data", 0], second), (["data", 1], second)], "value")
            self.assertEqual(b"".join(frames), header(4, len(ASCII), False) + ASCII.encode() + b"\n",
                             "one frame for both places, not kept")
            self.assertEqual(refs, ',"strings":[{"ref":4,"at":["value","data",0]},{"ref":4,"at":["value","data",1]}]')
            self.assertEqual(total, 2 * len(ASCII))
            self.assertEqual(added, [])
            self.assertEqual(self.table.kept_bytes, 1000 + len(ASCII))
            # Not kept, so the next message sends it again (with a new ref); the kept one still goes by ref.
            frames, refs, _, _ = self.table.prepare([(["text"], second), (["data"], ASCII)], "value")
            self.assertEqual(frames[0], header(6, len(ASCII), False))
            self.assertEqual(len(frames), 3)
            self.assertEqual(refs, ',"strings":[{"ref":6,"at":["value","text"]},{"ref":2,"at":["value","data"]}]')

    def test_exactly_at_the_cap_is_kept(self) -> None:
        with mock.patch.object(proto, "KEPT_STRING_BYTES", len(ASCII)):
            frames, _, _, added = self.table.prepare([(["text"], ASCII)], "value")
            self.assertEqual((frames[0], added), (header(2, len(ASCII), True), [2]))

    def test_forget_undoes_prepare(self) -> None:
        self.table.prepare([(["text"], MIXED)], "value")
        kept = self.table.kept_bytes
        _, _, _, added = self.table.prepare([(["text"], ASCII), (["data", 0], MIXED)], "value")
        self.assertEqual(added, [4])
        self.table.forget(added)
        self.assertEqual(self.table.kept_bytes, kept)
        frames, refs, _, added = self.table.prepare([(["text"], ASCII), (["data", 0], MIXED)], "value")
        self.assertEqual(frames[0], header(6, len(ASCII), True), "the forgotten string travels again")
        self.assertEqual(len(frames), 3, "the string kept before stays kept")
        self.assertEqual(refs, ',"strings":[{"ref":6,"at":["value","text"]},{"ref":2,"at":["value","data",0]}]')
        self.assertEqual(added, [6])

    def test_prepared_bytes_read_back_on_the_other_side(self) -> None:
        value = WorkflowValue(MIXED, {"list": [ASCII, "small", ASCII], "nested": {"deep": [MIXED]}})
        checked, strings = check_value_strings(value)
        large = proto.encode_large_value(checked.text, checked.data, strings)
        engine = Reader()
        for round_ in range(2):  # the second time, every string goes by ref
            frames, refs, _, _ = self.table.prepare(large.strings, "value")
            self.assertEqual(len(frames), 0 if round_ else 6, "one frame (3 pieces) per distinct string, once")
            answer = proto.node_result_bytes(9, large.json, [], {"text": "", "truncated": False}, 0, refs)
            data = b"".join(frames) + answer
            ((got, _),) = engine.lines([data])
            message = json.loads(got)  # type: ignore[arg-type]
            engine.table.resolve(message)
            self.assertEqual(
                message["value"],
                {"text": MIXED, "data": {"list": [ASCII, "small", ASCII], "nested": {"deep": [MIXED]}}},
            )
        self.assertEqual(engine.table.kept_bytes, self.table.kept_bytes)


# --- check_value_strings ------------------------------------------------------------------------------------


class CheckValueStringsTest(unittest.TestCase):
    def test_paths(self) -> None:
        small = "s" * (LARGE_STRING_CHARS - 1)
        cases: List[Tuple[Any, List[Tuple[List[Any], str]]]] = [
            (WorkflowValue(ASCII), [(["text"], ASCII)]),
            (ASCII, [(["text"], ASCII)]),
            (WorkflowValue(small, [small, {"k": small}]), []),
            (WorkflowValue("t", MIXED), [(["data"], MIXED)]),
            (
                WorkflowValue("t", {"a": [1, {"b": MIXED}], "c": ASCII}),
                [(["data", "a", 1, "b"], MIXED), (["data", "c"], ASCII)],
            ),
            (WorkflowValue(MIXED, [ASCII, ASCII]), [(["text"], MIXED), (["data", 0], ASCII), (["data", 1], ASCII)]),
            (WorkflowValue("t", {"": {"0": [[ASCII]]}}), [(["data", "", "0", 0, 0], ASCII)]),
        ]
        for value, expected in cases:
            with self.subTest(value=repr(value)[:80]):
                checked, strings = check_value_strings(value)
                self.assertIsInstance(checked, WorkflowValue)
                self.assertEqual(strings, expected)
                for (_, text), (_, want) in zip(strings, expected):
                    self.assertIs(text, want, "the string object itself (its identity is its ref)")

    def test_the_value_is_the_same_as_check_value_gives(self) -> None:
        value = WorkflowValue(ASCII, {"k": [MIXED]})
        self.assertIs(check_value_strings(value)[0], value)
        self.assertEqual(check_value_strings(MIXED)[0], check_value(MIXED))

    def test_a_large_key_stays_inline(self) -> None:
        value = WorkflowValue("t", {ASCII: 1})
        self.assertEqual(check_value_strings(value)[1], [])

    def test_the_rules_still_apply_to_large_strings(self) -> None:
        too_long = "x" * (MAX_STRING_CHARS + 1)
        longest = "x" * MAX_STRING_CHARS
        lone = "y" * LARGE_STRING_CHARS + "\ud800"
        for value, error in [
            (too_long, ValueTooLarge),
            (WorkflowValue(too_long), ValueTooLarge),
            (WorkflowValue("t", {"k": [too_long]}), ValueTooLarge),
            (WorkflowValue("t", too_long), ValueTooLarge),
            (lone, ValueNotSerializable),
            (WorkflowValue(lone), ValueNotSerializable),
            (WorkflowValue("t", ["", lone]), ValueNotSerializable),
            (WorkflowValue("t", lone), ValueNotSerializable),
            (WorkflowValue("t", {lone: 1}), ValueNotSerializable),
            (WorkflowValue(ASCII, {"k": {1, 2}}), ValueNotSerializable),
            (WorkflowValue(1), ValueNotSerializable),  # type: ignore[arg-type]
            (b"bytes", ValueNotSerializable),
        ]:
            with self.subTest(value=repr(value)[:60]):
                with self.assertRaises(error) as caught:
                    check_value_strings(value)
                with self.assertRaises(error) as same:
                    check_value(value)
                self.assertEqual(str(caught.exception), str(same.exception))
        self.assertEqual(check_value_strings(WorkflowValue("t", [longest]))[1], [(["data", 0], longest)])

    def test_known_strings_skip_the_unicode_scan_but_not_the_length_limit(self) -> None:
        # `known` (the worker's kept strings: decoded from UTF-8, so valid Unicode) spares the scan of a value
        # passed along a chain; the length limit of a returned value still applies to them. An engine input (a
        # run's input text, say) may hold a string longer than a node may return.
        table = proto.StringTable()
        too_long = "é" * (MAX_STRING_CHARS + 1)
        reader = proto.LineReader(strings=table)
        reader.feed(string_frame(1, too_long.encode("utf-8")))
        message = invoke(1, "", [""], [{"ref": 1, "at": ["input", "text"]}, {"ref": 1, "at": ["input", "data", 0]}])
        table.resolve(message)
        received = message["input"]["text"]
        self.assertIn(id(received), table.known)
        for value in [received, WorkflowValue(received), WorkflowValue("t", [received]), WorkflowValue("t", received)]:
            with self.subTest(value=type(value).__name__):
                with self.assertRaises(ValueTooLarge):
                    check_value_strings(value, table.known)
        fine = "é" * LARGE_STRING_CHARS
        table.receive(3, fine, len(fine.encode("utf-8")), True)
        self.assertEqual(check_value_strings(WorkflowValue(fine, [fine]), table.known)[1],
                         [(["text"], fine), (["data", 0], fine)])

    def test_a_str_subclass_travels_as_its_content(self) -> None:
        class Shouty(str):
            def __str__(self) -> str:
                return "overridden"

            def encode(self, *args: Any, **kwargs: Any) -> bytes:  # type: ignore[override]
                return b"overridden"

        value = WorkflowValue(Shouty(ASCII), {"k": Shouty(MIXED)})
        checked, strings = check_value_strings(value)
        large = proto.encode_large_value(checked.text, checked.data, strings)
        frames, refs, _, _ = proto.StringTable().prepare(large.strings, "value")
        data = b"".join(frames) + proto.node_result_bytes(1, large.json, [], {"text": "", "truncated": False}, 0, refs)
        engine = Reader()
        ((got, _),) = engine.lines([data])
        message = json.loads(got)  # type: ignore[arg-type]
        engine.table.resolve(message)
        self.assertEqual(message["value"], {"text": ASCII, "data": {"k": MIXED}},
                         "as json.dumps writes a str subclass: its characters, not its methods' results")


# --- encode_large_value -------------------------------------------------------------------------------------


class EncodeLargeValueTest(unittest.TestCase):
    def test_blanks_exactly_the_paths_and_never_the_callers_data(self) -> None:
        shared = [ASCII, "keep"]
        data = {"a": shared, "b": shared, "c": {"d": [1, MIXED, {"e": ASCII}]}, "f": "small", "g": [[], {}]}
        before = copy.deepcopy(data)
        inner = data["c"]["d"]  # type: ignore[index]
        value = WorkflowValue(MIXED, data)
        checked, strings = check_value_strings(value)
        self.assertEqual([path for path, _ in strings],
                         [["text"], ["data", "a", 0], ["data", "b", 0], ["data", "c", "d", 1],
                          ["data", "c", "d", 2, "e"]])
        large = proto.encode_large_value(checked.text, checked.data, strings)
        self.assertIs(large.strings, strings)
        self.assertEqual(
            json.loads(large.json),
            {"text": "", "data": {"a": ["", "keep"], "b": ["", "keep"], "c": {"d": [1, "", {"e": ""}]},
                                  "f": "small", "g": [[], {}]}},
        )
        self.assertEqual(data, before)
        self.assertIs(data["a"], shared)
        self.assertIs(data["c"]["d"], inner)  # type: ignore[index]
        self.assertEqual(shared, [ASCII, "keep"])
        self.assertIs(value.text, MIXED)
        self.assertIs(value.data, data)

    def test_data_itself_a_string_and_text_alone(self) -> None:
        data_only = proto.encode_large_value("t", MIXED, [(["data"], MIXED)])
        self.assertEqual(json.loads(data_only.json), {"text": "t", "data": ""})
        text_only = proto.encode_large_value(ASCII, None, [(["text"], ASCII)])
        self.assertEqual(json.loads(text_only.json), {"text": "", "data": None})

    def test_small_strings_and_json_escapes_are_kept_as_encode_value_writes_them(self) -> None:
        data = ["\"quoted\"\n\u2028é", ASCII, {"k": "\\"}]
        large = proto.encode_large_value("t", data, [(["data", 1], ASCII)])
        self.assertEqual(large.json, proto.encode_value("t", ["\"quoted\"\n\u2028é", "", {"k": "\\"}]))


# --- the runtime answering with string frames ---------------------------------------------------------------


class EngineChannel:
    """Stands in for the pipe: reads the worker's bytes as the engine does (string frames included)."""

    def __init__(self) -> None:
        self.table = proto.StringTable()
        self.reader = proto.LineReader(strings=self.table)
        self.messages: List[Dict[str, Any]] = []
        self.lock = threading.Lock()
        self.writes: List[bytes] = []

    def send_bytes(self, data: bytes) -> None:
        with self.lock:
            self.writes.append(data)
            for got, _ in self.reader.feed(data):
                assert got is not None
                message = json.loads(got)
                self.table.resolve(message)
                self.messages.append(message)

    def send(self, message: Dict[str, Any]) -> bool:
        self.send_bytes(proto.encode(message))
        return True

    def of(self, call_id: int) -> List[Dict[str, Any]]:
        with self.lock:
            return [m for m in self.messages if m.get("id") == call_id and m["type"] == "result"]


class RuntimeAnswersTest(unittest.TestCase):
    """``_value``, ``_answer_large`` and ``_too_large`` in-process: a real runtime and event loop."""

    def setUp(self) -> None:
        self.worker_table = proto.StringTable()
        patcher = mock.patch.object(proto, "STRINGS", self.worker_table)
        patcher.start()
        self.addCleanup(patcher.stop)

        def give(value: WorkflowValue) -> Any:
            kind = value.text
            if kind == "mixed":
                return WorkflowValue(MIXED, {"list": [ASCII, MIXED, "small"], "one": ASCII})
            if kind == "echo":
                return value
            if kind == "mutate":
                value.data.append(value.data[0])
                value.data[0] = "replaced"
                return WorkflowValue("mutated", value.data)
            if kind == "too_large":
                # 17 distinct 1 MiB strings: over 16 MiB with their full size, each far under the string limit.
                return WorkflowValue("t", [chr(65 + i) * (1024 * 1024) for i in range(17)])
            if kind == "too_large_by_ref":
                # One 1 MiB string named 17 times: one frame, but the limit counts it at each place.
                return WorkflowValue("t", [ASCII * 16] * 17)
            return "?"

        def combine(sources: Any) -> Any:
            return WorkflowValue("joined", [s.value.text for s in sources] + [s.value.data for s in sources])

        wf = WorkflowBuilder("Large strings")
        first = wf.python("give", give)
        second = wf.python("other", give)
        wf.start(first)
        wf.edge(first, second)
        wf.join([first, second], wf.python("after", give), combine=combine)
        wf.output(first)
        workflow = wf.build()
        self.channel = EngineChannel()
        self.runtime = start_runtime(self, workflow, self.channel)
        self.loop = self.runtime.loop

    def result(self, message: Dict[str, Any]) -> Dict[str, Any]:
        async def wait() -> None:
            deadline = time.monotonic() + 10
            while not self.channel.of(message["id"]):
                if time.monotonic() > deadline:
                    raise AssertionError("timed out")
                await asyncio.sleep(0.005)

        self.loop.call_soon(self.runtime.invoke, message)
        self.loop.run_until_complete(wait())
        (result,) = self.channel.of(message["id"])
        return result

    def engine_sends(self, ref: int, text: str) -> str:
        """A string frame from the engine, read by the worker's reader: returns the worker's string."""
        reader = proto.LineReader(strings=self.worker_table)
        reader.feed(string_frame(ref, text.encode("utf-8")))
        self.channel.table.receive(ref, text, len(text.encode("utf-8")), True)  # the engine keeps what it sent
        message = invoke(0, "", None, [{"ref": ref, "at": ["input", "text"]}])
        self.worker_table.resolve(message)
        return message["input"]["text"]

    def node(self, call_id: int, node: str, text: str, data: Any = None) -> Dict[str, Any]:
        message = invoke(call_id, text, data)
        message["node"] = node
        return message

    def test_a_value_with_large_strings_goes_as_frames_then_by_ref(self) -> None:
        result = self.result(self.node(1, "give", "mixed"))
        expected = {"text": MIXED, "data": {"list": [ASCII, MIXED, "small"], "one": ASCII}}
        self.assertEqual(result["value"], expected)
        self.assertNotIn("strings", result)
        self.assertEqual(len(self.channel.writes), 1, "frames and answer in one write")
        first_write = self.channel.writes[0]
        # MIXED and ASCII are module constants: the same objects each call, so the second answer names them.
        result = self.result(self.node(2, "give", "mixed"))
        self.assertEqual(result["value"], expected)
        second_write = self.channel.writes[1]
        self.assertFalse(second_write.startswith(b'{"type":"string"'))
        self.assertLess(len(second_write), 1000)
        self.assertGreater(len(first_write), len(MIXED.encode()) + len(ASCII))

    def test_an_input_string_returned_unchanged_goes_back_by_the_engines_ref(self) -> None:
        text = self.engine_sends(1, MIXED)
        result = self.result(self.node(1, "give", "echo", [text, {"k": text}]))
        self.assertEqual(result["value"], {"text": "echo", "data": [MIXED, {"k": MIXED}]})
        self.assertEqual(len(self.channel.writes), 1)
        self.assertNotIn(b'"type":"string"', self.channel.writes[0])
        self.assertIn(b'"strings":[{"ref":1,"at":["value","data",0]},{"ref":1,"at":["value","data",1,"k"]}]',
                      self.channel.writes[0])

    def test_a_node_that_mutates_a_list_of_large_strings(self) -> None:
        text = self.engine_sends(1, ASCII)
        result = self.result(self.node(1, "give", "mutate", [text, MIXED]))
        self.assertEqual(result["value"], {"text": "mutated", "data": ["replaced", MIXED, ASCII]})

    def test_combine_over_sources_with_large_strings(self) -> None:
        text = self.engine_sends(1, MIXED)
        message = {
            "type": "invoke", "id": 3, "kind": "combine", "join": "join:after", "timeout_ms": None,
            "sources": [
                {"node_id": "give", "activation_id": "give#1", "value": {"text": text, "data": None}},
                {"node_id": "other", "activation_id": "other#1", "value": {"text": "s", "data": [ASCII]}},
            ],
        }
        result = self.result(message)
        self.assertEqual(result["value"], {"text": "joined", "data": [MIXED, "s", None, [ASCII]]})

    def test_over_the_limit_with_its_strings_fails_with_value_too_large(self) -> None:
        for call_id, kind in enumerate(["too_large", "too_large_by_ref"], start=1):
            with self.subTest(kind=kind):
                kept = self.worker_table.kept_bytes
                result = self.result(self.node(call_id, "give", kind))
                self.assertFalse(result["ok"])
                self.assertEqual(result["error"]["code"], "value_too_large")
                self.assertIn("over the limit of 16,777,216 bytes", result["error"]["message"])
                self.assertEqual(self.worker_table.kept_bytes, kept, "nothing kept for an answer not sent")
                self.assertEqual(self.channel.table.kept_bytes, 0, "no string frame was sent")
        # The worker goes on answering, and a string it forgot travels again when it is used.
        self.assertEqual(self.result(self.node(9, "give", "mixed"))["value"]["text"], MIXED)


if __name__ == "__main__":
    unittest.main()
