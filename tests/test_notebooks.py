"""Execute every notebook (jupytext percent scripts in notebooks/) in quick mode.

Each notebook reads ``STRAGGLER_QUICK=1`` and shrinks its experiment sizes, so the suite
checks that the notebooks run against the current package, not that they reproduce the
papers' numbers (``straggler reproduce`` and the full notebooks do that).
"""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path, monkeypatch):
    jupytext = pytest.importorskip("jupytext")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("STRAGGLER_QUICK", "1")
    monkeypatch.setenv("STRAGGLER_NOTEBOOK_OUT", str(tmp_path))
    nb = jupytext.read(path)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors
