"""Checks the signature of a callable when it is declared (``fn``, ``when``, switch conditions, ``until``,
``combine`` and a loop's ``body``), so a wrong one fails at the author's call rather than mid-run."""

from __future__ import annotations

import weakref
from types import FunctionType
from typing import TYPE_CHECKING, NoReturn, Optional, Tuple

from ._errors import WorkflowDefinitionError, WorkflowDefinitionTypeError
from ._sites import call_site

if TYPE_CHECKING:
    import inspect

# ``inspect`` is imported only for callables that are not plain functions, and for error messages: it costs
# ~4 ms of every worker start (with ast, dis and tokenize), and a plain function tells all the checks need
# through its code object. "Plain" means a ``def`` or ``lambda`` with nothing set on it: a decorator's
# ``__wrapped__`` or ``__signature__`` (which ``inspect.signature`` follows) or a coroutine mark
# (``inspect.markcoroutinefunction``) lives in the function's ``__dict__``.
_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08
_CO_GENERATOR = 0x20
_CO_COROUTINE = 0x80
_CO_ASYNC_GENERATOR = 0x200


def _plain(fn: object) -> bool:
    return type(fn) is FunctionType and not fn.__dict__


def _describe(fn: object) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if isinstance(name, str) and name:
        return name
    return type(fn).__qualname__ + " object"


class _Shown:
    """``name(signature)`` for messages, formatted only when a message is built."""

    __slots__ = ("fn", "signature")

    def __init__(self, fn: object, signature: Optional[inspect.Signature]) -> None:
        self.fn = fn
        self.signature = signature

    def __str__(self) -> str:
        if self.signature is None:  # a plain function, read from its code: only messages need the signature
            import inspect

            self.signature = inspect.signature(self.fn)  # type: ignore[arg-type]
        return f"{_describe(self.fn)}{self.signature}"


def _fail(message: str, *, node: Optional[str], type_error: bool = False) -> NoReturn:
    cls = WorkflowDefinitionTypeError if type_error else WorkflowDefinitionError
    raise cls(message, rule="invalid_callable", node=node, site=call_site())


def is_async_callable(fn: object) -> bool:
    """``async def`` functions, and objects (or partials) whose ``__call__`` is ``async def``."""
    if _plain(fn):
        return bool(fn.__code__.co_flags & _CO_COROUTINE)  # type: ignore[attr-defined]
    import inspect

    if inspect.iscoroutinefunction(fn):
        return True
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn):
        return False
    call = getattr(type(fn), "__call__", None)
    return call is not None and inspect.iscoroutinefunction(call)


def _is_generator_callable(fn: object) -> bool:
    if _plain(fn):
        return bool(fn.__code__.co_flags & (_CO_GENERATOR | _CO_ASYNC_GENERATOR))  # type: ignore[attr-defined]
    import inspect

    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        return True
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn):
        return False
    call = getattr(type(fn), "__call__", None)
    return call is not None and (inspect.isgeneratorfunction(call) or inspect.isasyncgenfunction(call))


class _Shape:
    """What the checks need to know of one callable, whatever role it is declared in.

    The signature is inspected only when a check needs it (a generator fails before that), and then once.
    """

    __slots__ = ("is_generator", "is_async", "inspected", "signature", "error", "problem", "positional")

    def __init__(self, fn: object) -> None:
        self.is_generator = _is_generator_callable(fn)
        self.is_async = is_async_callable(fn)
        self.inspected = False
        self.signature: Optional[inspect.Signature] = None
        self.error: Optional[Exception] = None  # why the signature cannot be inspected
        self.problem: Optional[inspect.Parameter] = None  # the first parameter no caller can fill
        self.positional = 0

    def inspect(self, fn: object) -> None:
        # Fields are set only once everything is known: two threads may inspect the same shape at once.
        if _plain(fn) and self._read_code(fn):  # type: ignore[arg-type]
            return
        import inspect

        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as error:
            self.error = error
            self.inspected = True
            return
        problem = None
        positional = 0
        positional_kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for parameter in signature.parameters.values():
            kind = parameter.kind
            if kind in positional_kinds:
                if parameter.default is not inspect.Parameter.empty:
                    problem = parameter
                    break
                positional += 1
            elif kind != inspect.Parameter.KEYWORD_ONLY or parameter.default is inspect.Parameter.empty:
                problem = parameter  # *args, **kwargs or a required keyword-only parameter
                break
        self.problem = problem
        self.positional = positional
        self.signature = signature
        self.inspected = True

    def _read_code(self, fn: FunctionType) -> bool:
        """The checks of ``inspect`` from a plain function's code, when no parameter is a problem (else
        ``False``: ``inspect`` then finds the parameter a message names). The signature is left to messages."""
        code = fn.__code__
        if fn.__defaults__ or code.co_flags & (_CO_VARARGS | _CO_VARKEYWORDS):
            return False
        keyword_only = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
        defaults = fn.__kwdefaults__ or {}
        if any(name not in defaults for name in keyword_only):
            return False
        self.positional = code.co_argcount
        self.inspected = True
        return True


# Plain functions are inspected once however many declarations use them: a workflow of 10,000 nodes sharing
# one function would otherwise pay for inspect.signature (tens of µs) 10,000 times. An entry remembers the
# code and defaults it was read from, so replacing them gets the function inspected again; attributes set by
# decorators (``__wrapped__``, ``__signature__``) are expected not to change after the first declaration.
_shapes: weakref.WeakKeyDictionary[FunctionType, Tuple[object, object, object, _Shape]] = weakref.WeakKeyDictionary()


def _shape_of(fn: object) -> _Shape:
    if type(fn) is not FunctionType:
        return _Shape(fn)  # methods are new objects at each access; partials and other objects are rare
    known = _shapes.get(fn)
    if known is not None and known[0] is fn.__code__ and known[1] is fn.__defaults__ and known[2] is fn.__kwdefaults__:
        return known[3]
    shape = _Shape(fn)
    _shapes[fn] = (fn.__code__, fn.__defaults__, fn.__kwdefaults__, shape)
    return shape


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
    shape = _shape_of(fn)
    if shape.is_generator:
        _fail(
            f"{role} must return its result, but {_describe(fn)} is a generator function (it uses "
            "'yield'); return the value instead of yielding it.",
            node=node,
        )
    if shape.is_async and not allow_async:
        _fail(
            f"{role} must be synchronous, but {_describe(fn)} is declared with 'async def'; "
            "define it with a plain 'def' (do any awaiting inside the node function instead).",
            node=node,
        )
    if not shape.inspected:
        shape.inspect(fn)
    signature = shape.signature  # None for a plain function read from its code (see _Shape._read_code)
    if shape.error is not None:
        _fail(
            f"{role}: the parameters of {_describe(fn)} cannot be inspected ({shape.error}); wrap it in a "
            f"function of your own taking {expects}.",
            node=node,
        )
    problem = shape.problem
    if problem is not None:
        import inspect

        shown = _Shown(fn, signature)
        if problem.kind == inspect.Parameter.VAR_POSITIONAL:
            _fail(f"{role} cannot declare *{problem.name} ({shown}); it must take {expects}.", node=node)
        if problem.kind == inspect.Parameter.VAR_KEYWORD:
            _fail(f"{role} cannot declare **{problem.name} ({shown}); it must take {expects}.", node=node)
        if problem.kind == inspect.Parameter.KEYWORD_ONLY:
            _fail(
                f"{role} cannot have the required keyword-only parameter {problem.name!r} ({shown}), "
                f"because nothing passes it; give it a default or remove it. It must take {expects}.",
                node=node,
            )
        _fail(
            f"{role}: the positional parameter {problem.name!r} of {shown} has a default "
            f"value; remove the default. It must take {expects}.",
            node=node,
        )
    positional = shape.positional
    if not min_positional <= positional <= max_positional:
        count = (
            str(min_positional) if min_positional == max_positional else f"{min_positional} or {max_positional}"
        )
        _fail(
            f"{role} must take {count} positional parameter{'s' if max_positional > 1 else ''} "
            f"({expects}), but {_Shown(fn, signature)} takes {positional}.",
            node=node,
        )
    return shape.is_async, positional
