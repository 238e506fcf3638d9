"""How the SDK's messages name types and exception classes: with the right article, and by public names.

``"an int"``, not ``"a int"``; ``AskUnavailable`` or ``chrys.workflows.WorkflowValue``, never a private module
path such as ``chrys.workflows._asks.AskUnavailable``, which a user could not import.
"""

from __future__ import annotations

import re
import sys
from typing import List, Tuple

_PACKAGE = __name__.rpartition(".")[0]  # chrys.workflows

# Letters whose name starts with a vowel sound, for names read letter by letter ("an HTTPError", "a UUID").
_VOWEL_SOUND_LETTERS = frozenset("AEFHILMNORSX")
# Words that start with a vowel letter but the sound of "you" or "w" ("a uint8", "a unicode string").
_CONSONANT_SOUND = re.compile(r"(?i)^(uni|use|usa|usu|uti|uint|ufunc|uu|eu|one\b|once)")


def with_article(name: str) -> str:
    """``name`` after "a" or "an", as it is read: ``an int``, ``a str``, ``an OrderedDict``, ``a UUID``,
    ``an HTTPError``, ``a uint8``."""
    if not name:
        return name
    if len(name) > 1 and name[0].isupper() and name[1].isupper():  # an acronym, read letter by letter
        return ("an " if name[0] in _VOWEL_SOUND_LETTERS else "a ") + name
    if name[0].lower() in "aeiou" and not _CONSONANT_SOUND.match(name):
        return "an " + name
    return "a " + name


def public_name(cls: type) -> str:
    """The class's name as a user can import it: builtins bare (``ValueError``), the SDK's public names as
    ``chrys.workflows.X``, the SDK's private classes bare (``AskUnavailable``), anything else with its module
    (``json.decoder.JSONDecodeError``)."""
    name = cls.__qualname__
    module = cls.__module__
    if module in ("builtins", "__main__", None):
        return name
    if module == _PACKAGE or module.startswith(_PACKAGE + "."):
        package = sys.modules.get(_PACKAGE)
        if package is not None and cls.__name__ in getattr(package, "__all__", ()) and getattr(package, cls.__name__) is cls:
            return f"{_PACKAGE}.{cls.__name__}"
        return name
    return f"{module}.{name}"


def private_names(error: BaseException) -> List[Tuple[str, str]]:
    """``(full name as Python prints it, public name)`` of every SDK-private class in ``error``'s chain (its
    causes, contexts and group members), for rewriting a formatted traceback."""
    found: List[Tuple[str, str]] = []
    seen = set()
    todo: List[BaseException] = [error]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        cls = type(current)
        if cls.__module__.startswith(_PACKAGE + "."):
            pair = (f"{cls.__module__}.{cls.__qualname__}", public_name(cls))
            if pair not in found:
                found.append(pair)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                todo.append(linked)
        todo.extend(getattr(current, "exceptions", None) or ())
    return found


def publish_traceback(text: str, error: BaseException) -> str:
    """``text`` (a formatted traceback of ``error``) with each SDK-private class name at the start of an
    exception line (``chrys.workflows._asks.AskUnavailable: …``) replaced by its public name."""
    for private, public in private_names(error):
        # At a line's start, after an exception group's "| " margin, before ":" or the line's end.
        text = re.sub(r"(?m)^([ |]*)" + re.escape(private) + r"(?=:|$)", lambda m: m.group(1) + public, text)
    return text
