"""``run_report``: read the result directories, render, write ``report.html``, ``report.md``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pipelines._io import atomic_write_text
from pipelines._report_config import DEFAULT_TITLE, ReportConfig
from pipelines.report._collect import collect_report
from pipelines.report._render import render_html, render_markdown


def run_report(cfg: ReportConfig) -> Path:
    """Write ``cfg.out/report.html`` (and ``report.md``) from the result directories
    ``cfg.run_dirs`` and/or the demo directory ``cfg.from_demo`` (``straggler report``).

    Parameters
    ----------
    cfg : ReportConfig
        ``run_dirs``: output directories of ``straggler`` commands (each with
        ``summary.json``; a demo directory given here is expanded into its stages, as with
        ``from_demo``); ``from_demo``: a ``straggler demo`` output directory whose stages are
        reported in order; ``out``: the directory receiving ``report.html`` and ``report.md``
        (created if missing; each file is written atomically, both only once every input has
        been read); ``title``: the page title.

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
    >>> page = run_report(ReportConfig(run_dirs=[d], out=d / "rep"))
    >>> page.name, (d / "rep" / "report.md").is_file()
    ('report.html', True)
    """
    report = collect_report(cfg)
    page, text = render_html(report), render_markdown(report)
    root = Path(cfg.out)
    root.mkdir(parents=True, exist_ok=True)
    path = atomic_write_text(root / "report.html", page)  # the user's umask applies
    atomic_write_text(root / "report.md", text)
    return path


def build_report(
    run_dirs: Sequence[str | os.PathLike[str]] = (),
    out: str | os.PathLike[str] = "report",
    *,
    from_demo: str | os.PathLike[str] | None = None,
    title: str = DEFAULT_TITLE,
) -> Path:
    """:func:`run_report` with :class:`pipelines.ReportConfig`'s fields as arguments (kept
    for callers of this form: the demo's report stage, the notebooks).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "summary.json").write_text(json.dumps({"command": "collect", "rows": 7}))
    >>> build_report([d], d / "rep").name
    'report.html'
    """
    cfg = ReportConfig(run_dirs=list(run_dirs), out=out, from_demo=from_demo, title=title)
    return run_report(cfg)
