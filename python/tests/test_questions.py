"""``Question``, ``Option`` and ``Answer``: the spec's rules, checked when the objects are created."""

from __future__ import annotations

import unittest
from typing import Any, Dict, Tuple, Type

from chrys.workflows import Answer, Option, Question


class OptionRules(unittest.TestCase):
    def test_valid(self) -> None:
        option = Option("  API  ", "The public API")
        self.assertEqual((option.label, option.description), ("API", "The public API"))
        self.assertEqual(Option("x"), Option(label="x", description=""))
        self.assertEqual(Option("l" * 200).label, "l" * 200)
        self.assertEqual(Option("x", "d" * 500).description, "d" * 500)
        self.assertEqual(Option(" " + "l" * 200 + "\n").label, "l" * 200)  # counted after stripping
        with self.assertRaises(AttributeError):
            option.label = "y"  # type: ignore[misc]

    def test_invalid(self) -> None:
        table: Dict[str, Tuple[Tuple[Any, ...], Type[Exception]]] = {
            "label not str": ((3,), TypeError),
            "label None": ((None,), TypeError),
            "description not str": (("x", None), TypeError),
            "blank label": (("   ",), ValueError),
            "empty label": (("",), ValueError),
            "label over 200": (("l" * 201,), ValueError),
            "description over 500": (("x", "d" * 501), ValueError),
            "surrogate in label": (("\ud800",), ValueError),
            "surrogate in description": (("x", "a\udfffb"), ValueError),
        }
        for name, (args, error) in table.items():
            with self.subTest(name), self.assertRaises(error) as caught:
                Option(*args)
            if error is ValueError:
                self.assertNotIsInstance(caught.exception, TypeError)


class QuestionRules(unittest.TestCase):
    def test_valid(self) -> None:
        question = Question("Which areas?", options=["API", Option("Storage", "Disk"), " UI "], multi_select=True)
        self.assertEqual(question.question, "Which areas?")
        self.assertEqual(question.header, "")
        self.assertEqual(question.options, (Option("API"), Option("Storage", "Disk"), Option("UI")))
        self.assertTrue(question.multi_select)
        self.assertEqual(Question("Name?").options, ())
        self.assertEqual(Question("q", "h" * 64).header, "h" * 64)
        self.assertEqual(len(Question("q", options=[str(i) for i in range(8)]).options), 8)
        self.assertEqual(Question("q", options=("a",)).options, (Option("a"),))
        long_draft = "x" * 100_000  # no length limit on the question itself
        self.assertEqual(Question(long_draft).question, long_draft)
        self.assertEqual(
            question._to_wire(),
            {
                "question": "Which areas?",
                "header": "",
                "options": [
                    {"label": "API", "description": ""},
                    {"label": "Storage", "description": "Disk"},
                    {"label": "UI", "description": ""},
                ],
                "multi_select": True,
            },
        )
        with self.assertRaises(AttributeError):
            question.options = ()  # type: ignore[misc]

    def test_invalid(self) -> None:
        table: Dict[str, Tuple[Dict[str, Any], Type[Exception]]] = {
            "question not str": ({"question": 1}, TypeError),
            "question None": ({"question": None}, TypeError),
            "blank question": ({"question": " \n\t"}, ValueError),
            "empty question": ({"question": ""}, ValueError),
            "header not str": ({"question": "q", "header": None}, TypeError),
            "header over 64": ({"question": "q", "header": "h" * 65}, ValueError),
            "options not list or tuple": ({"question": "q", "options": "abc"}, TypeError),
            "options a set": ({"question": "q", "options": {"a"}}, TypeError),
            "options None": ({"question": "q", "options": None}, TypeError),
            "option of wrong type": ({"question": "q", "options": ["a", 1]}, TypeError),
            "nine options": ({"question": "q", "options": [str(i) for i in range(9)]}, ValueError),
            "duplicate labels": ({"question": "q", "options": ["a", "b", "a"]}, ValueError),
            "duplicate after strip": ({"question": "q", "options": ["a", Option(" a ")]}, ValueError),
            "blank string option": ({"question": "q", "options": [" "]}, ValueError),
            "label over 200 via str": ({"question": "q", "options": ["l" * 201]}, ValueError),
            "multi_select not bool": ({"question": "q", "options": ["a"], "multi_select": 1}, TypeError),
            "multi_select without options": ({"question": "q", "multi_select": True}, ValueError),
            "surrogate in question": ({"question": "q\ud800"}, ValueError),
            "surrogate in header": ({"question": "q", "header": "\udc00"}, ValueError),
            "surrogate in option": ({"question": "q", "options": ["\ud800"]}, ValueError),
        }
        for name, (kwargs, error) in table.items():
            with self.subTest(name), self.assertRaises(error) as caught:
                Question(**kwargs)
            if error is ValueError:
                self.assertNotIsInstance(caught.exception, TypeError)

    def test_error_points_at_the_authors_line(self) -> None:
        import traceback

        try:
            Question("")
        except ValueError as error:
            frames = traceback.extract_tb(error.__traceback__)
            self.assertEqual(frames[0].name, "test_error_points_at_the_authors_line")
            self.assertTrue(frames[-1].filename.endswith("_questions.py"))


class AnswerShapes(unittest.TestCase):
    def test_three_shapes(self) -> None:
        table = [
            # selected, text, answered, choice
            (("API",), "", True, "API"),
            (("API",), "and quickly", True, "API"),
            ((), "my own answer", True, None),
            ((), "", False, None),
        ]
        for selected, text, answered, choice in table:
            with self.subTest(selected=selected, text=text):
                answer = Answer(selected, text)
                self.assertEqual((answer.selected, answer.text), (selected, text))
                self.assertEqual(answer.answered, answered)
                self.assertEqual(answer.choice, choice)

    def test_choice_with_several_selections(self) -> None:
        answer = Answer(selected=("API", "UI"))
        self.assertEqual(answer.selected, ("API", "UI"))
        self.assertTrue(answer.answered)
        with self.assertRaises(ValueError) as caught:
            answer.choice  # noqa: B018
        self.assertIn("selected", str(caught.exception))

    def test_defaults_equality_and_immutability(self) -> None:
        self.assertEqual(Answer(), Answer(selected=(), text=""))
        self.assertEqual(Answer(["a"]), Answer(("a",)))  # a list is stored as a tuple
        self.assertIsInstance(Answer(["a"]).selected, tuple)
        self.assertEqual(repr(Answer(("a",), "n")), "Answer(selected=('a',), text='n')")
        answer = Answer()
        for field in ("selected", "text", "answered", "choice"):
            with self.assertRaises(AttributeError):
                setattr(answer, field, None)
        with self.assertRaises(TypeError):
            Answer("abc")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            Answer((1,))  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            Answer((), None)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
