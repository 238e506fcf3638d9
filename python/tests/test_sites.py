"""Call sites: where the author called the SDK, as recorded in the manifest and in errors."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import textwrap
import unittest
from typing import Any, List, Optional

from chrys.workflows import BuilderScope, WorkflowBuilder
from chrys.workflows import _sites
from chrys.workflows._errors import WorkflowDefinitionError

from ._support import HAS_COLUMNS, REPO_ROOT, always, here, ident


def declare_through_a_helper(wf: WorkflowBuilder, name: str) -> Any:
    return wf.python(name, ident)  # the first frame outside the SDK: this line


def find_python39() -> Optional[str]:
    """A Python 3.9 interpreter that really runs (a pyenv shim may exist and fail), or ``None``."""
    candidates = ["python3.9", os.path.expanduser("~/.pyenv/versions/3.9.18/bin/python3.9")]
    for candidate in candidates:
        try:
            result = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 9))"],
                capture_output=True,
                text=True,
                timeout=20,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if result.returncode == 0 and result.stdout.strip() == "True":
            return candidate
    return None


class Sites(unittest.TestCase):
    def test_node_and_edge_sites(self) -> None:
        wf = WorkflowBuilder("T")
        line = here() + 1
        a = wf.python("a", ident)
        b = wf.agent("b", profile="p")
        wf.edge(a, b)
        wf.start(a)
        wf.output(b)
        manifest = wf.build().definition.to_manifest()
        self.assertEqual([node["site"]["line"] for node in manifest["nodes"]], [line, line + 1])
        self.assertEqual(manifest["edges"][0]["site"]["line"], line + 2)
        self.assertEqual(manifest["build_site"]["line"], line + 5)
        for site in [*(n["site"] for n in manifest["nodes"]), manifest["edges"][0]["site"], manifest["build_site"]]:
            self.assertEqual(site["file"], os.path.abspath(__file__))
            self.assertEqual(set(site), {"file", "line", "column", "end_line", "end_column"})

    def test_first_frame_outside_the_sdk(self) -> None:
        wf = WorkflowBuilder("T")
        declare_through_a_helper(wf, "a")
        helper_line = declare_through_a_helper.__code__.co_firstlineno + 1
        self.assertEqual(wf._graph.nodes[0].site["line"], helper_line)  # type: ignore[index]

    def test_loop_body_sites(self) -> None:
        wf = WorkflowBuilder("T")
        lines: List[int] = []

        def body(scope: BuilderScope) -> Any:
            lines.append(here() + 1)
            x = scope.python("x", ident)
            y = scope.python("y", ident)
            scope.edge(x, y)
            return x, y

        loop_line = here() + 1
        loop = wf.loop("l", body, always, 2)
        wf.start(loop)
        wf.output(loop)
        manifest = wf.build().definition.to_manifest()
        self.assertEqual([n["site"]["line"] for n in manifest["nodes"]], [loop_line, lines[0], lines[0] + 1])
        self.assertEqual(manifest["edges"][0]["site"]["line"], lines[0] + 2)

    @unittest.skipUnless(HAS_COLUMNS, "columns are known on Python 3.11+")
    def test_columns_count_characters(self) -> None:
        wf = WorkflowBuilder("T")
        text = '        ünïcödé = wf.python("ünïcödé", ident)  # column counts characters, not bytes'
        line = here() + 1
        ünïcödé = wf.python("ünïcödé", ident)  # column counts characters, not bytes
        self.assertIsNotNone(ünïcödé)
        site = wf._graph.nodes[0].site
        assert site is not None
        start = text.index("wf.python")
        end = text.index("ident)") + len("ident)")
        self.assertEqual(site, {"file": os.path.abspath(__file__), "line": line, "column": start + 1, "end_line": line, "end_column": end + 1})

    @unittest.skipUnless(HAS_COLUMNS, "end lines are known on Python 3.11+")
    def test_multi_line_call(self) -> None:
        wf = WorkflowBuilder("T")
        first = here() + 1
        wf.python(
            "a",
            ident,
        )
        site = wf._graph.nodes[0].site
        assert site is not None
        self.assertEqual((site["line"], site["column"], site["end_line"], site["end_column"]), (first, 9, first + 3, 10))

    def test_without_positions_columns_are_none(self) -> None:
        saved = _sites._HAS_POSITIONS
        _sites._HAS_POSITIONS = False
        try:
            wf = WorkflowBuilder("T")
            line = here() + 1
            wf.python("a", ident)
        finally:
            _sites._HAS_POSITIONS = saved
        site = wf._graph.nodes[0].site
        self.assertEqual(site, {"file": os.path.abspath(__file__), "line": line, "column": None, "end_line": None, "end_column": None})

    def test_error_site_is_the_call(self) -> None:
        wf = WorkflowBuilder("T")
        line = here() + 2
        try:
            wf.python("", ident)
        except WorkflowDefinitionError as error:
            assert error.site is not None
            self.assertEqual((error.site["file"], error.site["line"]), (os.path.abspath(__file__), line))
            if HAS_COLUMNS:
                self.assertEqual(error.site["column"], 13)
            self.assertEqual(error.notes, [])

    def test_at_most_10000_sites(self) -> None:
        self.assertEqual(_sites.MAX_SITES, 10_000)
        wf = WorkflowBuilder("T")
        handles = [wf.python(f"n{i}", ident) for i in range(5_000)]
        wf.chain(*handles)  # 5,000 node sites + 4,999 edge sites
        wf.start(handles[0])
        wf.output(handles[-1])
        last = wf.python("last", ident)  # the 10,000th site
        wf.edge(handles[-1], last)  # past the budget
        manifest = wf.build().definition.to_manifest()
        sites = [n["site"] for n in manifest["nodes"]] + [e["site"] for e in manifest["edges"]]
        self.assertEqual(sum(site is not None for site in sites), 10_000)
        self.assertIsNotNone(manifest["nodes"][-1]["site"])
        self.assertIsNone(manifest["edges"][-1]["site"])
        self.assertIsNone(manifest["build_site"])
        self.assertTrue(manifest["sites_truncated"])

    def test_exactly_10000_sites_is_not_truncated(self) -> None:
        wf = WorkflowBuilder("T")
        handles = [wf.python(f"n{i}", ident) for i in range(5_000)]
        wf.chain(*handles)
        wf.start(handles[0])
        wf.output(handles[-1])
        manifest = wf.build().definition.to_manifest()  # 9,999 + the build site
        self.assertIsNotNone(manifest["build_site"])
        self.assertFalse(manifest["sites_truncated"])


class PythonBefore311(unittest.TestCase):
    def test_real_workflow_file_on_python_3_9(self) -> None:
        python = find_python39()
        if python is None:
            self.skipTest("no Python 3.9 interpreter here")
        source = textwrap.dedent(
            """
            import json
            from chrys.workflows import WorkflowBuilder

            wf = WorkflowBuilder("Old")
            a = wf.python("a", lambda value: value)
            wf.start(a)
            wf.output(a)
            workflow = wf.build()
            print(json.dumps(workflow.definition.to_manifest()))
            """
        )
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "old.py")
            with open(path, "w", encoding="utf-8") as file:
                file.write(source)
            env = dict(os.environ, PYTHONPATH=os.path.join(REPO_ROOT, "python"), PYTHONDONTWRITEBYTECODE="1")
            result = subprocess.run([python, path], capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        manifest = json.loads(result.stdout)
        self.assertEqual(
            manifest["nodes"][0]["site"],
            {"file": path, "line": 6, "column": None, "end_line": None, "end_column": None},
        )
        self.assertEqual(manifest["build_site"]["line"], 9)


if __name__ == "__main__":
    unittest.main()
