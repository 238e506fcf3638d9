"""Checks the signature of a callable when it is declared (``fn``, ``when``, switch conditions, ``until``,
``combine`` and a loop's ``body``), so a wrong one fails at the author's call rather than mid-run."""

from __future__ import annotations

import inspect
from typing import NoReturn, Optional, Tuple

from ._errors import WorkflowDefinitionError, WorkflowDefinitionTypeError
from ._sites import call_site

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _describe(fn: object) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if isinstance(name, str) and name:
        return name
    return type(fn).__qualname__ + " object"


class _Shown:
    """``name(signature)`` for messages, formatted only when a message is built."""

    __slots__ = ("fn", "signature")

    def __init__(self, fn: object, signature: inspect.Signature) -> None:
        self.fn = fn
        self.signature = signature

    def __str__(self) -> str:
        return f"{_describe(self.fn)}{self.signature}"


def _fail(message: str, *, node: Optional[str], type_error: bool = False) -> NoReturn:
    cls = WorkflowDefinitionTypeError if type_error else WorkflowDefinitionError
    raise cls(message, rule="invalid_callable", node=node, site=call_site())


def is_async_callable(fn: object) -> bool:
    """``async def`` functions, and objects (or partials) whose ``__call__`` is ``async def``."""
    if inspect.iscoroutinefunction(fn):
        return True
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn):
        return False
    call = getattr(type(fn), "__call__", None)
    return call is not None and inspect.iscoroutinefunction(call)


def _is_generator_callable(fn: object) -> bool:
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        return True
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn):
        return False
    call = getattr(type(fn), "__call__", None)
    return call is not None and (inspect.isgeneratorfunction(call) or inspect.isasyncgenfunction(call))


def check_callable(
    fn: object,
    *,
    role: str,
    node: Optional[str],
    min_positional: int,
    max_positional: int,
    expects: str,
    allow_async: bool,
) -> Tuple[bool, int]:
    """Checks ``fn`` and returns ``(is_async, positional parameter count)``.

    ``role`` names the argument in messages (``"fn of python('echo')"``); ``expects`` describes the
    positional parameters it must take (``"the input WorkflowValue"``).
    """
    if not callable(fn):
        _fail(
            f"{role} must be a function, got {type(fn).__qualname__}: {fn!r:.80}. "
            f"Pass a function taking {expects}.",
            node=node,
            type_error=True,
        )
    if _is_generator_callable(fn):
        _fail(
            f"{role} must return its result, but {_describe(fn)} is a generator function (it uses "
            "'yield'); return the value instead of yielding it.",
            node=node,
        )
    is_async = is_async_callable(fn)
    if is_async and not allow_async:
        _fail(
            f"{role} must be synchronous, but {_describe(fn)} is declared with 'async def'; "
            "define it with a plain 'def' (do any awaiting inside the node function instead).",
            node=node,
        )
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as error:
        _fail(
            f"{role}: the parameters of {_describe(fn)} cannot be inspected ({error}); wrap it in a "
            f"function of your own taking {expects}.",
            node=node,
        )
    shown = _Shown(fn, signature)
    positional = []
    for parameter in signature.parameters.values():
        if parameter.kind == inspect.Parameter.VAR_POSITIONAL:
            _fail(f"{role} cannot declare *{parameter.name} ({shown}); it must take {expects}.", node=node)
        if parameter.kind == inspect.Parameter.VAR_KEYWORD:
            _fail(f"{role} cannot declare **{parameter.name} ({shown}); it must take {expects}.", node=node)
        if parameter.kind == inspect.Parameter.KEYWORD_ONLY and parameter.default is inspect.Parameter.empty:
            _fail(
                f"{role} cannot have the required keyword-only parameter {parameter.name!r} ({shown}), "
                f"because nothing passes it; give it a default or remove it. It must take {expects}.",
                node=node,
            )
        if parameter.kind in _POSITIONAL:
            if parameter.default is not inspect.Parameter.empty:
                _fail(
                    f"{role}: the positional parameter {parameter.name!r} of {shown} has a default "
                    f"value; remove the default. It must take {expects}.",
                    node=node,
                )
            positional.append(parameter)
    if not min_positional <= len(positional) <= max_positional:
        count = (
            str(min_positional) if min_positional == max_positional else f"{min_positional} or {max_positional}"
        )
        _fail(
            f"{role} must take {count} positional parameter{'s' if max_positional > 1 else ''} "
            f"({expects}), but {shown} takes {len(positional)}.",
            node=node,
        )
    return is_async, len(positional)

