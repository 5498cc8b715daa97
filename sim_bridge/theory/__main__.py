"""``python -m sim_bridge.theory [--out DIR]``: the numbers and plots quoted in NOTES.md."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and write the report."""
    from ._report import write_report

    parser = argparse.ArgumentParser(
        prog="python -m sim_bridge.theory",
        description="Compare the seed papers' analytic numbers with ours (table + PNG plots).",
    )
    parser.add_argument("--out", default=None, help="directory for report.md, summary.json, PNGs")
    args = parser.parse_args(argv)
    write_report(args.out)


if __name__ == "__main__":
    main()
