"""``WorkflowValue``, ``SourceValue`` and the data rules and limits of ``check_value`` (spec "Data and output
limits", clarifications 12 and 13)."""

from __future__ import annotations

import collections
import enum
import json
import unittest
from typing import Any

from chrys.workflows import SourceValue, WorkflowValue
from chrys.workflows._values import (
    MAX_DEPTH,
    MAX_STRING_CHARS,
    MAX_VALUES,
    ValueNotSerializable,
    ValueTooLarge,
    check_value,
    from_wire,
    to_wire,
)


def nested(levels: int, leaf: Any = 0) -> Any:
    """``leaf`` at level ``levels`` of data (data itself is level 0)."""
    value = leaf
    for index in range(levels):
        value = [value] if index % 2 else {"k": value}
    return value


class Construction(unittest.TestCase):
    def test_no_validation_at_construction(self) -> None:
        value = WorkflowValue(text=3, data={1, 2})  # type: ignore[arg-type]
        self.assertEqual(value.text, 3)
        self.assertEqual(WorkflowValue("t").data, None)
        self.assertEqual(WorkflowValue("t", [1]), WorkflowValue(text="t", data=[1]))
        self.assertNotEqual(WorkflowValue("t", True), WorkflowValue("t", 1))
        self.assertNotEqual(WorkflowValue("t", [1.0, {"a": False}]), WorkflowValue("t", [1.0, {"a": 0}]))
        self.assertEqual(repr(WorkflowValue("t", {"a": 1})), "WorkflowValue(text='t', data={'a': 1})")

    def test_source_value(self) -> None:
        source = SourceValue("lint", "lint@iter#1", WorkflowValue("ok"))
        self.assertEqual((source.node_id, source.activation_id, source.value), ("lint", "lint@iter#1", WorkflowValue("ok")))
        self.assertEqual(source, SourceValue("lint", "lint@iter#1", WorkflowValue("ok")))
        with self.assertRaises(AttributeError):
            source.node_id = "x"  # type: ignore[misc]
        self.assertIn("lint@iter#1", repr(source))


class Accepted(unittest.TestCase):
    def test_strings_become_values(self) -> None:
        self.assertEqual(check_value("hi"), WorkflowValue("hi", None))
        value = WorkflowValue("t", {"a": [1, 2.5, "s", True, None, {}, []]})
        self.assertIs(check_value(value), value)

    def test_spec_example_counts_seven_values(self) -> None:
        data = {"names": ["Alice", "Bob"], "scores": [90, 80]}
        check_value(WorkflowValue("t", data))

    def test_depth_64_allowed_65_rejected(self) -> None:
        self.assertEqual(MAX_DEPTH, 64)
        check_value(WorkflowValue("t", nested(64)))
        check_value(WorkflowValue("t", nested(63, [])))  # an empty list at level 63 holds nothing deeper
        check_value(WorkflowValue("t", nested(64, {})))  # a container at level 64 is allowed
        for leaf in (0, None, "s", [], {}):
            with self.assertRaises(ValueTooLarge) as caught:
                check_value(WorkflowValue("t", nested(65, leaf)))
            self.assertEqual(caught.exception.code, "value_too_large")
            self.assertIn("65 levels", str(caught.exception))

    def test_200000_values(self) -> None:
        self.assertEqual(MAX_VALUES, 200_000)
        check_value(WorkflowValue("t", [0] * (MAX_VALUES - 1)))  # the list + 199,999 numbers
        check_value(WorkflowValue("t", {str(i): None for i in range(MAX_VALUES - 1)}))  # keys do not count
        check_value(WorkflowValue("t", [[0, 0]] * ((MAX_VALUES - 1) // 3)))
        with self.assertRaises(ValueTooLarge):
            check_value(WorkflowValue("t", [0] * MAX_VALUES))
        with self.assertRaises(ValueTooLarge):
            check_value(WorkflowValue("t", {"a": [0] * (MAX_VALUES - 2), "b": 0}))

    def test_string_length(self) -> None:
        self.assertEqual(MAX_STRING_CHARS, 4_194_304)
        longest = "é" * MAX_STRING_CHARS  # characters, not bytes
        check_value(longest)
        check_value(WorkflowValue(longest, {"k": longest}))
        too_long = "x" * (MAX_STRING_CHARS + 1)
        for value in (too_long, WorkflowValue(too_long), WorkflowValue("t", ["ok", too_long]), WorkflowValue("t", {too_long: 1})):
            with self.assertRaises(ValueTooLarge):
                check_value(value)

    def test_finite_floats_and_big_ints(self) -> None:
        check_value(WorkflowValue("t", [1e308, -0.0, 2**63, -(2**200)]))
        with self.assertRaises(ValueNotSerializable):
            check_value(WorkflowValue("t", 10**5000))

    def test_subclasses_of_json_types(self) -> None:
        class Color(enum.IntEnum):
            RED = 1

        value = WorkflowValue("t", collections.OrderedDict(a=[Color.RED, True]))
        check_value(value)
        wire = to_wire(value)
        self.assertEqual(json.dumps(wire), '{"text": "t", "data": {"a": [1, true]}}')
        self.assertIs(type(wire["data"]), dict)


class Rejected(unittest.TestCase):
    def assert_not_serializable(self, value: Any, says: str) -> None:
        with self.assertRaises(ValueNotSerializable) as caught:
            check_value(value)
        self.assertEqual(caught.exception.code, "value_not_serializable")
        self.assertIsInstance(caught.exception, ValueError)
        self.assertIn(says, str(caught.exception))

    def test_return_types(self) -> None:
        for value in (None, 3, b"x", {"text": "t"}, ["t"], WorkflowValue):
            self.assert_not_serializable(value, "must return a str or a WorkflowValue")
        self.assert_not_serializable(WorkflowValue(None), "text is a NoneType")  # type: ignore[arg-type]
        self.assert_not_serializable(WorkflowValue(b"t"), "must be a str")  # type: ignore[arg-type]

    def test_data_types(self) -> None:
        cases = {
            "nan": (float("nan"), "NaN"),
            "inf": (float("inf"), "finite"),
            "-inf": (float("-inf"), "finite"),
            "tuple": ((1, 2), "use a list"),
            "set": ({1}, "set"),
            "frozenset": (frozenset(), "frozenset"),
            "bytes": (b"x", "bytes"),
            "bytearray": (bytearray(b"x"), "bytearray"),
            "object": (object(), "object"),
            "complex": (1j, "complex"),
            "int key": ({1: "a"}, "string keys"),
            "tuple key": ({(1,): "a"}, "string keys"),
            "nested nan": ({"a": [1, {"b": float("nan")}]}, "data['a'][1]['b']"),
        }
        for name, (data, says) in cases.items():
            with self.subTest(name):
                self.assert_not_serializable(WorkflowValue("t", data), says)

    def test_lone_surrogates(self) -> None:
        self.assert_not_serializable("bad \ud800", "surrogate")
        self.assert_not_serializable(WorkflowValue("bad \udfff"), "surrogate")
        self.assert_not_serializable(WorkflowValue("t", ["ok", "bad \udc80"]), "data[1]")
        self.assert_not_serializable(WorkflowValue("t", {"bad \ud83d": 1}), "surrogate")
        check_value("paired \U0001f600 is fine")

    def test_circular_reference(self) -> None:
        data: Any = []
        data.append(data)
        self.assert_not_serializable(WorkflowValue("t", data), "itself")
        shared = [1]
        check_value(WorkflowValue("t", [shared, shared]))  # shared but not circular is fine


class Wire(unittest.TestCase):
    def test_round_trip(self) -> None:
        value = WorkflowValue("text", {"a": [1, 2.5, None, True, "s"]})
        wire = to_wire(value)
        self.assertEqual(wire, {"text": "text", "data": {"a": [1, 2.5, None, True, "s"]}})
        self.assertEqual(from_wire(json.loads(json.dumps(wire))), value)
        self.assertEqual(value.to_wire(), wire)
        self.assertEqual(WorkflowValue.from_wire({"text": "x"}), WorkflowValue("x"))

    def test_bad_wire_shapes(self) -> None:
        for message in (None, [], {"data": 1}, {"text": 1}):
            with self.assertRaises(TypeError):
                from_wire(message)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
