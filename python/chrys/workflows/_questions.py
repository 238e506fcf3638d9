"""Questions a Python node asks the user through ``NodeContext.ask``, and the answers that come back.

Every check runs when a ``Question`` or ``Option`` is created, so the traceback points at the author's
code: wrong types raise ``TypeError``, every other violation ``ValueError``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._values import find_lone_surrogate

MAX_HEADER_CHARS = 64
MAX_OPTIONS = 8
MAX_LABEL_CHARS = 200
MAX_DESCRIPTION_CHARS = 500


def _require_text(value: object, owner: str, field: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{owner} {field} must be a str, got {type(value).__qualname__}: {value!r:.80}")
    index = find_lone_surrogate(value)
    if index is not None:
        raise ValueError(
            f"{owner} {field} holds an unpaired surrogate at index {index}, which is not valid Unicode; "
            "decode the text properly before passing it."
        )
    return str(value)


class _Frozen:
    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only; cannot delete {name!r}")


class Option(_Frozen):
    """One option of a :class:`Question`: a ``label`` (what the user picks) and a one-line ``description``."""

    __slots__ = ("_label", "_description")
    _label: str
    _description: str

    def __init__(self, label: str, description: str = "") -> None:
        label = _require_text(label, "Option", "label").strip()
        if not label:
            raise ValueError("Option label must not be blank; give the option a visible label.")
        if len(label) > MAX_LABEL_CHARS:
            raise ValueError(
                f"Option label is {len(label)} characters long; at most {MAX_LABEL_CHARS} are allowed. "
                "Move the detail into description."
            )
        description = _require_text(description, "Option", "description")
        if len(description) > MAX_DESCRIPTION_CHARS:
            raise ValueError(
                f"Option description is {len(description)} characters long; at most "
                f"{MAX_DESCRIPTION_CHARS} are allowed. Shorten it, or put the detail in the question text."
            )
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "_description", description)

    @property
    def label(self) -> str:
        """What the user picks and what comes back in ``Answer.selected`` (surrounding whitespace removed)."""
        return self._label

    @property
    def description(self) -> str:
        """One line shown under the label."""
        return self._description

    def __repr__(self) -> str:
        return f"Option(label={self._label!r}, description={self._description!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Option):
            return NotImplemented
        return (self._label, self._description) == (other._label, other._description)

    def __hash__(self) -> int:
        return hash((Option, self._label, self._description))

    def _to_wire(self) -> Dict[str, str]:
        return {"label": self._label, "description": self._description}


class Question(_Frozen):
    """One question for ``ctx.ask()``; without options it takes a typed answer only."""

    __slots__ = ("_question", "_header", "_options", "_multi_select")
    _question: str
    _header: str
    _options: Tuple[Option, ...]
    _multi_select: bool

    def __init__(
        self,
        question: str,
        header: str = "",
        options: Union[List[Union[Option, str]], Tuple[Union[Option, str], ...]] = (),
        multi_select: bool = False,
    ) -> None:
        question = _require_text(question, "Question", "question")
        if not question.strip():
            raise ValueError("Question question must not be blank; write the question to ask.")
        header = _require_text(header, "Question", "header")
        if len(header) > MAX_HEADER_CHARS:
            raise ValueError(
                f"Question header is {len(header)} characters long; at most {MAX_HEADER_CHARS} are "
                "allowed. Use a short tab label and put the rest in the question."
            )
        if not isinstance(options, (list, tuple)):
            raise TypeError(
                f"Question options must be a list or tuple of Option or str, got "
                f"{type(options).__qualname__}"
            )
        if len(options) > MAX_OPTIONS:
            raise ValueError(
                f"Question has {len(options)} options; at most {MAX_OPTIONS} are allowed. "
                "Split it into several questions, or let the user type an answer."
            )
        built: List[Option] = []
        seen: Dict[str, int] = {}
        for index, option in enumerate(options):
            if isinstance(option, str):
                option = Option(option)
            elif not isinstance(option, Option):
                raise TypeError(
                    f"Question options[{index}] must be an Option or a str, got {type(option).__qualname__}"
                )
            if option.label in seen:
                raise ValueError(
                    f"Question options[{index}] repeats the label {option.label!r} of options"
                    f"[{seen[option.label]}]; labels must be unique within a question (after removing "
                    "surrounding whitespace)."
                )
            seen[option.label] = index
            built.append(option)
        if not isinstance(multi_select, bool):
            raise TypeError(f"Question multi_select must be a bool, got {type(multi_select).__qualname__}")
        if multi_select and not built:
            raise ValueError("Question multi_select=True needs at least one option to select from.")
        object.__setattr__(self, "_question", question)
        object.__setattr__(self, "_header", header)
        object.__setattr__(self, "_options", tuple(built))
        object.__setattr__(self, "_multi_select", multi_select)

    @property
    def question(self) -> str:
        """The question text, rendered as Markdown."""
        return self._question

    @property
    def header(self) -> str:
        """A short label for the question's tab (``""``: the tab shows the question number)."""
        return self._header

    @property
    def options(self) -> Tuple[Option, ...]:
        """The options, strings already turned into ``Option`` objects."""
        return self._options

    @property
    def multi_select(self) -> bool:
        """Whether the user may pick several options."""
        return self._multi_select

    def __repr__(self) -> str:
        return (
            f"Question(question={self._question!r}, header={self._header!r}, options={self._options!r}, "
            f"multi_select={self._multi_select!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Question):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((Question, self._key()))

    def _key(self) -> Tuple[Any, ...]:
        return (self._question, self._header, self._options, self._multi_select)

    def _to_wire(self) -> Dict[str, Any]:
        return {
            "question": self._question,
            "header": self._header,
            "options": [option._to_wire() for option in self._options],
            "multi_select": self._multi_select,
        }


class Answer(_Frozen):
    """The user's answer to one :class:`Question`.

    ``selected`` holds the offered labels picked (in option order), ``text`` everything else typed; both
    empty means the user skipped the question.
    """

    __slots__ = ("_selected", "_text")
    _selected: Tuple[str, ...]
    _text: str

    def __init__(self, selected: Sequence[str] = (), text: str = "") -> None:
        if isinstance(selected, str) or not isinstance(selected, (list, tuple)):
            raise TypeError(f"Answer selected must be a tuple of str, got {type(selected).__qualname__}")
        for index, label in enumerate(selected):
            if not isinstance(label, str):
                raise TypeError(f"Answer selected[{index}] must be a str, got {type(label).__qualname__}")
        if not isinstance(text, str):
            raise TypeError(f"Answer text must be a str, got {type(text).__qualname__}")
        object.__setattr__(self, "_selected", tuple(selected))
        object.__setattr__(self, "_text", text)

    @property
    def selected(self) -> Tuple[str, ...]:
        """The offered labels the answer names, in option order."""
        return self._selected

    @property
    def text(self) -> str:
        """An answer of the user's own, or a note given with a selection."""
        return self._text

    @property
    def answered(self) -> bool:
        """``False`` only when the user skipped the question."""
        return bool(self._selected) or bool(self._text)

    @property
    def choice(self) -> Optional[str]:
        """The one selected label, or ``None``; raises ``ValueError`` when several are selected."""
        selected: Tuple[str, ...] = self._selected
        if len(selected) == 0:
            return None
        if len(selected) > 1:
            raise ValueError(
                f"Answer.choice is ambiguous: {len(self._selected)} labels are selected "
                f"({', '.join(repr(label) for label in self._selected)}); read Answer.selected instead."
            )
        return selected[0]

    def __repr__(self) -> str:
        return f"Answer(selected={self._selected!r}, text={self._text!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Answer):
            return NotImplemented
        return (self._selected, self._text) == (other._selected, other._text)

    def __hash__(self) -> int:
        return hash((Answer, self._selected, self._text))

    @classmethod
    def _from_wire(cls, message: Mapping[str, Any]) -> Answer:
        if not isinstance(message, Mapping):
            raise TypeError(f"an answer must be an object with 'selected' and 'text', got {message!r:.80}")
        return cls(tuple(message.get("selected") or ()), message.get("text") or "")
