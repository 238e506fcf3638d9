"""``NodeContext``: argument rules of ``emit``/``ask`` and the shapes exchanged with the worker's transport."""

from __future__ import annotations

import asyncio
import unittest
from typing import Any, Dict, List

from chrys.workflows import Answer, NodeContext, Option, Question


class ScriptedTransport:
    """The worker-side transport as a node sees it: records what is sent, answers from a script."""

    def __init__(self, *replies: List[Dict[str, Any]]) -> None:
        self.emitted: List[str] = []
        self.asked: List[List[Dict[str, Any]]] = []
        self.replies = list(replies)

    def emit(self, text: str) -> None:
        self.emitted.append(text)

    async def ask(self, questions: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        await asyncio.sleep(0)
        self.asked.append(questions)
        return self.replies.pop(0)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


class Emit(unittest.TestCase):
    def test_emit_passes_text_through(self) -> None:
        transport = ScriptedTransport()
        ctx = NodeContext(transport)
        ctx.emit("Preparing result")
        ctx.emit("")
        ctx.emit("multi\nline ✓")
        self.assertEqual(transport.emitted, ["Preparing result", "", "multi\nline ✓"])

    def test_emit_rejects_non_text(self) -> None:
        ctx = NodeContext(ScriptedTransport())
        for bad in (None, 1, b"bytes", ["a"]):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                ctx.emit(bad)  # type: ignore[arg-type]
        with self.assertRaises(ValueError):
            ctx.emit("bad \ud800")


class Ask(unittest.TestCase):
    def test_open_question_returns_text(self) -> None:
        transport = ScriptedTransport([{"selected": [], "text": "Ada"}])
        ctx = NodeContext(transport)
        self.assertEqual(run(ctx.ask("What is your name?")), "Ada")
        self.assertEqual(
            transport.asked,
            [[{"question": "What is your name?", "header": "", "options": [], "multi_select": False}]],
        )

    def test_skipped_open_question_is_empty_text(self) -> None:
        ctx = NodeContext(ScriptedTransport([{"selected": [], "text": ""}]))
        self.assertEqual(run(ctx.ask("Anything else?")), "")

    def test_question_returns_answer(self) -> None:
        transport = ScriptedTransport([{"selected": ["API", "UI"], "text": "both"}])
        ctx = NodeContext(transport)
        question = Question("Which areas?", "Areas", ["API", Option("UI", "Front end")], multi_select=True)
        answer = run(ctx.ask(question))
        self.assertEqual(answer, Answer(("API", "UI"), "both"))
        self.assertEqual(transport.asked, [[question._to_wire()]])

    def test_list_and_tuple_return_tuples_in_order(self) -> None:
        replies = [{"selected": [], "text": str(i)} for i in range(5)]
        transport = ScriptedTransport(replies[:1], replies)
        ctx = NodeContext(transport)
        one = run(ctx.ask([Question("q0")]))
        self.assertEqual(one, (Answer((), "0"),))
        five = run(ctx.ask(tuple(Question(f"q{i}") for i in range(5))))
        self.assertIsInstance(five, tuple)
        self.assertEqual([answer.text for answer in five], ["0", "1", "2", "3", "4"])
        self.assertEqual([q["question"] for q in transport.asked[1]], ["q0", "q1", "q2", "q3", "q4"])

    def test_argument_rules_raise_at_the_call(self) -> None:
        ctx = NodeContext(ScriptedTransport())
        value_errors = {
            "blank string": "  ",
            "empty string": "",
            "empty list": [],
            "empty tuple": (),
            "six questions": [Question(f"q{i}") for i in range(6)],
            "surrogate": "q\ud800",
        }
        for name, prompt in value_errors.items():
            with self.subTest(name), self.assertRaises(ValueError) as caught:
                ctx.ask(prompt)  # no await needed: the argument is checked when ask() is called
            self.assertNotIsInstance(caught.exception, TypeError)
        type_errors = {
            "None": None,
            "int": 3,
            "bytes": b"q",
            "dict": {"question": "q"},
            "option": Option("a"),
            "set": {Question("q")},
            "list of str": ["q"],
            "mixed list": [Question("q"), "r"],
            "generator": (Question("q") for _ in range(1)),
        }
        for name, prompt in type_errors.items():
            with self.subTest(name), self.assertRaises(TypeError):
                ctx.ask(prompt)  # type: ignore[call-overload]

    def test_malformed_transport_reply(self) -> None:
        ctx = NodeContext(ScriptedTransport([]))
        with self.assertRaises(RuntimeError):
            run(ctx.ask("q?"))


if __name__ == "__main__":
    unittest.main()
