"""The checks of a declared callable read a plain function from its code object, without ``inspect``. This
compares every outcome (result, or exception class and message) with the ``inspect``-based checks, which the
module still uses for everything else: once with the fast path turned off, once against the rules restated
here from ``inspect.signature``."""

from __future__ import annotations

import functools
import inspect
import os
import re
import subprocess
import sys
import types
import unittest
from typing import Any, Callable, List, Optional, Tuple
from unittest import mock

from chrys.workflows import _callables
from chrys.workflows._callables import check_callable
from chrys.workflows._errors import WorkflowDefinitionError

from ._support import SDK_ROOT

# -- the callables -----------------------------------------------------------------------------------------


def one(value: Any) -> Any:
    return value


def zero() -> None:
    return None


def two(value: Any, ctx: Any) -> Any:
    return value


def three(a: Any, b: Any, c: Any) -> Any:
    return a


def positional_default(value: Any, ctx: Any = None) -> Any:
    return value


def star_args(*args: Any) -> Any:
    return args


def one_and_star_args(value: Any, *rest: Any) -> Any:
    return value


def star_kwargs(value: Any, **options: Any) -> Any:
    return value


def keyword_with_default(value: Any, *, limit: int = 3) -> Any:
    return value


def keyword_without_default(value: Any, *, limit: int) -> Any:
    return value


def keywords_mixed(value: Any, *, limit: int = 3, mode: str) -> Any:
    return value


def positional_only(value: Any, /) -> Any:
    return value


def positional_only_two(value: Any, ctx: Any, /) -> Any:
    return value


def positional_only_default(value: Any, ctx: Any = None, /) -> Any:
    return value


def positional_only_and_keyword(value: Any, /, ctx: Any, *, limit: int = 1) -> Any:
    return value


async def async_one(value: Any) -> Any:
    return value


async def async_two(value: Any, ctx: Any) -> Any:
    return value


async def async_star(*args: Any) -> Any:
    return args


def generator(value: Any) -> Any:
    yield value


async def async_generator(value: Any) -> Any:
    yield value


@types.coroutine
def generator_coroutine(value: Any) -> Any:
    yield value


def _decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


wrapped_one = _decorate(one)
wrapped_two = _decorate(two)
wrapped_async = _decorate(async_one)
wrapped_keyword = _decorate(keyword_without_default)


def with_signature(*args: Any, **kwargs: Any) -> Any:
    return args


with_signature.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [inspect.Parameter("value", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
)


def with_bad_signature(value: Any) -> Any:
    return value


with_bad_signature.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [inspect.Parameter("options", inspect.Parameter.VAR_KEYWORD)]
)


def tagged(value: Any) -> Any:
    return value


tagged.tag = "an unrelated attribute"  # type: ignore[attr-defined]


def tagged_default(value: Any, ctx: Any = None) -> Any:
    return value


tagged_default.tag = 1  # type: ignore[attr-defined]


def _closure() -> Callable[..., Any]:
    offset = 1

    def inner(value: Any) -> Any:
        return value + offset

    return inner


closure = _closure()


def _closure_with_keyword() -> Callable[..., Any]:
    offset = 1

    def inner(value: Any, *, scale: int) -> Any:
        return value * scale + offset

    return inner


closure_with_keyword = _closure_with_keyword()


class Holder:
    def method(self, value: Any) -> Any:
        return value

    def method_two(self, value: Any, ctx: Any) -> Any:
        return value

    def method_default(self, value: Any, ctx: Any = None) -> Any:
        return value

    async def async_method(self, value: Any) -> Any:
        return value

    def generator_method(self, value: Any) -> Any:
        yield value

    @staticmethod
    def static(value: Any) -> Any:
        return value

    @classmethod
    def klass(cls, value: Any) -> Any:
        return value


class Callable1:
    def __call__(self, value: Any) -> Any:
        return value


class CallableStar:
    def __call__(self, *args: Any) -> Any:
        return args


class AsyncCallable:
    async def __call__(self, value: Any) -> Any:
        return value


class GeneratorCallable:
    def __call__(self, value: Any) -> Any:
        yield value


class Constructed:
    def __init__(self, value: Any) -> None:
        self.value = value


HOLDER = Holder()

CALLABLES: List[Tuple[str, object]] = [
    ("plain def", one),
    ("lambda", lambda value: value),
    ("lambda with a default", lambda value, ctx=None: value),
    ("lambda taking nothing", lambda: None),
    ("no parameter", zero),
    ("two positional", two),
    ("three positional", three),
    ("positional default", positional_default),
    ("*args", star_args),
    ("positional and *args", one_and_star_args),
    ("**kwargs", star_kwargs),
    ("keyword-only with default", keyword_with_default),
    ("keyword-only without default", keyword_without_default),
    ("keyword-only mixed", keywords_mixed),
    ("positional-only", positional_only),
    ("positional-only two", positional_only_two),
    ("positional-only default", positional_only_default),
    ("positional-only and keyword", positional_only_and_keyword),
    ("async def", async_one),
    ("async def two", async_two),
    ("async def *args", async_star),
    ("generator", generator),
    ("async generator", async_generator),
    ("types.coroutine generator", generator_coroutine),
    ("functools.wraps", wrapped_one),
    ("functools.wraps two", wrapped_two),
    ("functools.wraps async", wrapped_async),
    ("functools.wraps keyword-only", wrapped_keyword),
    ("__signature__", with_signature),
    ("__signature__ **kwargs", with_bad_signature),
    ("unrelated attribute", tagged),
    ("unrelated attribute and default", tagged_default),
    ("nested closure", closure),
    ("nested closure keyword-only", closure_with_keyword),
    ("method", HOLDER.method),
    ("method two", HOLDER.method_two),
    ("method default", HOLDER.method_default),
    ("async method", HOLDER.async_method),
    ("generator method", HOLDER.generator_method),
    ("staticmethod", Holder.static),
    ("classmethod", Holder.klass),
    ("unbound method", Holder.method),
    ("partial", functools.partial(two, "bound")),
    ("partial of everything", functools.partial(one, "bound")),
    ("partial keyword", functools.partial(keyword_without_default, limit=2)),
    ("partial async", functools.partial(async_two, "bound")),
    ("callable object", Callable1()),
    ("callable object *args", CallableStar()),
    ("async callable object", AsyncCallable()),
    ("generator callable object", GeneratorCallable()),
    ("class", Constructed),
    ("builtin", len),
    ("builtin *args", print),
    ("builtin without signature", dict),
    ("not callable", 3),
]

# (min_positional, max_positional, allow_async): the roles of the builder, and a few more.
CONFIGS: List[Tuple[int, int, bool]] = [(1, 2, True), (1, 1, False), (0, 0, True), (2, 2, False), (0, 3, True)]

# -- running the checks --------------------------------------------------------------------------------------

Outcome = Tuple[Any, ...]


def run(fn: object, config: Tuple[int, int, bool]) -> Outcome:
    """What ``check_callable`` returns, or the class, message, rule and node of what it raises."""
    _callables._shapes.clear()  # a shape cached by an earlier run would hide the path under test
    minimum, maximum, allow_async = config
    try:
        result = check_callable(
            fn,
            role="fn of python('n')",
            node="n",
            min_positional=minimum,
            max_positional=maximum,
            expects="what the test expects",
            allow_async=allow_async,
        )
    except WorkflowDefinitionError as error:
        return ("error", type(error), str(error), error.rule, error.node)
    return ("ok", result)


def run_with_inspect(fn: object, config: Tuple[int, int, bool]) -> Outcome:
    """``run`` with the fast path turned off: every callable goes through ``inspect``, as before it."""
    with mock.patch.object(_callables, "_plain", lambda fn: False):
        return run(fn, config)


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _is_async(fn: object) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn):
        return False
    return inspect.iscoroutinefunction(getattr(type(fn), "__call__", None))


def _is_generator(fn: object) -> bool:
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        return True
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn):
        return False
    call = getattr(type(fn), "__call__", None)
    return inspect.isgeneratorfunction(call) or inspect.isasyncgenfunction(call)


def expected(fn: object, config: Tuple[int, int, bool]) -> Tuple[str, Any]:
    """The rules of the checks, restated from ``inspect``: ``("ok", (is_async, count))`` or
    ``("error", what)``."""
    minimum, maximum, allow_async = config
    if not callable(fn):
        return ("error", "not callable")
    if _is_generator(fn):
        return ("error", "generator")
    is_async = _is_async(fn)
    if is_async and not allow_async:
        return ("error", "async")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return ("error", "cannot be inspected")
    count = 0
    for parameter in signature.parameters.values():
        if parameter.kind in _POSITIONAL:
            if parameter.default is not inspect.Parameter.empty:
                return ("error", "positional default")
            count += 1
        elif parameter.kind == inspect.Parameter.VAR_POSITIONAL:
            return ("error", "*args")
        elif parameter.kind == inspect.Parameter.VAR_KEYWORD:
            return ("error", "**kwargs")
        elif parameter.default is inspect.Parameter.empty:
            return ("error", "keyword-only")
    if not minimum <= count <= maximum:
        return ("error", "count")
    return ("ok", (is_async, count))


_KINDS = [
    ("not callable", r"must be a function, got "),
    ("generator", r" is a generator function "),
    ("async", r"must be synchronous, but "),
    ("cannot be inspected", r"cannot be inspected "),
    ("positional default", r"the positional parameter '\w+' of .* has a default value"),
    ("*args", r"cannot declare \*\w+ \("),
    ("**kwargs", r"cannot declare \*\*\w+ \("),
    ("keyword-only", r"cannot have the required keyword-only parameter '\w+'"),
    ("count", r"must take [0-9 or]+ positional parameters? \(what the test expects\), but .* takes \d+\."),
]


def kind_of(outcome: Outcome) -> Tuple[str, Any]:
    if outcome[0] == "ok":
        return ("ok", outcome[1])
    kinds = [kind for kind, pattern in _KINDS if re.search(pattern, outcome[2])]
    assert len(kinds) == 1, (outcome, kinds)
    return ("error", kinds[0])


# -- the tests -----------------------------------------------------------------------------------------------


class FastPathMatchesInspect(unittest.TestCase):
    def test_the_table_covers_the_fast_path_and_the_other_one(self) -> None:
        plain = [name for name, fn in CALLABLES if _callables._plain(fn)]
        self.assertIn("plain def", plain)
        self.assertIn("lambda", plain)
        self.assertIn("nested closure", plain)
        self.assertIn("staticmethod", plain)
        for name in ("functools.wraps", "__signature__", "unrelated attribute", "method", "partial", "class"):
            self.assertNotIn(name, plain)

    def test_every_outcome_is_the_one_inspect_gives(self) -> None:
        for name, fn in CALLABLES:
            for config in CONFIGS:
                with self.subTest(callable=name, config=config):
                    fast = run(fn, config)
                    self.assertEqual(fast, run_with_inspect(fn, config))
                    self.assertEqual(kind_of(fast), expected(fn, config))

    def test_a_plain_function_without_problems_is_read_from_its_code(self) -> None:
        for name, fn in CALLABLES:
            if not _callables._plain(fn):
                continue
            with self.subTest(callable=name):
                outcome = run(fn, (0, 3, True))
                cached = _callables._shapes.get(fn)  # type: ignore[call-overload]
                if outcome[0] == "ok" or kind_of(outcome) == ("error", "count"):
                    self.assertIsNotNone(cached)
                    self.assertTrue(cached[3].inspected)
                    self.assertIsNone(cached[3].signature)  # never asked inspect for it

    def test_messages_of_a_plain_function_show_its_signature(self) -> None:
        outcome = run(three, (1, 2, True))
        self.assertEqual(outcome[0], "error")
        self.assertIn("but three(a: 'Any', b: 'Any', c: 'Any') -> 'Any' takes 3.", outcome[2])
        outcome = run(zero, (1, 1, False))
        self.assertIn("but zero() -> 'None' takes 0.", outcome[2])

    def test_a_function_is_checked_again_once_its_defaults_or_code_change(self) -> None:
        def changing(value: Any) -> Any:
            return value

        _callables._shapes.clear()
        self.assertEqual(self._check(changing), (False, 1))
        changing.__defaults__ = (None,)
        with self.assertRaisesRegex(WorkflowDefinitionError, "the positional parameter 'value' of .* has a default"):
            self._check(changing)
        changing.__defaults__ = None
        self.assertEqual(self._check(changing), (False, 1))
        changing.__code__ = two.__code__
        self.assertEqual(self._check(changing), (False, 2))
        changing.__code__ = keyword_with_default.__code__
        with self.assertRaisesRegex(WorkflowDefinitionError, "required keyword-only parameter 'limit'"):
            self._check(changing)
        changing.__kwdefaults__ = {"limit": 3}
        self.assertEqual(self._check(changing), (False, 1))

    @unittest.skipUnless(sys.version_info >= (3, 12), "inspect.markcoroutinefunction is new in 3.12")
    def test_a_function_marked_as_a_coroutine_function_counts_as_async(self) -> None:
        def marked(value: Any) -> Any:
            return value

        inspect.markcoroutinefunction(marked)  # type: ignore[attr-defined]
        self.assertFalse(_callables._plain(marked))
        self.assertEqual(run(marked, (1, 2, True)), ("ok", (True, 1)))
        outcome = run(marked, (1, 1, False))
        self.assertEqual(outcome[0], "error")
        self.assertIn("is declared with 'async def'", outcome[2])
        self.assertEqual(outcome, run_with_inspect(marked, (1, 1, False)))

    def _check(self, fn: object) -> Optional[Tuple[bool, int]]:
        return check_callable(
            fn, role="fn", node=None, min_positional=0, max_positional=3, expects="x", allow_async=True
        )


class ImportsStayLight(unittest.TestCase):
    def _modules_after(self, code: str) -> List[str]:
        """The names among inspect and traceback in ``sys.modules`` after running ``code`` in a fresh Python
        (without ``site``, whose ``.pth`` files may import anything)."""
        script = (
            "import sys\n"
            f"sys.path.insert(0, {SDK_ROOT!r})\n"
            f"{code}\n"
            "print(' '.join(name for name in ('inspect', 'traceback') if name in sys.modules))\n"
        )
        out = subprocess.run(
            [sys.executable, "-S", "-c", script],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout.split()

    def test_importing_the_sdk_imports_neither_inspect_nor_traceback(self) -> None:
        self.assertEqual(self._modules_after(""), [])  # the interpreter alone imports neither
        self.assertEqual(self._modules_after("import chrys.workflows"), [])
        self.assertEqual(self._modules_after("import chrys.workflows._serve"), [])

    def test_declaring_plain_functions_does_not_import_inspect(self) -> None:
        code = (
            "from chrys.workflows import WorkflowBuilder\n"
            "def echo(value):\n    return value\n"
            "async def later(value, ctx):\n    return value\n"
            "def keep(value):\n    return True\n"
            "wf = WorkflowBuilder('T')\n"
            "a = wf.python('a', echo)\n"
            "b = wf.python('b', later)\n"
            "c = wf.python('c', lambda value: value)\n"
            "wf.start(a)\n"
            "wf.edge(a, b, when=keep)\n"
            "wf.edge(b, c)\n"
            "wf.output(c)\n"
            "wf.build()\n"
        )
        self.assertEqual(self._modules_after(code), [])


if __name__ == "__main__":
    unittest.main()
