"""What the module-split tests read from a module's source: its top-level names.

Shared by ``test_evaluate_dataset_modules``, ``test_mtl_split_modules`` and
``test_pipelines_split_modules`` (a name defined in two parts of one split is a bug).

Examples
--------
>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "m.py"
>>> _ = p.write_text("__all__ = ['f']\\nX = 1\\nY: int = 2\\ndef f(): pass\\nclass C: pass\\n")
>>> sorted(top_level_names(p))
['C', 'X', 'Y', 'f']
"""

from __future__ import annotations

import ast
from pathlib import Path


def top_level_names(path: Path) -> set[str]:
    """Top-level functions, classes and assigned names of a module (``__all__`` aside)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names - {"__all__"}
