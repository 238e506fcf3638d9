"""The built-in workflows' titles in packages/engine/builtin/index.json match their built definitions."""
import importlib.util
import json
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class BuiltinIndexTest(unittest.TestCase):
    def test_index_is_up_to_date(self) -> None:
        spec = importlib.util.spec_from_file_location("builtin_index", ROOT / "scripts" / "builtin-index.py")
        module = importlib.util.module_from_spec(spec)
        assert spec.loader is not None
        spec.loader.exec_module(module)
        saved = json.loads((ROOT / "packages" / "engine" / "builtin" / "index.json").read_text(encoding="utf-8"))
        self.assertEqual(saved, module.titles(), "run: python3 scripts/builtin-index.py")


if __name__ == "__main__":
    unittest.main()
