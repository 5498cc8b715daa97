"""``straggler collect``: simulate several workloads on one cluster into a training trace."""

from __future__ import annotations

import argparse


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
        "causally from each executor's history; the simulator options are then ignored.",
    )
    p.add_argument(
        "--source",
        choices=("simulator", "flowbench"),
        default="simulator",
        help="where the trace comes from: the simulator (default) or FlowBench's real runs",
    )
    p.add_argument(
        "--workflows",
        default=None,
        help="flowbench: comma separated workflows (default: every one present, e.g. "
        "1000-genome,casa-wind-full,predict-future-sales)",
    )
    p.add_argument(
        "--anomalies",
        default=None,
        help="flowbench: comma separated anomaly folders (default: every one present: "
        "normal,cpu_2,cpu_3,cpu_4,hdd_5,hdd_10)",
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


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [w.strip() for w in text.split(",") if w.strip()]


def _flowbench(args: argparse.Namespace) -> int:
    """Build the trace from FlowBench's runs and print the summary lines."""
    from tqdm.auto import tqdm

    from pipelines._datadir import resolve_data_dir
    from pipelines.flowbench import collect_flowbench

    data_dir = resolve_data_dir(args.data_dir)

    with tqdm(desc="flowbench runs", unit="file") as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        s = collect_flowbench(
            data_dir,
            args.out,
            workflows=_split(args.workflows),
            anomalies=_split(args.anomalies),
            beta=args.beta,
            progress=progress,
        )
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
    print(f"wrote {args.out}/tasks.parquet, jobs.parquet, summary.json")
    return 0


def func(args: argparse.Namespace) -> int:
    """Collect the trace and print the summary lines."""
    if args.source == "flowbench":
        return _flowbench(args)
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
