"""Writes packages/engine/builtin/index.json: the built-in workflows' titles, so listing never runs their code.

Run: python3 scripts/builtin-index.py   (a Python test fails when the file is out of date)
"""
import json
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILTIN = ROOT / "packages" / "engine" / "builtin"


def titles() -> dict:
    sys.path.insert(0, str(ROOT / "python"))
    out = {}
    for file in sorted(BUILTIN.glob("*.py")):
        workflow = runpy.run_path(str(file))["workflow"]
        out[file.stem] = {"title": workflow.definition.title}
    return out


if __name__ == "__main__":
    (BUILTIN / "index.json").write_text(json.dumps(titles(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
