"""``straggler compare``: predictor-informed scheduling vs speculation alone (Tables 3-4)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines._compare_config import CompareConfig, split_names
from pipelines.commands._engine_options import add_engine_options, engine_from_args
from pipelines.commands._params import add_options, config_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` subcommand."""
    p = subparsers.add_parser(
        "compare",
        help="predictor-informed scheduling vs speculation (Tables 3-4)",
        description="Train (or load with --model) the Wrangler and MTL f0,n,l predictors on a "
        "collected trace, then simulate fresh periods on the same cluster (new job draws, "
        "FB-2009's second day sample, later contention) with speculation alone, Wrangler + "
        "speculation and MTL + speculation. Writes OUT/table3.csv|png (JCT improvement: mean "
        "and 50-99th percentiles), OUT/table4.csv|png (task-seconds reduction), "
        "OUT/tables.md, OUT/jct_cdf.png, OUT/models/ and OUT/summary.json; each cell is "
        "mean ± std over the seeds with a t-test saying whether it is significant.",
    )
    add_options(p, CompareConfig)
    add_engine_options(p)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run the comparison and print the tables' verdict."""
    from pipelines._api import compare
    from pipelines._collect import parse_scales
    from sim_bridge import WORKLOAD_NAMES

    # --scale NAME=X is checked against --workloads, or every workload when it is not given
    # (the trace's are resolved later)
    workloads = split_names(args.workloads) if args.workloads else list(WORKLOAD_NAMES)
    scales = parse_scales(args.scale, workloads) if args.scale else None
    cfg = config_from_args(CompareConfig, args, scales=scales)
    s = compare(cfg, engine=engine_from_args(args))
    print(Path(s["files"]["tables_md"]).read_text())
    print(f"wrote {args.out}/table3.csv, table4.csv, tables.md, *.png, summary.json")
    return 0
