"""``straggler collect``: simulate several workloads on one cluster into a training trace."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``collect`` subcommand."""
    p = subparsers.add_parser(
        "collect",
        help="collect a training trace from the simulator",
        description="Run the simulator with no predictor on several workloads sharing one "
        "cluster (as Wrangler replayed production workloads on a 50-node cluster) and write "
        "OUT/tasks.parquet (one row per attempt, counters at launch), OUT/jobs.parquet and "
        "OUT/summary.json (rows, pairs, straggler share per workload, excluded jobs).",
    )
    p.add_argument("--workloads", default="FB2009,FB2010,ALI2017,SYN", help="comma separated")
    p.add_argument("--nodes", type=int, default=50, help="cluster nodes (50)")
    p.add_argument("--slots", type=int, default=2, help="slots per node (2)")
    p.add_argument("--hours", type=float, default=1.0, help="first H hours of each workload (1)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    p.add_argument(
        "--scale",
        default=None,
        help="data scale instead of --load: one number for all, or NAME=X,... (unnamed "
        "workloads keep FB2009=10, FB2010=0.01, ALI2017=0.01, SYN=0.5)",
    )
    p.add_argument(
        "--load",
        type=float,
        default=None,
        help="target load: choose every workload's scale so the workloads share it equally "
        "(default 0.7 unless --scale is given). It is the share of slot time the attempts "
        "really run (contention and noise included; measured by calibration runs without "
        "speculation), or the base work alone with --load-basis nominal; above 1 the cluster "
        "saturates and queueing dominates job completion times",
    )
    p.add_argument(
        "--load-basis",
        choices=("realised", "nominal"),
        default="realised",
        help="what --load measures: run time of the attempts (realised, default) or base "
        "work (nominal; tasks run about twice their base work)",
    )
    p.add_argument("--policy", default="none", help="speculation policy while collecting (none)")
    p.add_argument(
        "--counters",
        choices=("synthetic", "alibaba2018"),
        default="synthetic",
        help="node contention source",
    )
    p.add_argument("--data-dir", default=None, help="data directory (see straggler data)")
    p.add_argument("--beta", type=float, default=1.3, help="straggler threshold for the summary")
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Collect the trace and print the summary lines."""
    from pipelines._collect import (
        DEFAULT_LOAD,
        check_workloads,
        collect,
        parse_scales,
        scales_for_load,
    )

    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    check_workloads(workloads)
    if args.load is not None and args.scale is not None:
        raise ValueError("give --load or --scale, not both")
    if args.scale is None:
        scales = scales_for_load(
            workloads,
            DEFAULT_LOAD if args.load is None else args.load,
            nodes=args.nodes,
            slots=args.slots,
            hours=args.hours,
            seed=args.seed,
            data_dir=args.data_dir,
            basis=args.load_basis,
            counters=args.counters,
        )
    else:
        scales = parse_scales(args.scale, workloads)
    s = collect(
        args.out,
        workloads,
        nodes=args.nodes,
        slots=args.slots,
        hours=args.hours,
        seed=args.seed,
        scales=scales,
        policy=args.policy,
        data_dir=args.data_dir,
        counters=args.counters,
        beta=args.beta,
    )
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
    total = sum(s["realised_load"].values())
    print(
        f"realised load {total:.2f} ("
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
