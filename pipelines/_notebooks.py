"""Build executed ``.ipynb`` notebooks from the jupytext scripts in ``notebooks/``.

``make notebooks`` runs ``python -m pipelines._notebooks``: every ``notebooks/*.py``
(jupytext percent format) is read, executed with :mod:`nbclient` on the kernel of the
running interpreter (so in the project's venv, with no kernelspec lookup that could fail
with "No kernel found"), given that kernel's metadata, and written as
``notebooks/<name>.ipynb``. ``STRAGGLER_QUICK=1`` in the environment shrinks every notebook's
sizes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

#: Name and display name of the kernelspec ``make notebooks`` installs into the venv.
KERNEL_NAME = "straggler-mtl"
KERNEL_DISPLAY = "straggler-mtl (.venv)"


def build_notebook(script: str | Path, out: str | Path, *, timeout: int = 1800) -> Path:
    """Execute one jupytext script and write it as an ``.ipynb`` with its outputs.

    The notebook runs with the repository root as its working directory, on a kernel started
    from ``sys.executable``. A failing cell raises ``nbclient.exceptions.CellExecutionError``
    naming the cell.
    """
    import jupytext
    import nbclient
    import nbformat

    script, out = Path(script), Path(out)
    nb = jupytext.read(script)
    nb.metadata["kernelspec"] = {
        "name": KERNEL_NAME,
        "display_name": KERNEL_DISPLAY,
        "language": "python",
    }
    client = nbclient.NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",  # the native kernel of this interpreter
        resources={"metadata": {"path": str(Path.cwd())}},
    )
    client.execute()
    nb.metadata["kernelspec"] = {
        "name": KERNEL_NAME,
        "display_name": KERNEL_DISPLAY,
        "language": "python",
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Build every notebook given (default: ``notebooks/*.py``); one line per notebook."""
    parser = argparse.ArgumentParser(prog="python -m pipelines._notebooks")
    parser.add_argument("scripts", nargs="*", help="jupytext scripts (default notebooks/*.py)")
    parser.add_argument("--out-dir", default=None, help="where the .ipynb go (default: beside)")
    args = parser.parse_args(argv)
    scripts = [Path(s) for s in args.scripts] or sorted(Path("notebooks").glob("*.py"))
    if not scripts:
        print("no notebooks/*.py here; run from the repository root", file=sys.stderr)
        return 2
    for s in scripts:
        out = (Path(args.out_dir) if args.out_dir else s.parent) / f"{s.stem}.ipynb"
        print(f"executing {s} -> {out}", flush=True)
        build_notebook(s, out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
