"""The settings of ``straggler report`` (:class:`ReportConfig`), each flag declared once.

Light at import (the CLI builds its parser from it; :mod:`pipelines.report` loads pandas and
Jinja2); :func:`pipelines.write_report` runs one.

Examples
--------
>>> cfg = ReportConfig(run_dirs=["runs/train", "runs/t1"], out="runs/report")
>>> cfg.from_demo, cfg.title
(None, 'Straggler prediction: results')
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pipelines.commands._params import option

#: The page title when none is given.
DEFAULT_TITLE = "Straggler prediction: results"


@dataclass(kw_only=True)
class ReportConfig:
    """Settings of one ``straggler report`` run (see ``straggler report --help``)."""

    run_dirs: list[str | os.PathLike[str]] = option(
        default_factory=list,
        positional=True,
        nargs="*",
        metavar="RUN_DIR",
        format=lambda dirs: [os.fspath(d) for d in dirs],
        help="result directories",
    )
    from_demo: str | os.PathLike[str] | None = option(
        None,
        flag="--from",
        metavar="DEMO_DIR",
        help="a straggler demo output directory: report all its stages",
    )
    out: str | os.PathLike[str] = option(help="directory receiving report.html and report.md")
    title: str = option(DEFAULT_TITLE, help="page title")
