"""Messages name types with the right article and exception classes by their public names."""

from __future__ import annotations

import collections
import decimal
import json
import os
import sys
import unittest
import uuid

_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)

import chrys.workflows  # noqa: E402
from chrys.workflows import NodeContext, WorkflowValue  # noqa: E402
from chrys.workflows import _tracebacks as tb  # noqa: E402
from chrys.workflows._asks import AskUnavailable  # noqa: E402
from chrys.workflows._errors import ValueNotSerializable, WorkflowDefinitionError  # noqa: E402
from chrys.workflows._names import public_name, publish_traceback, with_article  # noqa: E402
from chrys.workflows._values import check_value  # noqa: E402


class WithArticleTest(unittest.TestCase):
    def test_articles_follow_the_sound_of_the_name(self) -> None:
        cases = {
            "int": "an int",
            "object": "an object",
            "ellipsis": "an ellipsis",
            "OrderedDict": "an OrderedDict",
            "Enum": "an Enum",
            "array": "an array",
            "int64": "an int64",
            "str": "a str",
            "dict": "a dict",
            "NoneType": "a NoneType",
            "Decimal": "a Decimal",
            "UUID": "a UUID",
            "URL": "a URL",
            "HTTPError": "an HTTPError",
            "SQLAlchemyError": "an SQLAlchemyError",
            "uint8": "a uint8",
            "unicode": "a unicode",
            "UnboundLocalError": "an UnboundLocalError",
        }
        self.assertEqual({name: with_article(name) for name in cases}, cases)


class PublicNameTest(unittest.TestCase):
    def test_names(self) -> None:
        self.assertEqual(public_name(ValueError), "ValueError")
        self.assertEqual(public_name(WorkflowValue), "chrys.workflows.WorkflowValue")
        self.assertEqual(public_name(NodeContext), "chrys.workflows.NodeContext")
        self.assertEqual(public_name(AskUnavailable), "AskUnavailable")
        self.assertEqual(public_name(WorkflowDefinitionError), "WorkflowDefinitionError")
        self.assertEqual(public_name(json.JSONDecodeError), "json.decoder.JSONDecodeError")
        self.assertEqual(public_name(decimal.InvalidOperation), "decimal.InvalidOperation")

    def test_describe_never_names_a_private_module(self) -> None:
        self.assertEqual(tb.describe(AskUnavailable("nobody to ask")), "AskUnavailable: nobody to ask")
        self.assertEqual(tb.describe(KeyError("k")), "KeyError: 'k'")

    def test_tracebacks_name_the_private_classes_by_their_public_names(self) -> None:
        user = tb.UserFiles(_PYTHON_DIR, os.path.dirname(os.path.abspath(__file__)))
        try:
            try:
                raise AskUnavailable("nobody to ask")
            except AskUnavailable as inner:
                raise ValueNotSerializable("then this") from inner
        except ValueNotSerializable as error:
            text = tb.format_user_traceback(error, user)
        self.assertNotIn("chrys.workflows._", text)
        self.assertRegex(text, r"(?m)^AskUnavailable: nobody to ask$")
        self.assertRegex(text, r"(?m)^ValueNotSerializable: then this$")
        self.assertIn("test_names.py", text)  # the author's frame is kept

    def test_publish_traceback_leaves_other_text_alone(self) -> None:
        private = f"{AskUnavailable.__module__}.AskUnavailable"
        self.assertTrue(private.startswith("chrys.workflows._"))
        error = AskUnavailable(f"see {private}")
        text = f"Traceback (most recent call last):\n  x\n{private}: see {private}\n"
        self.assertEqual(
            publish_traceback(text, error),
            f"Traceback (most recent call last):\n  x\nAskUnavailable: see {private}\n",
        )


class MessagesTest(unittest.TestCase):
    def test_a_returned_value_of_the_wrong_type_is_named_with_its_article(self) -> None:
        cases = [(5, "an int"), (object(), "an object"), (collections.OrderedDict(), "an OrderedDict"), (uuid.uuid4(), "a UUID"), (b"x", "a bytes")]
        for value, named in cases:
            with self.subTest(named):
                with self.assertRaises(ValueNotSerializable) as caught:
                    check_value(value)
                self.assertIn(f"the function returned {named};", str(caught.exception))

    def test_data_of_the_wrong_type_is_named_with_its_article(self) -> None:
        with self.assertRaises(ValueNotSerializable) as caught:
            check_value(WorkflowValue("t", {"x": object()}))
        self.assertIn("is an object, which data cannot carry", str(caught.exception))
        with self.assertRaises(ValueNotSerializable) as caught:
            check_value(WorkflowValue(7))  # type: ignore[arg-type]
        self.assertIn("WorkflowValue.text is an int;", str(caught.exception))

    def test_the_sdk_is_importable_as_named(self) -> None:
        self.assertIs(chrys.workflows.WorkflowValue, WorkflowValue)


if __name__ == "__main__":
    unittest.main()
