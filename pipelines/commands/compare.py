"""``straggler compare``: predictor-informed scheduling vs speculation alone (Tables 3-4)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines.commands._engine_options import add_engine_options, engine_from_args


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
    p.add_argument("--traces", required=True, help="training trace directory (straggler collect)")
    p.add_argument("--workloads", default="FB2009,FB2010,ALI2017", help="comma separated")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument(
        "--model",
        action="append",
        default=None,
        metavar="[NAME=]PATH_OR_URI",
        help="use a saved predictor instead of training: wrangler=DIR, mtl=models:/name@alias, "
        "... (a bare value is the MTL model); repeat for both",
    )
    p.add_argument("--seeds", type=int, default=3, help="fresh periods (seeds) per policy (3)")
    p.add_argument("--nodes", type=int, default=None, help="cluster nodes (the trace's)")
    p.add_argument("--slots", type=int, default=None, help="slots per node (the trace's)")
    p.add_argument("--hours", type=float, default=None, help="hours per period (the trace's)")
    p.add_argument(
        "--scale", default=None, help="data scale: one number, or NAME=X,... (the trace's)"
    )
    p.add_argument("--speculation", default="late", help="speculation policy (late)")
    p.add_argument(
        "--max-wait",
        type=float,
        default=20.0,
        help="seconds a task may be held back from predicted-straggler nodes (20)",
    )
    p.add_argument(
        "--oracle",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the slowdown oracle (true node state) + speculation: the ceiling of "
        "what avoiding slow nodes can gain in this setting, and each predictor's share of it "
        "(default on)",
    )
    p.add_argument(
        "--mode",
        choices=("rank", "threshold"),
        default="rank",
        help="predictor placement: rank the free nodes and take the best (default), or "
        "Wrangler's rule (refuse nodes above the threshold)",
    )
    p.add_argument(
        "--control",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the random-refusal control at the MTL run's refusal rate (default on): "
        "tells the value of prediction from the value of spreading load",
    )
    p.add_argument("--data-dir", default=None, help="data directory (see straggler data)")
    p.add_argument("--beta", type=float, default=1.3, help="straggler threshold for training")
    add_engine_options(p)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run the comparison and print the tables' verdict."""
    from pipelines._collect import parse_scales
    from pipelines._compare import CompareConfig, parse_models, run_compare

    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    scales = parse_scales(args.scale, workloads) if args.scale else None
    cfg = CompareConfig(
        traces=args.traces,
        out=args.out,
        workloads=workloads,
        models=parse_models(args.model),
        seeds=args.seeds,
        nodes=args.nodes,
        slots=args.slots,
        hours=args.hours,
        scales=scales,
        speculation=args.speculation,
        max_wait=args.max_wait,
        data_dir=args.data_dir,
        beta=args.beta,
        oracle=args.oracle,
        mode=args.mode,
        control=args.control,
    )
    s = run_compare(cfg, engine_from_args(args))
    print(Path(s["files"]["tables_md"]).read_text())
    print(f"wrote {args.out}/table3.csv, table4.csv, tables.md, *.png, summary.json")
    return 0
