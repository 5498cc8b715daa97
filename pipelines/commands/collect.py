"""``straggler collect``: simulate several workloads on one cluster into a training trace."""

from __future__ import annotations

import argparse

from pipelines._collect_config import CollectConfig
from pipelines._compare_config import split_names
from pipelines.commands._engine_options import add_engine_options, engine_from_args
from pipelines.commands._params import add_options, config_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``collect`` subcommand."""
    p = subparsers.add_parser(
        "collect",
        help="collect a training trace from the simulator or from FlowBench",
        description="Run the simulator with no predictor on several workloads sharing one "
        "cluster (as Wrangler replayed production workloads on a 50-node cluster) and write "
        "OUT/tasks.parquet (one row per attempt, counters at launch), OUT/jobs.parquet and "
        "OUT/summary.json (rows, pairs, straggler share per workload, excluded jobs). "
        "With --source flowbench the same files come from FlowBench's real workflow runs "
        "(see `straggler data fetch --only flowbench`), with counters at launch built "
        "causally from each executor's history; the simulator options are then ignored. "
        "--seeds and --loads collect every (seed, load) cell into the same three files (rows "
        "carry seed and load columns); --workers/--scheduler run the cells (and the "
        "calibration runs) on Dask, with the same result as in this process.",
    )
    add_options(p, CollectConfig)
    add_engine_options(p)
    p.set_defaults(func=func)


def _print_flowbench(s: dict, out: str) -> None:
    """The summary lines of a FlowBench trace."""
    print(
        f"{s['attempt_rows']} executor jobs from {s['files']} runs; {s['rows']} labelled in "
        f"{s['pairs']} (executor, task type) pairs; {s['excluded_rows']} rows in stages of "
        f"fewer than {s['min_tasks']} jobs excluded; straggler share {s['straggler_share']:.3f} "
        f"(throttled executors {s['straggler_share_throttled']:.3f}, others "
        f"{s['straggler_share_unthrottled']:.3f})"
    )
    for w in sorted(s["rows_by_workload"]):
        print(
            f"  {w:40s} {s['rows_by_workload'][w]:7d} rows  straggler share "
            f"{s['straggler_share_by_workload'][w]:.3f}"
        )
    print(f"wrote {out}/tasks.parquet, jobs.parquet, summary.json")


def func(args: argparse.Namespace) -> int:
    """Collect the trace and print the summary lines."""
    from pipelines._collect import collect_cells, parse_scales

    workloads = split_names(args.workloads)
    scales = parse_scales(args.scale, workloads) if args.scale is not None else None
    cfg = config_from_args(CollectConfig, args, scales=scales)
    s = collect_cells(cfg, engine=engine_from_args(args))
    if cfg.source == "flowbench":
        _print_flowbench(s, args.out)
        return 0
    print(
        f"{s['attempt_rows']} attempts; {s['rows']} labelled original attempts in "
        f"{s['pairs']} (node, workload) pairs; {s['excluded_jobs']} jobs excluded "
        f"(fewer than {s['min_tasks']} finished tasks, {s['excluded_rows']} rows)"
    )
    for w in sorted(s["rows_by_workload"]):
        print(
            f"  {w:8s} {s['rows_by_workload'][w]:7d} rows  straggler share "
            f"{s['straggler_share_by_workload'][w]:.3f}  source {s['sources'].get(w)}"
        )
    for c in s.get("cells", []):
        print(
            f"  cell {c['cell']:22s} {c['attempt_rows']:7d} attempts  realised load "
            f"{sum(c['realised_load'].values()):.2f}  scales "
            + ", ".join(f"{w}={v:g}" for w, v in c["scales"].items())
        )
    total = sum(s["realised_load"].values())
    print(
        ("mean over cells: " if "cells" in s else "")
        + f"realised load {total:.2f} ("
        + ", ".join(f"{w} {v:.2f}" for w, v in sorted(s["realised_load"].items()))
        + f"); nominal (base work) {sum(s['offered_load'].values()):.2f}"
        + ("  -- above 1: the cluster saturates, see --load" if total > 1 else "")
    )
    if s["synthetic_fallback"]:
        print(
            f"note: {', '.join(s['synthetic_fallback'])} had no data file and ran as the "
            "synthetic workload (SYN); fetch the data with `straggler data fetch`"
        )
    print(f"wrote {args.out}/tasks.parquet, jobs.parquet, summary.json")
    return 0
