"""The built-in workflows shipped in ``packages/engine/builtin/``: their definitions, and real results of their
callables on sample inputs, empty and bad input included.

Each file is loaded with ``runpy`` (no bytecode is written next to it). ``GraphRun`` then walks a built
definition the way the scheduler does for these graphs (start, edges, ``when`` conditions, ``switch`` cases
in order, joins with their ``combine``, loops with ``until``, skips and the default merge) and calls the
workflow's own callables from ``workflow._callables``. Every value a callable returns is checked against
the data rules and sent through the same JSON round trip as the wire, so the next node sees what it would
see in a run.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import runpy
import shutil
import sys
import tempfile
import unittest
from typing import Any, Callable, Dict, List, Optional, Tuple

_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)

from chrys.workflows import NodeContext, SourceValue, Workflow, WorkflowValue  # noqa: E402
from chrys.workflows._values import check_value, from_wire, to_wire  # noqa: E402

REPO_ROOT = os.path.dirname(_PYTHON_DIR)
ENGINE_DIR = os.path.join(REPO_ROOT, "packages", "engine")
BUILTIN_DIR = os.path.join(ENGINE_DIR, "builtin")
BUILTIN_IDS = ("diff-summary", "echo", "json-format", "outline", "todo-scan", "word-stats")

_STDLIB_FALLBACK = frozenset(
    ("__future__", "collections", "json", "math", "os", "re", "stat", "typing", "string", "textwrap")
)


def load(workflow_id: str) -> Workflow:
    namespace = runpy.run_path(os.path.join(BUILTIN_DIR, f"{workflow_id}.py"), run_name=f"builtin_{workflow_id}")
    workflow = namespace.get("workflow")
    assert isinstance(workflow, Workflow), f"{workflow_id}.py has no module-level workflow built by build()"
    return workflow


class Recorder:
    """What the engine injects into a ``NodeContext``: here it keeps the emitted messages."""

    def __init__(self) -> None:
        self.messages: List[str] = []

    def emit(self, text: str) -> None:
        self.messages.append(text)

    def ask(self, questions: List[Dict[str, Any]]) -> Any:
        raise AssertionError("built-in workflows never ask: the CLI cannot answer")


def wire(result: object) -> WorkflowValue:
    """A returned value as the next node receives it: checked, then through JSON like the wire."""
    value = check_value(result)
    encoded = json.dumps(to_wire(value), ensure_ascii=False, allow_nan=False)
    return from_wire(json.loads(encoded))


class NodeFailed(Exception):
    """A node raised: the run stops there, as the scheduler's `fail` policy (the CLI's) does."""


class Run:
    def __init__(self) -> None:
        self.results: Dict[str, WorkflowValue] = {}
        self.executed: List[str] = []
        self.iterations: Dict[str, int] = {}
        self.outputs: List[Tuple[str, WorkflowValue]] = []
        self.emitted: List[str] = []
        self.failure: Optional[Tuple[str, BaseException]] = None
        """The node that raised and what it raised; the run's outcome is then node_failed."""

    def failed(self, node_id: str) -> str:
        """The message of the ``ValueError`` that ``node_id`` raised, ending the run without outputs."""
        assert self.failure is not None, f"the run did not fail; outputs: {[found for found, _ in self.outputs]}"
        found, error = self.failure
        assert found == node_id, f"{found!r} failed, not {node_id!r}: {error!r}"
        assert type(error) is ValueError, f"{node_id} raised {error!r}, not a ValueError"
        assert self.outputs == [], f"a failed run has no outputs, got {[found for found, _ in self.outputs]}"
        return str(error)

    def output(self, node_id: str) -> WorkflowValue:
        for found, value in self.outputs:
            if found == node_id:
                return value
        raise AssertionError(f"no output from {node_id!r}; outputs: {[found for found, _ in self.outputs]}")


class GraphRun:
    """Runs a built workflow's graph with its real callables (sequentially, in topological order)."""

    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow
        self.manifest = workflow.definition.to_manifest()
        self.nodes = {node["id"]: node for node in self.manifest["nodes"]}
        self.callables: Dict[str, Callable[..., Any]] = workflow._callables

    def __call__(self, text: str) -> Run:
        run = Run()
        try:
            self._scope(None, self.manifest["start"], WorkflowValue(text), run)
        except NodeFailed:
            return run
        run.outputs = [(node_id, run.results[node_id]) for node_id in self.manifest["outputs"] if node_id in run.results]
        return run

    def _scope(self, scope: Optional[str], entry: str, value: WorkflowValue, run: Run) -> None:
        ids = [node["id"] for node in self.manifest["nodes"] if node["scope"] == scope]
        edges = [edge for edge in self.manifest["edges"] if edge["scope"] == scope]
        pending = {node_id: 0 for node_id in ids}
        for edge in edges:
            pending[edge["target"]] += 1
        inbox: Dict[str, List[Tuple[str, WorkflowValue]]] = {node_id: [] for node_id in ids}
        inbox[entry].append(("", value))
        order = {(edge["source"], edge["target"]): index for index, edge in enumerate(edges)}  # merge order
        ready = [node_id for node_id in ids if pending[node_id] == 0]
        while ready:
            node_id = ready.pop(0)
            received = inbox[node_id]
            result = self._node(node_id, received, run) if received else None
            if result is not None:
                run.results[node_id] = result
            for edge in self._passing(node_id, result, edges):
                inbox[edge["target"]].append((node_id, result))  # type: ignore[arg-type]
                inbox[edge["target"]].sort(key=lambda item: order.get((item[0], edge["target"]), -1))
            for edge in edges:
                if edge["source"] == node_id:
                    pending[edge["target"]] -= 1
                    if pending[edge["target"]] == 0:
                        ready.append(edge["target"])

    def _passing(self, node_id: str, result: Optional[WorkflowValue], edges: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        if result is None:
            return []
        outgoing = [edge for edge in edges if edge["source"] == node_id]
        passing = []
        cases = sorted(
            (edge for edge in outgoing if edge["condition"] and edge["condition"]["kind"] == "case"),
            key=lambda edge: edge["condition"]["index"],
        )
        if cases:
            chosen = None
            for edge in cases:
                if self._condition(edge, result):
                    chosen = edge
                    break
            if chosen is None:
                chosen = next(edge for edge in outgoing if edge["condition"] and edge["condition"]["kind"] == "default")
            passing.append(chosen)
        for edge in outgoing:
            if edge["condition"] is None:
                passing.append(edge)
            elif edge["condition"]["kind"] == "when" and self._condition(edge, result):
                passing.append(edge)
        return passing

    def _condition(self, edge: Dict[str, Any], value: WorkflowValue) -> bool:
        decision = self.callables[f"edge:{edge['source']}->{edge['target']}"](value)
        assert isinstance(decision, bool), f"condition of {edge['source']}->{edge['target']} returned {decision!r}"
        return decision

    def _node(self, node_id: str, received: List[Tuple[str, WorkflowValue]], run: Run) -> Optional[WorkflowValue]:
        node = self.nodes[node_id]
        run.executed.append(node_id)
        if node["kind"] == "join":
            if node["has_combine"]:
                order = {source: index for index, source in enumerate(node["sources"])}
                sources = [
                    SourceValue(source, f"{source}@iter#1", value)
                    for source, value in sorted(received, key=lambda item: order[item[0]])
                ]
                return wire(self.callables[f"combine:{node_id}"](sources))
            return self._merge(received)
        value = self._merge(received)
        if node["kind"] == "loop":
            return self._loop(node, value, run)
        assert node["kind"] == "python", f"{node_id} is a {node['kind']} node"
        fn = self.callables[f"node:{node_id}"]
        recorder = Recorder()
        args = (value, NodeContext(recorder)) if node["takes_context"] else (value,)
        try:
            result = fn(*args)
            if node["is_async"]:
                result = asyncio.run(result)
        except Exception as error:
            run.emitted.extend(recorder.messages)
            run.failure = (node_id, error)
            raise NodeFailed(node_id) from error
        run.emitted.extend(recorder.messages)
        return wire(result)

    def _merge(self, received: List[Tuple[str, WorkflowValue]]) -> WorkflowValue:
        if len(received) == 1:
            return received[0][1]
        return WorkflowValue("\n\n".join(f"## {source}\n{value.text}" for source, value in received))

    def _loop(self, node: Dict[str, Any], value: WorkflowValue, run: Run) -> WorkflowValue:
        until = self.callables[f"until:{node['id']}"]
        for iteration in range(1, node["max_iterations"] + 1):
            run.iterations[node["id"]] = iteration
            self._scope(node["id"], node["entry"], value, run)
            assert node["exit"] in run.results, f"loop {node['id']}: no value reached the exit (loop_no_value)"
            value = run.results.pop(node["exit"])
            stop = until(value)
            assert isinstance(stop, bool), f"until of {node['id']} returned {stop!r}"
            if stop:
                return value
        assert node["on_exhausted"] == "continue", f"loop {node['id']} exhausted (loop_exhausted)"
        return value


class Definitions(unittest.TestCase):
    """What every built-in must be: a single file named after its ID, Python nodes only, standard library
    only, documented, with a descriptive title and description and declared outputs."""

    def test_the_folder_holds_exactly_the_listed_workflows(self) -> None:
        files = sorted(name[:-3] for name in os.listdir(BUILTIN_DIR) if name.endswith(".py"))
        self.assertEqual(files, sorted(BUILTIN_IDS))
        for name in os.listdir(BUILTIN_DIR):
            path = os.path.join(BUILTIN_DIR, name)
            self.assertFalse(os.path.islink(path), f"{name} is a link")
            self.assertFalse(name.startswith((".", "_")), f"{name} would be ignored by discovery")
            self.assertTrue(os.path.isfile(path), f"{name}: built-in workflows are single files only")

    def test_each_builds_with_python_nodes_only(self) -> None:
        for workflow_id in BUILTIN_IDS:
            with self.subTest(workflow_id):
                definition = load(workflow_id).definition
                self.assertTrue(definition.title.strip())
                self.assertGreater(len(definition.description or ""), 40, "a description saying what it does")
                self.assertGreaterEqual(len(definition.outputs), 1)
                kinds = {node.kind for node in definition.nodes}
                self.assertNotIn("agent", kinds, "built-ins run without a model")
                self.assertLessEqual(kinds, {"python", "join", "loop"})
                for node in definition.nodes:
                    if node.kind == "python":
                        self.assertIsNotNone(node.timeout, f"{node.id}: a built-in node has a deadline")

    def test_each_has_a_docstring_saying_what_it_expects(self) -> None:
        for workflow_id in BUILTIN_IDS:
            with self.subTest(workflow_id):
                with open(os.path.join(BUILTIN_DIR, f"{workflow_id}.py"), encoding="utf-8") as handle:
                    tree = ast.parse(handle.read())
                docstring = ast.get_docstring(tree) or ""
                self.assertRegex(docstring, r"\bInput\b", "the docstring says what input it expects")
                self.assertIn(f"icode workflow run {workflow_id} --input", docstring)
                self.assertTrue(
                    any(
                        isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
                        for statement in tree.body
                    ),
                    "from __future__ import annotations keeps annotations unevaluated on Python 3.9",
                )

    def test_each_imports_the_standard_library_only(self) -> None:
        stdlib = getattr(sys, "stdlib_module_names", _STDLIB_FALLBACK)
        for workflow_id in BUILTIN_IDS:
            with self.subTest(workflow_id):
                with open(os.path.join(BUILTIN_DIR, f"{workflow_id}.py"), encoding="utf-8") as handle:
                    tree = ast.parse(handle.read())
                modules = set()
                for statement in ast.walk(tree):
                    if isinstance(statement, ast.Import):
                        modules.update(alias.name.split(".")[0] for alias in statement.names)
                    elif isinstance(statement, ast.ImportFrom):
                        modules.add((statement.module or "").split(".")[0])
                self.assertIn("chrys", modules)
                self.assertLessEqual(modules - {"chrys"}, set(stdlib) | {"__future__"})

    def test_readme_lists_each_with_an_example_command(self) -> None:
        with open(os.path.join(BUILTIN_DIR, "README.md"), encoding="utf-8") as handle:
            readme = handle.read()
        listed = set(re.findall(r"^\| `([a-z0-9-]+)` *\|", readme, re.MULTILINE))
        self.assertEqual(listed, set(BUILTIN_IDS))
        for workflow_id in BUILTIN_IDS:
            self.assertIn(f"icode workflow run {workflow_id} --input", readme)

    def test_the_engine_package_ships_the_folder(self) -> None:
        with open(os.path.join(ENGINE_DIR, "package.json"), encoding="utf-8") as handle:
            manifest = json.load(handle)
        self.assertIn("builtin", manifest["files"])


class Echo(unittest.TestCase):
    def setUp(self) -> None:
        self.workflow = load("echo")
        self.run_graph = GraphRun(self.workflow)

    def test_definition(self) -> None:
        definition = self.workflow.definition
        self.assertEqual(definition.title, "Echo")
        self.assertEqual(definition.start, "echo")
        self.assertEqual(definition.outputs, ("echo",))

    def test_returns_the_input_unchanged_with_its_size(self) -> None:
        text = "Grüße\r\nzweite Zeile 🎉"
        value = self.run_graph(text).output("echo")
        self.assertEqual(value.text, text)
        self.assertEqual(value.data, {"characters": 21, "lines": 2, "utf8_bytes": 26, "empty": False})

    def test_counts_lines_like_word_stats(self) -> None:
        texts = ("a", "a\n", "a\r\nb\rc", "\n\n", "a\u2028b")
        counts = {text: self.run_graph(text).output("echo").data["lines"] for text in texts}
        self.assertEqual(counts, {"a": 1, "a\n": 1, "a\r\nb\rc": 3, "\n\n": 2, "a\u2028b": 1})

    def test_empty_input(self) -> None:
        value = self.run_graph("").output("echo")
        self.assertEqual(value.text, "")
        self.assertEqual(value.data, {"characters": 0, "lines": 0, "utf8_bytes": 0, "empty": True})


class WordStats(unittest.TestCase):
    def setUp(self) -> None:
        self.workflow = load("word-stats")
        self.run_graph = GraphRun(self.workflow)

    def test_definition_fans_out_and_joins_with_combine(self) -> None:
        definition = self.workflow.definition
        self.assertEqual(definition.title, "Word statistics")
        self.assertEqual(definition.outputs, ("report",))
        join = definition.node("join:report")
        self.assertEqual(join.kind, "join")
        self.assertTrue(join.has_combine)
        self.assertEqual(join.sources, ["count_words", "count_lines", "count_characters", "top_words"])
        fan_out = sorted(edge.target for edge in definition.edges if edge.source == "prepare")
        self.assertEqual(fan_out, sorted(join.sources))

    def test_counts_a_text(self) -> None:
        text = "The engine runs workflows.\r\nWorkflows run nodes; nodes don't share state.\r\n\r\n42 engines\r\n"
        run = self.run_graph(text)
        self.assertEqual(
            run.executed,
            ["prepare", "count_words", "count_lines", "count_characters", "top_words", "join:report", "report"],
        )
        data = run.output("report").data
        self.assertFalse(data["empty"])
        self.assertEqual(data["words"]["total"], 13)
        self.assertEqual(data["words"]["unique"], 11)
        self.assertEqual(data["words"]["longest"], "workflows")
        self.assertEqual(data["lines"], {"total": 4, "non_blank": 3, "longest": 45})
        normalised = text.replace("\r\n", "\n")
        self.assertEqual(data["characters"]["total"], len(normalised))
        self.assertEqual(data["characters"]["non_whitespace"], len("".join(normalised.split())))
        self.assertEqual(
            data["top_words"][:3],
            [{"word": "nodes", "count": 2}, {"word": "workflows", "count": 2}, {"word": "engine", "count": 1}],
        )
        self.assertNotIn("the", [item["word"] for item in data["top_words"]])
        self.assertNotIn("42", [item["word"] for item in data["top_words"]])
        text_out = run.output("report").text
        self.assertIn("Words: 13 (11 unique", text_out)
        self.assertIn("Most frequent words: nodes (2), workflows (2), engine (1)", text_out)

    def test_counts_non_ascii_words_and_bytes(self) -> None:
        data = self.run_graph("café Müller naïve café — 東京").output("report").data
        self.assertEqual(data["words"]["total"], 5)
        self.assertEqual(data["top_words"][0], {"word": "café", "count": 2})
        self.assertEqual(data["characters"]["utf8_bytes"], len("café Müller naïve café — 東京".encode()))

    def test_words_join_across_inner_apostrophes_and_hyphens(self) -> None:
        data = self.run_graph("A well-known e-mail isn\u2019t spam -- it's mail.").output("report").data
        self.assertEqual(data["words"]["total"], 7)
        self.assertEqual(
            [item["word"] for item in data["top_words"]], ["e-mail", "isn't", "mail", "spam", "well-known"]
        )

    def test_limits_the_frequent_words_to_ten(self) -> None:
        text = " ".join(f"word{index} " * (20 - index) for index in range(15))
        top = self.run_graph(text).output("report").data["top_words"]
        self.assertEqual(len(top), 10)
        self.assertEqual(top[0], {"word": "word0", "count": 20})

    def test_empty_and_blank_input_fail_the_run_saying_there_is_nothing_to_count(self) -> None:
        for text in ("", "  \n\t\n", "\ufeff\r\n"):
            with self.subTest(repr(text)):
                run = self.run_graph(text)
                message = run.failed("prepare")
                self.assertIn("The input is empty: there is nothing to count.", message)
                self.assertIn('icode workflow run word-stats --input "$(cat notes.txt)"', message)
                self.assertEqual(run.executed, ["prepare"], "no branch runs")

    def test_punctuation_only_counts_characters_but_no_words(self) -> None:
        value = self.run_graph("!!! ??? ...").output("report")
        self.assertFalse(value.data["empty"])
        self.assertEqual(value.data["words"]["total"], 0)
        self.assertEqual(value.data["characters"]["non_whitespace"], 9)
        self.assertIn("Most frequent words: none", value.text)

    def test_combine_keys_each_branch_whatever_the_order(self) -> None:
        combine = self.workflow._callables["combine:join:report"]
        lines = WorkflowValue("2 lines", {"total": 2, "non_blank": 2, "longest": 3})
        words = WorkflowValue("1 words", {"total": 1, "unique": 1, "average_length": 3.0, "longest": "abc"})
        merged = combine([SourceValue("count_lines", "count_lines@iter#1", lines), SourceValue("count_words", "w", words)])
        self.assertEqual(merged.data, {"lines": lines.data, "words": words.data})
        self.assertEqual(merged.text, "2 lines\n1 words")


DIFF = """\
commit 5d1c0ffee
Author: Dev <dev@example.com>

    Add the app

diff --git a/app.py b/app.py
new file mode 100644
index 0000000..da65286
--- /dev/null
+++ b/app.py
@@ -0,0 +1,6 @@
+import os
+def f():
+    print("debug here")
+    breakpoint()
+    # TODO: remove this
+    password = "hunter2hunter2"
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-old
diff --git a/img.bin b/img.bin
index bdc955b..8835708 100644
Binary files a/img.bin and b/img.bin differ
diff --git a/keep.txt b/keep.txt
--- a/keep.txt
+++ b/keep.txt
@@ -1,3 +1,4 @@
 a
--- not a header
+--- b
 c
+d
@@ -10,2 +11,2 @@ def later():
-x
+console.log(x)
 y
\\ No newline at end of file
diff --git a/mode.sh b/mode.sh
old mode 100644
new mode 100755
diff --git a/move.txt b/moved.txt
similarity index 100%
rename from move.txt
rename to moved.txt
diff --git a/sp ace/f f.txt b/sp ace/f f.txt
--- a/sp ace/f f.txt\t
+++ b/sp ace/f f.txt\t
@@ -1 +1,2 @@
 hi
+hello
diff --git a/web/t.test.ts b/web/t.test.ts
new file mode 100644
--- /dev/null
+++ b/web/t.test.ts
@@ -0,0 +1,3 @@
+it.only("works", () => { console.log(x); });
+const k = "AKIAABCDEFGHIJKLMNOP";
+debugger;
"""


class DiffSummary(unittest.TestCase):
    def setUp(self) -> None:
        self.workflow = load("diff-summary")
        self.run_graph = GraphRun(self.workflow)

    def test_definition_switches_then_joins_two_branches(self) -> None:
        definition = self.workflow.definition
        self.assertEqual(definition.title, "Diff summary")
        self.assertEqual(definition.outputs, ("report",))
        conditions = {(edge.source, edge.target): edge.condition for edge in definition.edges}
        self.assertEqual(conditions[("parse", "summarise_files")], {"kind": "case", "index": 0})
        self.assertEqual(conditions[("parse", "explain")], {"kind": "default"})
        self.assertEqual(conditions[("parse", "find_suspicious")], {"kind": "when"})
        join = definition.node("join:report")
        self.assertEqual((join.sources, join.has_combine), (["summarise_files", "find_suspicious"], True))

    def test_summarises_a_git_diff(self) -> None:
        run = self.run_graph(DIFF)
        self.assertEqual([node for node, _ in run.outputs], ["report"])
        self.assertNotIn("explain", run.executed)
        data = run.output("report").data
        files = {entry["path"]: entry for entry in data["files"]}
        self.assertEqual(
            [entry["path"] for entry in data["files"]],
            ["app.py", "gone.txt", "img.bin", "keep.txt", "mode.sh", "moved.txt", "sp ace/f f.txt", "web/t.test.ts"],
        )
        self.assertEqual(files["app.py"], {**files["app.py"], "status": "added", "added": 6, "removed": 0})
        self.assertEqual((files["gone.txt"]["status"], files["gone.txt"]["removed"]), ("deleted", 1))
        self.assertTrue(files["img.bin"]["binary"])
        self.assertEqual((files["keep.txt"]["added"], files["keep.txt"]["removed"]), (3, 2))
        self.assertEqual(files["mode.sh"]["status"], "mode changed")
        self.assertEqual((files["moved.txt"]["status"], files["moved.txt"]["old_path"]), ("renamed", "move.txt"))
        self.assertEqual(files["sp ace/f f.txt"]["added"], 1)
        self.assertEqual(data["totals"], {"files": 8, "added": 13, "removed": 3})

    def test_flags_suspicious_additions_with_new_line_numbers(self) -> None:
        data = self.run_graph(DIFF).output("report").data
        found = [(item["file"], item["line"], item["rule"]) for item in data["suspicious"]]
        self.assertEqual(
            found,
            [
                ("app.py", 3, "debug_print"),
                ("app.py", 4, "debugger"),
                ("app.py", 5, "todo"),
                ("app.py", 6, "secret"),
                ("web/t.test.ts", 1, "debug_print"),
                ("web/t.test.ts", 1, "focused_test"),
                ("web/t.test.ts", 2, "secret"),
                ("web/t.test.ts", 3, "debugger"),
            ],
        )
        self.assertEqual(data["suspicious_total"], 8)
        excerpts = " ".join(item["excerpt"] for item in data["suspicious"])
        self.assertNotIn("hunter2hunter2", excerpts, "secrets are masked")
        self.assertNotIn("AKIAABCDEFGHIJKLMNOP", excerpts)
        self.assertIn('password = "hunt********"', excerpts)
        # console.log in keep.txt is not JavaScript: not flagged
        self.assertNotIn("keep.txt", [item["file"] for item in data["suspicious"]])

    def test_report_text(self) -> None:
        text = self.run_graph(DIFF).output("report").text
        self.assertTrue(text.startswith("8 files changed, 13 insertions(+), 3 deletions(-)\n"), text)
        self.assertIn("  R move.txt -> moved.txt", text)
        self.assertIn("  M img.bin", text)
        self.assertIn("Suspicious additions (8):", text)
        self.assertIn("  app.py:4: debugger call: breakpoint()", text)

    def test_conflict_markers_and_hunks_without_a_file_header(self) -> None:
        diff = "@@ -1,0 +1,3 @@\n+<<<<<<< HEAD\n+mine\n+>>>>>>> feature\n"
        data = self.run_graph(diff).output("report").data
        self.assertEqual(data["files"][0]["path"], "(unknown)")
        self.assertEqual(
            [(item["line"], item["rule"]) for item in data["suspicious"]], [(1, "conflict_marker"), (3, "conflict_marker")]
        )

    def test_plain_diff_u_output(self) -> None:
        diff = (
            "--- notes.orig\t2024-05-01 10:00:00.000000000 +0200\n"
            "+++ notes.txt\t2024-05-02 11:00:00.000000000 +0200\n"
            "@@ -1,2 +1,2 @@\n"
            "-first\n"
            "+FIXME first\n"
            " second\n"
        )
        data = self.run_graph(diff).output("report").data
        self.assertEqual(data["files"][0]["path"], "notes.txt")
        self.assertEqual(data["files"][0]["status"], "modified")
        self.assertEqual(data["totals"], {"files": 1, "added": 1, "removed": 1})
        self.assertEqual([(item["line"], item["rule"]) for item in data["suspicious"]], [(1, "todo")])

    def test_clean_diff_has_no_findings(self) -> None:
        diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
        value = self.run_graph(diff).output("report")
        self.assertEqual(value.data["suspicious"], [])
        self.assertIn("No suspicious additions found.", value.text)

    def test_empty_and_non_diff_input_fail_the_run_with_an_explanation(self) -> None:
        for text, says in (("", "The input is empty"), ("just some words\n--- not\n", "holds no unified diff")):
            with self.subTest(says):
                run = self.run_graph(text)
                message = run.failed("explain")
                self.assertIn(says, message)
                self.assertIn('icode workflow run diff-summary --input "$(git diff)"', message)
                self.assertEqual(run.executed, ["parse", "explain"], "no branch, join or report runs")

    def test_bounds_the_listed_findings(self) -> None:
        lines = "".join(f"+print({index})\n" for index in range(300))
        diff = f"--- a/big.py\n+++ b/big.py\n@@ -0,0 +1,300 @@\n{lines}"
        data = self.run_graph(diff).output("report").data
        self.assertEqual(data["suspicious_total"], 300)
        self.assertEqual(len(data["suspicious"]), 200)
        self.assertIn("and 100 more", self.run_graph(diff).output("report").text)


class JsonFormat(unittest.TestCase):
    def setUp(self) -> None:
        self.workflow = load("json-format")
        self.run_graph = GraphRun(self.workflow)

    def error(self, text: str) -> Dict[str, Any]:
        """What ``parse`` found wrong with ``text``; the run then fails at ``explain``."""
        run = self.run_graph(text)
        run.failed("explain")
        return run.results["parse"].data["error"]

    def test_definition_switches_on_validity(self) -> None:
        definition = self.workflow.definition
        self.assertEqual(definition.title, "JSON format")
        self.assertEqual(definition.outputs, ("formatted",))
        conditions = {(edge.source, edge.target): edge.condition for edge in definition.edges}
        self.assertEqual(
            conditions, {("parse", "formatted"): {"kind": "case", "index": 0}, ("parse", "explain"): {"kind": "default"}}
        )

    def test_pretty_prints_valid_json_keeping_order_and_numbers(self) -> None:
        run = self.run_graph('{"name":"démo","n":1.50,"big":1e400,"tags":[1,true,null],"empty":{},"list":[]}')
        self.assertEqual([node for node, _ in run.outputs], ["formatted"])
        value = run.output("formatted")
        self.assertEqual(
            value.text,
            '{\n  "name": "démo",\n  "n": 1.50,\n  "big": 1e400,\n  "tags": [\n    1,\n    true,\n    null\n  ],\n'
            '  "empty": {},\n  "list": []\n}',
        )
        data = value.data
        self.assertTrue(data["valid"])
        self.assertIsNone(data["error"])
        self.assertEqual(data["summary"], {"type": "object", "size": 6, "depth": 2, "values": 10, "characters": len(value.text)})
        self.assertEqual(
            data["value"], {"name": "démo", "n": 1.5, "big": "1e400", "tags": [1, True, None], "empty": {}, "list": []}
        )
        self.assertEqual(len(data["warnings"]), 1)
        self.assertIn("too large for a double", data["warnings"][0])
        self.assertEqual(run.emitted, [f"warning: {data['warnings'][0]}"])
        self.assertEqual(json.loads(value.text)["tags"], [1, True, None])

    def test_duplicate_keys_big_integers_and_lone_surrogates_are_kept_in_text(self) -> None:
        value = self.run_graph('{"id": 12345678901234567890, "a": 1, "a": "x\\ud800"}').output("formatted")
        self.assertEqual(value.text, '{\n  "id": 12345678901234567890,\n  "a": 1,\n  "a": "x\\ud800"\n}')
        self.assertEqual(value.data["value"], {"id": "12345678901234567890", "a": "x\ufffd"})
        warnings = " | ".join(value.data["warnings"])
        self.assertIn("duplicate key \"a\" in the object at $", warnings)
        self.assertIn("beyond \u00b12^53-1", warnings)
        self.assertIn("unpaired surrogate", warnings)

    def test_scalars_and_a_code_fence(self) -> None:
        self.assertEqual(self.run_graph(' "hi" ').output("formatted").text, '"hi"')
        self.assertEqual(self.run_graph("false").output("formatted").data["summary"]["type"], "boolean")
        fenced = self.run_graph('```json\n{"a": [1, 2]}\n```').output("formatted")
        self.assertEqual(fenced.text, '{\n  "a": [\n    1,\n    2\n  ]\n}')
        self.assertEqual(fenced.data["warnings"], ["removed the Markdown code fence around the input"])

    def test_invalid_json_fails_the_run_naming_line_and_column_and_marking_it(self) -> None:
        run = self.run_graph('{\n  "a": 1,\n  "b" 2\n}')
        self.assertEqual(
            run.failed("explain"),
            "Invalid JSON: Expecting ':' delimiter at line 3, column 7. "
            "Hint: Each key in an object is followed by a colon and a value.",
        )
        self.assertEqual(run.emitted, ['    3 |   "b" 2', "      |       ^"])
        self.assertEqual(
            run.results["parse"].data,
            {
                "valid": False,
                "error": {
                    "message": "Invalid JSON: Expecting ':' delimiter.",
                    "line": 3,
                    "column": 7,
                    "position": 18,
                    "hint": "Each key in an object is followed by a colon and a value.",
                },
            },
        )

    def test_common_mistakes_get_hints(self) -> None:
        cases = {
            "{'a': 1}": ("Expecting property name", "double quotes"),
            "[1, 2": ("Expecting ',' delimiter", "ends early"),
            "1 2": ("Extra data", "more than one JSON value"),
            '"abc': ("Unterminated string", "closing double quote"),
            "[NaN]": ("NaN is not a JSON value", "no NaN or Infinity"),
            '{"x": -Infinity}': ("-Infinity is not a JSON value", "no NaN or Infinity"),
            "// comment\n{}": ("Expecting value", "comments"),
        }
        for text, (message, hint) in cases.items():
            with self.subTest(text):
                error = self.error(text)
                self.assertIn(message, error["message"])
                self.assertIn(hint, error["hint"])
        for text in ('{"a": 1,}', "[1, 2,]"):  # Python 3.13 words these "Illegal trailing comma"
            with self.subTest(text):
                self.assertIn("comma", self.error(text)["hint"])
        error = self.error('{"s": "x", "y": [NaN]}')
        self.assertEqual((error["line"], error["column"]), (1, 18))

    def test_positions_count_in_the_input_as_given(self) -> None:
        error = self.error('```json\n{\n  "a": tru\n}\n```')
        self.assertEqual((error["line"], error["column"]), (3, 8))

    def test_empty_input_fails_the_run(self) -> None:
        for text in ("", "   \n"):
            with self.subTest(repr(text)):
                run = self.run_graph(text)
                message = run.failed("explain")
                self.assertIn("The input is empty", message)
                self.assertIn("icode workflow run json-format --input", message)
                self.assertEqual(run.emitted, [], "no position, so no marked line")

    def test_too_deep_documents_fail_the_run_and_do_not_crash_it(self) -> None:
        for depth in (250, 100_000):
            with self.subTest(depth):
                run = self.run_graph("[" * depth + "]" * depth)
                self.assertIn("nested", run.failed("explain"))
                self.assertTrue(run.results["parse"].data["valid"])

    def test_data_leaves_out_documents_it_cannot_carry(self) -> None:
        value = self.run_graph("[" * 80 + "1" + "]" * 80).output("formatted")
        self.assertIsNone(value.data["value"])
        self.assertIn("80 levels deep", value.data["value_omitted"])
        self.assertEqual(value.data["summary"]["depth"], 80)


MARKDOWN = """\
---
title: Guide
---
# Guide

Intro text.

## Install
### From source
#### Requirements
## Use [the CLI](cli.md)
### Options ###
```bash
# not a heading
```
Configuration
-------------

- item
---
"""


class Outline(unittest.TestCase):
    def setUp(self) -> None:
        self.workflow = load("outline")
        self.run_graph = GraphRun(self.workflow)

    def test_definition_has_a_loop_collapsing_levels(self) -> None:
        definition = self.workflow.definition
        self.assertEqual(definition.title, "Markdown outline")
        self.assertEqual(definition.outputs, ("render",))
        loop = definition.node("fit")
        self.assertEqual((loop.kind, loop.entry, loop.exit, loop.on_exhausted), ("loop", "collapse", "collapse", "continue"))
        self.assertGreaterEqual(loop.max_iterations, 6)
        self.assertEqual(definition.node("collapse").scope, "fit")

    def test_outline_that_fits_at_once(self) -> None:
        run = self.run_graph(MARKDOWN)
        self.assertEqual(run.iterations, {"fit": 1})
        value = run.output("render")
        self.assertEqual(
            value.text.split("\n"),
            [
                "Outline: 7 of 7 headings",
                "- Guide (line 4)",
                "  - Install (line 8)",
                "    - From source (line 9)",
                "      - Requirements (line 10)",
                "  - Use the CLI (line 11)",
                "    - Options (line 12)",
                "  - Configuration (line 16)",
            ],
        )
        self.assertEqual(value.data["collapsed_levels"], [])
        self.assertTrue(value.data["fits"])
        self.assertEqual(value.data["headings"][0], {"level": 1, "title": "Guide", "line": 4})

    def test_collapses_one_level_per_iteration_until_it_fits(self) -> None:
        run = self.run_graph("max-lines: 4\n" + MARKDOWN)
        self.assertEqual(run.iterations, {"fit": 2})
        value = run.output("render")
        self.assertEqual(
            value.text.split("\n"),
            [
                "Outline: 4 of 7 headings; headings at levels 3 and 4 collapsed to fit 4 lines",
                "- Guide (line 5)",
                "  - Install (line 9)",
                "  - Use the CLI (line 12)",
                "  - Configuration (line 17)",
            ],
        )
        self.assertEqual((value.data["depth"], value.data["omitted"], value.data["max_lines"]), (2, 3, 4))

    def test_cuts_the_top_level_when_even_that_is_too_long(self) -> None:
        document = "\n".join(f"# Part {index}\n## Detail {index}" for index in range(1, 6))
        run = self.run_graph("max-lines: 3\n" + document)
        self.assertEqual(run.iterations, {"fit": 1})
        value = run.output("render")
        self.assertEqual(
            value.text.split("\n")[1:],
            ["- Part 1 (line 2)", "- Part 2 (line 4)", "\u2026 3 more headings at level 1 not shown"],
        )
        self.assertFalse(value.data["fits"])
        self.assertEqual(value.data["omitted"], 8)

    def test_skips_missing_levels_in_one_iteration(self) -> None:
        run = self.run_graph("max-lines: 1\n# A\n###### deep\n###### deeper")
        self.assertEqual(run.iterations, {"fit": 1})
        self.assertEqual(run.output("render").data["collapsed_levels"], [6])

    def test_bad_and_empty_input_fail_the_run_with_an_explanation(self) -> None:
        cases = {
            "": "The input is empty",
            "max-lines: 12\n\n": "The input is empty",
            "max-lines: zero\n# A": "expected a whole number from 1 to 500",
            "max-lines: 501\n# A": "expected a whole number from 1 to 500",
            "Just a paragraph.\n\n    # indented code": "No Markdown headings found in 3 lines",
            "```\n# in a fence\n```": "No Markdown headings found",
        }
        for text, says in cases.items():
            with self.subTest(text):
                run = self.run_graph(text)
                self.assertIn(says, run.failed("explain"))
                self.assertEqual(run.executed, ["parse", "explain"])


class TodoScan(unittest.TestCase):
    def setUp(self) -> None:
        self.workflow = load("todo-scan")
        self.run_graph = GraphRun(self.workflow)
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="todo-scan-"))
        self.addCleanup(shutil.rmtree, self.root)
        cwd = os.getcwd()
        self.addCleanup(os.chdir, cwd)
        os.chdir(self.root)  # the worker runs in the session's working directory
        self.write("project/src/app.py", "x = 1  # TODO: handle errors\nname = 'TODO'\ny = 2  # FIXME(ana): slow\n")
        self.write("project/src/lib/util.ts", "// HACK work around a bug\nconst a = 1;\n// XXX\n")
        self.write("project/README.md", "Nothing to do here.\nMY_TODO is a name, not a marker.\n")
        self.write("project/.git/config", "# TODO hidden\n")
        self.write("project/node_modules/pkg/index.js", "// TODO generated\n")
        self.write("project/logo.png", "\0PNG TODO")
        self.write("project/big.log", "TODO\n" + "x" * (1024 * 1024))

    def write(self, relative: str, content: str) -> None:
        path = os.path.join(self.root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(content)

    def test_definition(self) -> None:
        definition = self.workflow.definition
        self.assertEqual(definition.title, "TODO scan")
        self.assertEqual(definition.outputs, ("report",))
        self.assertTrue(definition.node("scan").takes_context)

    def test_scans_a_relative_directory_against_the_working_directory(self) -> None:
        run = self.run_graph("project\n")
        self.assertEqual([node for node, _ in run.outputs], ["report"])
        data = run.output("report").data
        self.assertEqual(data["root"], os.path.join(self.root, "project"))
        self.assertEqual(
            [(item["file"], item["line"], item["marker"], item["owner"], item["text"]) for item in data["findings"]],
            [
                ("src/app.py", 1, "TODO", None, "handle errors"),
                ("src/app.py", 3, "FIXME", "ana", "slow"),
                ("src/lib/util.ts", 1, "HACK", None, "work around a bug"),
                ("src/lib/util.ts", 3, "XXX", None, ""),
            ],
        )
        self.assertEqual(data["counts"], {"TODO": 1, "FIXME": 1, "XXX": 1, "HACK": 1})
        self.assertEqual((data["total"], data["files_with_markers"], data["files_scanned"]), (4, 2, 3))
        self.assertEqual(data["skipped"]["binary"], 1)
        self.assertEqual(data["skipped"]["large"], 1)
        self.assertEqual(data["limits_reached"], [])
        text = run.output("report").text
        self.assertTrue(text.startswith(f"Found 4 markers in 2 files under {data['root']} (3 files scanned)"), text)
        self.assertIn("src/app.py:3: FIXME(ana) slow", text)
        self.assertIn("Skipped: 1 over 1 MiB, 1 binary.", text)
        self.assertEqual(run.emitted[0], f"scanning {data['root']}")

    def test_empty_input_scans_the_working_directory(self) -> None:
        data = self.run_graph("").output("report").data
        self.assertEqual(data["root"], self.root)
        self.assertEqual(data["findings"][0]["file"], "project/src/app.py")

    def test_a_single_file_and_quotes(self) -> None:
        data = self.run_graph("'project/src/lib/util.ts'").output("report").data
        self.assertEqual(data["kind"], "file")
        self.assertEqual([item["file"] for item in data["findings"]], ["util.ts", "util.ts"])

    @unittest.skipUnless(hasattr(os, "symlink") and hasattr(os, "mkfifo"), "needs symlinks and named pipes")
    def test_links_and_pipes_are_never_opened(self) -> None:
        outside = tempfile.mkdtemp(prefix="todo-outside-")
        self.addCleanup(shutil.rmtree, outside)
        with open(os.path.join(outside, "secret.txt"), "w", encoding="utf-8") as handle:
            handle.write("TODO outside\n")
        os.symlink(outside, os.path.join(self.root, "project", "linked-dir"))
        os.symlink(os.path.join(outside, "secret.txt"), os.path.join(self.root, "project", "linked.txt"))
        os.mkfifo(os.path.join(self.root, "project", "pipe"))
        data = self.run_graph("project").output("report").data
        self.assertNotIn("outside", " ".join(item["text"] for item in data["findings"]))
        self.assertEqual(data["skipped"]["special"], 2)  # the file link and the pipe; the folder link is not walked

    def test_bounded_findings(self) -> None:
        self.write("many/notes.txt", "TODO item\n" * 600)
        data = self.run_graph("many").output("report").data
        self.assertEqual(data["total"], 600)
        self.assertEqual(len(data["findings"]), 500)
        self.assertEqual(data["limits_reached"], ["listed the first 500 of 600 markers"])

    def test_no_markers(self) -> None:
        self.write("clean/a.txt", "all done\n")
        value = self.run_graph("clean").output("report")
        self.assertEqual(value.data["total"], 0)
        self.assertIn("No TODO, FIXME, XXX or HACK markers under", value.text)

    def test_bad_input_fails_the_run_with_an_explanation(self) -> None:
        cases = {
            "missing-dir": "No such directory or file: " + os.path.join(self.root, "missing-dir"),
            "project\nother": "expected one path",
            os.devnull: "neither a directory nor a regular file",
        }
        for text, says in cases.items():
            with self.subTest(text):
                run = self.run_graph(text)
                self.assertIn(says, run.failed("explain"))
                self.assertEqual(run.executed, ["locate", "explain"])
        self.assertIn(f"working directory {self.root}", self.run_graph("missing-dir").failed("explain"))


if __name__ == "__main__":
    unittest.main()
