"""``straggler report``: a self-contained HTML report (and its Markdown twin) from result dirs."""

from __future__ import annotations

import argparse


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
    p.add_argument("run_dirs", nargs="*", metavar="RUN_DIR", help="result directories")
    p.add_argument(
        "--from",
        dest="from_demo",
        default=None,
        metavar="DEMO_DIR",
        help="a straggler demo output directory: report all its stages",
    )
    p.add_argument("--out", required=True, help="directory receiving report.html and report.md")
    p.add_argument("--title", default="Straggler prediction: results", help="page title")
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Write the report and print the path of its HTML page."""
    from pipelines.report import build_report

    path = build_report(args.run_dirs, args.out, from_demo=args.from_demo, title=args.title)
    print(f"wrote {path}")
    return 0
