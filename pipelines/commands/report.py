"""``straggler report``: a self-contained HTML report (and its Markdown twin) from result dirs."""

from __future__ import annotations

import argparse

from pipelines._report_config import ReportConfig
from pipelines.commands._params import add_options, config_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` subcommand."""
    p = subparsers.add_parser(
        "report",
        help="an HTML report from result directories",
        description="Scan the output directories of straggler commands (summary.json, CSV, "
        "Markdown and PNG files) and write OUT/report.html: one self-contained page (inline "
        "CSS, images embedded, no script or network access) with a section per stage - trace "
        "collection, training, Table 1, Table 2, Tables 3-4, the replication example - holding "
        "the tables, plots, key summary numbers and the commands that produced them. "
        "OUT/report.md carries the same sections, numbers and tables, with the plots linked.",
    )
    add_options(p, ReportConfig)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Write the report and print the path of its HTML page."""
    from pipelines._api import write_report

    print(f"wrote {write_report(config_from_args(ReportConfig, args))}")
    return 0
