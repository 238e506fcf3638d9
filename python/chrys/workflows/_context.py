"""``NodeContext``: progress messages and user questions for one invocation of a Python node.

The worker creates one per invocation and injects a transport with ``emit(text: str) -> None`` and
``async ask(questions: list[dict]) -> list[dict]`` (questions as ``{"question", "header", "options":
[{"label", "description"}], "multi_select"}``, answers as ``{"selected": [...], "text": ...}``).
"""

from __future__ import annotations

from typing import Any, Awaitable, Coroutine, Dict, List, Protocol, Sequence, Tuple, Union, overload

from ._names import with_article
from ._questions import Answer, Question
from ._values import find_lone_surrogate

MAX_QUESTIONS = 5


class Transport(Protocol):
    """What the worker injects into every ``NodeContext``."""

    def emit(self, text: str) -> None: ...

    def ask(self, questions: List[Dict[str, Any]]) -> Awaitable[List[Dict[str, Any]]]: ...


def _open_question(prompt: str) -> Dict[str, Any]:
    return {"question": prompt, "header": "", "options": [], "multi_select": False}


class NodeContext:
    """Reports progress and asks the user questions from a Python node function (its 2nd parameter)."""

    __slots__ = ("_transport",)

    def __init__(self, _transport: Transport) -> None:
        self._transport = _transport

    def emit(self, text: str) -> None:
        """Sends a progress message or notice; it does not change the node's output."""
        if not isinstance(text, str):
            raise TypeError(f"NodeContext.emit() takes a str, got {type(text).__qualname__}")
        index = find_lone_surrogate(text)
        if index is not None:
            raise ValueError(
                f"NodeContext.emit() text holds an unpaired surrogate at index {index}, which is not "
                "valid Unicode; decode the text properly before sending it."
            )
        self._transport.emit(str(text))

    @overload
    def ask(self, prompt: str) -> Coroutine[Any, Any, str]: ...

    @overload
    def ask(self, prompt: Question) -> Coroutine[Any, Any, Answer]: ...

    @overload
    def ask(
        self, prompt: Union[List[Question], Tuple[Question, ...]]
    ) -> Coroutine[Any, Any, Tuple[Answer, ...]]: ...

    def ask(self, prompt: Union[str, Question, Sequence[Question]]) -> Coroutine[Any, Any, Any]:
        """Asks the user and waits for the answer: ``await ctx.ask(...)`` from an ``async def`` node.

        A non-blank ``str`` returns the typed answer as ``str``; a ``Question`` returns an ``Answer``; a list
        or tuple of 1 to 5 questions returns a tuple of answers in question order. The argument is checked
        at the call, so a wrong one raises here (``TypeError``, or ``ValueError`` for a blank string, an
        empty list or more than five questions).
        """
        if isinstance(prompt, str):
            if not prompt.strip():
                raise ValueError("NodeContext.ask() prompt must not be blank; write the question to ask.")
            index = find_lone_surrogate(prompt)
            if index is not None:
                raise ValueError(
                    f"NodeContext.ask() prompt holds an unpaired surrogate at index {index}, which is not "
                    "valid Unicode."
                )
            return self._ask_text(str(prompt))
        if isinstance(prompt, Question):
            return self._ask_one(prompt)
        if isinstance(prompt, (list, tuple)):
            if not prompt:
                raise ValueError("NodeContext.ask() needs at least one question; the list is empty.")
            if len(prompt) > MAX_QUESTIONS:
                raise ValueError(
                    f"NodeContext.ask() takes at most {MAX_QUESTIONS} questions at once, got {len(prompt)}; "
                    "ask the rest in a second call."
                )
            for index, item in enumerate(prompt):
                if not isinstance(item, Question):
                    raise TypeError(
                        f"NodeContext.ask() question {index} is {with_article(type(item).__qualname__)}; pass Question "
                        "objects in a list or tuple (a plain string is allowed only on its own)."
                    )
            return self._ask_many(tuple(prompt))
        raise TypeError(
            f"NodeContext.ask() takes a str, a Question, or a list or tuple of 1 to {MAX_QUESTIONS} "
            f"questions, got {type(prompt).__qualname__}"
        )

    async def _exchange(self, questions: List[Dict[str, Any]]) -> List[Answer]:
        replies = await self._transport.ask(questions)
        if not isinstance(replies, (list, tuple)) or len(replies) != len(questions):
            raise RuntimeError(
                f"the question channel answered {len(questions)} question(s) with {replies!r:.120}"
            )
        return [Answer._from_wire(reply) for reply in replies]

    async def _ask_text(self, prompt: str) -> str:
        (answer,) = await self._exchange([_open_question(prompt)])
        if answer.text:
            return answer.text
        return ", ".join(answer.selected)

    async def _ask_one(self, question: Question) -> Answer:
        (answer,) = await self._exchange([question._to_wire()])
        return answer

    async def _ask_many(self, questions: Tuple[Question, ...]) -> Tuple[Answer, ...]:
        answers = await self._exchange([question._to_wire() for question in questions])
        return tuple(answers)

    def __repr__(self) -> str:
        return "NodeContext()"
