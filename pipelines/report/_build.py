"""``build_report``: read the result directories, render, write ``report.html``, ``report.md``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pipelines._io import atomic_write_text
from pipelines.report._collect import collect_report
from pipelines.report._render import render_html, render_markdown


def build_report(
    run_dirs: Sequence[str | os.PathLike[str]] = (),
    out: str | os.PathLike[str] = "report",
    *,
    from_demo: str | os.PathLike[str] | None = None,
    title: str = "Straggler prediction: results",
) -> Path:
    """Write ``out/report.html`` (and ``out/report.md``) from result and/or demo directories.

    Parameters
    ----------
    run_dirs : sequence of path
        Output directories of ``straggler`` commands (each with ``summary.json``). A demo
        directory given here is expanded into its stages, as with ``from_demo``.
    out : path
        Directory receiving ``report.html`` and ``report.md`` (created if missing; each file
        is written atomically, both only once every input has been read).
    from_demo : path, optional
        A ``straggler demo`` output directory; its stages are reported in order.
    title : str
        Page title.

    Returns
    -------
    Path
        The written ``report.html``; ``report.md`` is beside it.

    Raises
    ------
    FileNotFoundError
        A directory is missing or has no ``summary.json``.
    ReportError
        No directory given, or a ``summary.json`` is malformed.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "summary.json").write_text(json.dumps({"command": "collect", "rows": 7}))
    >>> page = build_report([d], d / "rep")
    >>> page.name, (d / "rep" / "report.md").is_file()
    ('report.html', True)
    """
    report = collect_report(run_dirs, out, from_demo=from_demo, title=title)
    page, text = render_html(report), render_markdown(report)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    path = atomic_write_text(root / "report.html", page)  # the user's umask applies
    atomic_write_text(root / "report.md", text)
    return path
