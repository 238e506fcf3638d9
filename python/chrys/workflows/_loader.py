"""Loading a workflow in the worker: compile its files, run its entry file, find the built ``workflow``.

Every problem becomes a diagnostic in the shape of ``DiagnosticSchema`` (``packages/errors``), stage
``load``, with codes ``syntax_error``, ``load_error``, ``sdk_validation_error`` and ``missing_workflow``.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _tracebacks as tb
from ._names import with_article
from ._protocol import MAX_LOAD_DIAGNOSTICS


def diagnostic(code: str, message: str, **fields: Any) -> Dict[str, Any]:
    """A load-stage diagnostic with every field present (unknown ones ``None``)."""
    result: Dict[str, Any] = {
        "severity": "error",
        "code": code,
        "stage": "load",
        "message": message,
        "file": None,
        "line": None,
        "column": None,
        "end_line": None,
        "end_column": None,
        "node": None,
        "source_line": None,
        "notes": [],
        "hint": None,
        "traceback": None,
        "pointer": None,
    }
    result.update(fields)
    return result


def _at(position: Optional[tb.Position]) -> Dict[str, Any]:
    if position is None:
        return {}
    return {
        "file": position.file,
        "line": position.line,
        "column": position.column,
        "end_line": position.end_line,
        "end_column": position.end_column,
        "source_line": tb.source_line(position.file, position.line),
    }


def python_files(package_dir: str) -> List[str]:
    """Every ``.py`` file of a workflow folder, sorted; names starting with ``.`` and ``__pycache__`` skipped."""
    found: List[str] = []
    for root, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") and not name.startswith("."):
                path = os.path.join(root, name)
                if os.path.isfile(path):
                    found.append(path)
    return found


def syntax_diagnostic(error: BaseException, path: str, notes: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
    if isinstance(error, SyntaxError):
        position = tb.Position.of_syntax_error(error, path)
        message = f"{type(error).__name__}: {error.msg}"
        import traceback  # only failures need it (see _tracebacks)

        text = "".join(traceback.format_exception_only(type(error), error))
        fields = _at(position)
        if fields.get("source_line") is None and error.text:
            fields["source_line"] = error.text.rstrip("\r\n")
        return diagnostic("syntax_error", message, traceback=text, notes=notes or [], **fields)
    # Null bytes (ValueError before 3.12) or a file whose declared encoding cannot decode it.
    return diagnostic(
        "syntax_error",
        f"{type(error).__name__}: {error}",
        file=path,
        notes=notes or [],
        hint="Save the file as UTF-8 text (or fix its `# -*- coding: … -*-` declaration).",
    )


def compile_files(paths: List[str]) -> Tuple[List[Dict[str, Any]], bool]:
    """Compiles every file without running it; returns ``(syntax_error diagnostics, truncated)``."""
    problems: List[Dict[str, Any]] = []
    truncated = False
    for path in paths:
        try:
            with open(path, "rb") as handle:
                source = importlib.util.decode_source(handle.read())
            compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, UnicodeDecodeError, LookupError) as error:
            if len(problems) >= MAX_LOAD_DIAGNOSTICS:
                truncated = True
                break
            problems.append(syntax_diagnostic(error, path))
        except OSError as error:
            if len(problems) >= MAX_LOAD_DIAGNOSTICS:
                truncated = True
                break
            problems.append(
                diagnostic("load_error", f"{type(error).__name__}: {error}", file=path, hint="Check that the file can be read.")
            )
    return problems, truncated


class Loaded:
    """A workflow that loaded: its Definition manifest and the callables the engine invokes.

    ``definition`` is the built workflow's own manifest, not a copy (a copy costs as much as building a large
    workflow): it is only encoded and read, never changed.
    """

    def __init__(self, definition: Dict[str, Any], callables: Dict[str, Callable[..., Any]], module: Any) -> None:
        self.definition = definition
        self.callables = callables
        self.module = module


def _error_diagnostic(error: BaseException, entry: str, user: tb.UserFiles) -> Dict[str, Any]:
    from ._errors import WorkflowDefinitionError

    frames = [tb.Position.of_frame(frame) for frame in tb.user_frames(error.__traceback__, user)]
    trace = tb.format_user_traceback(error, user)

    if isinstance(error, WorkflowDefinitionError):
        site = error.site
        inner: Optional[tb.Position] = None
        outer = frames[:-1] if frames else []
        if isinstance(site, dict) and isinstance(site.get("file"), str):
            inner = tb.Position(
                os.path.abspath(site["file"]),
                site.get("line"),
                site.get("column"),
                site.get("end_line"),
                site.get("end_column"),
            )
            match = [i for i, f in enumerate(frames) if f.file == inner.file and f.line == inner.line]
            if match:
                inner.name = frames[match[-1]].name
                outer = frames[: match[-1]]
            else:
                # The site is a declaration made earlier (build() reports a node's declaration): the stack
                # of this exception is not how the site was reached, and the SDK's notes say where it was.
                outer = []
        elif frames:
            inner = frames[-1]
        notes = [
            {"message": str(note.get("message", "")), "file": note.get("file"), "line": note.get("line")}
            for note in (error.notes or [])
            if isinstance(note, dict)
        ]
        notes += tb.notes_for(outer, inner) if inner is not None else []
        fields = _at(inner) if inner is not None else {"file": entry}
        return diagnostic(
            "sdk_validation_error",
            str(error),
            node=error.node if isinstance(error.node, str) else None,
            notes=notes,
            traceback=trace,
            **fields,
        )

    if isinstance(error, SyntaxError) and error.filename and error.filename in user:
        # A module imported by the workflow does not compile.
        position = tb.Position.of_syntax_error(error, entry)
        return syntax_diagnostic(error, position.file, tb.notes_for(frames, position))

    if frames:
        inner = frames[-1]
        fields = _at(inner)
        notes = tb.notes_for(frames[:-1], inner)
    else:
        fields = {"file": entry}
        notes = []
    hint = None
    if isinstance(error, ImportError) and "relative import" in str(error):
        hint = (
            "The entry file is not part of a package, so relative imports such as `from .steps import x` "
            "do not work; the workflow's folder is first on sys.path, so write `from steps import x`."
        )
    elif isinstance(error, (SystemExit, KeyboardInterrupt)):
        hint = "Top-level code must not exit; put the work inside node functions."
    return diagnostic("load_error", tb.describe(error), notes=notes, traceback=trace, hint=hint, **fields)


LOAD_GC_THRESHOLD = 50_000
"""The cyclic collector's first threshold while the workflow module runs (Python's default is 700)."""


class _FewerCollections:
    """While the module runs, the cyclic garbage collector runs less often.

    Building a workflow allocates objects that all live on (nodes, edges, sites, handles), so every
    collection finds nothing to free, and a full one walks everything built so far: 3–7% of loading a graph of
    1,000–10,000 nodes. With the first threshold at ``LOAD_GC_THRESHOLD`` allocations instead of 700 the
    collector still runs, so garbage that top-level code makes in cycles is bounded. The thresholds are put
    back after the run, unless the module changed them itself.
    """

    __slots__ = ("saved", "raised")

    def __init__(self) -> None:
        self.saved = gc.get_threshold()
        self.raised = (max(self.saved[0], LOAD_GC_THRESHOLD), *self.saved[1:])
        gc.set_threshold(*self.raised)

    def restore(self) -> None:
        if gc.get_threshold() == self.raised:
            gc.set_threshold(*self.saved)


def load_workflow(
    entry: str, package_dir: Optional[str], sdk_root: str
) -> Tuple[Optional[Loaded], List[Dict[str, Any]], bool]:
    """Compiles and runs the workflow; returns ``(loaded or None, diagnostics, diagnostics_truncated)``.

    The workflow's folder (or a single file's directory) goes first on ``sys.path``. The entry file runs as a
    module named after its file (registered in ``sys.modules`` unless that name is taken).
    """
    from . import Workflow

    entry = os.path.abspath(entry)
    folder = os.path.abspath(package_dir) if package_dir else os.path.dirname(entry)
    if folder not in sys.path[:1]:
        sys.path.insert(0, folder)
    sys.argv = [entry]  # as if the file were run as a script
    user = tb.UserFiles(sdk_root, folder)

    problems, truncated = compile_files(python_files(folder) if package_dir else [entry])
    if problems:
        return None, problems, truncated

    name = os.path.splitext(os.path.basename(entry))[0]
    spec = importlib.util.spec_from_file_location(name, entry)
    if spec is None or spec.loader is None:
        return None, [diagnostic("load_error", f"cannot load {entry} as a Python module", file=entry)], False
    module = importlib.util.module_from_spec(spec)
    registered = name not in sys.modules
    if registered:
        sys.modules[name] = module
    collector = _FewerCollections()
    try:
        spec.loader.exec_module(module)
    except BaseException as error:  # noqa: B902 - SystemExit and KeyboardInterrupt are load errors too
        if registered and sys.modules.get(name) is module:
            del sys.modules[name]
        return None, [_error_diagnostic(error, entry, user)], False
    finally:
        collector.restore()

    missing_hint = (
        "Assign the built workflow to a top-level variable named `workflow`, for example `workflow = wf.build()`, "
        "outside any function or `if __name__ == \"__main__\":` block."
    )
    if "workflow" not in module.__dict__:
        return None, [diagnostic(
            "missing_workflow",
            "the module defines no top-level variable named `workflow`",
            file=entry,
            hint=missing_hint,
        )], False
    workflow = module.__dict__["workflow"]
    if not isinstance(workflow, Workflow):
        kind = type(workflow).__qualname__
        if kind == "WorkflowBuilder" or hasattr(workflow, "build"):
            message = f"`workflow` is {with_article(kind)}, not a built Workflow: call build() on it"
        else:
            message = f"`workflow` is {with_article(kind)}, not a Workflow built by WorkflowBuilder.build()"
        return None, [diagnostic("missing_workflow", message, file=entry, hint=missing_hint)], False
    return Loaded(workflow._shared_manifest(), dict(workflow._callables), module), [], False
