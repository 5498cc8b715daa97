"""``straggler simulate``: run the cluster simulator once with one policy."""

from __future__ import annotations

import argparse
import json

WORKLOADS = ("FB2009", "FB2010", "ALI2017", "SYN")


def _param(text: str) -> tuple[str, object]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip().replace("-", "_"), value


def _workload_list(text: str) -> list[str]:
    """``"FB2009,FB2010"`` -> ``["FB2009", "FB2010"]``, each checked against the names.

    Examples
    --------
    >>> _workload_list("FB2009,SYN")
    ['FB2009', 'SYN']
    """
    names = [w.strip() for w in text.split(",") if w.strip()]
    bad = [w for w in names if w not in WORKLOADS]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"unknown workload {', '.join(bad) or repr(text)}; choose from {', '.join(WORKLOADS)}"
        )
    return names


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` subcommand."""
    p = subparsers.add_parser(
        "simulate",
        help="run the cluster simulator with one policy",
        description="Simulate a workload on a slot-based cluster with one speculation policy "
        "and one placement policy. Writes OUT/tasks.parquet (one row per attempt, counters at "
        "launch), OUT/jobs.parquet (one row per job) and OUT/summary.json (JCT percentiles, "
        "task-seconds, makespan, PoCD, events, wall time, peak memory). Without the "
        "workload's data file the synthetic workload is used (one warning line). With --stream "
        "the trace is written to Parquet as jobs finish (memory follows the jobs alive), and "
        "a run stopped early (Ctrl-C, SIGTERM, --max-wall-seconds) still writes a readable "
        "tasks.parquet "
        "of the jobs finished so far, a summary.json with complete: false and its "
        "stop_reason, keeps the directory's incomplete-marker (readers refuse it) and exits "
        "with 130 (SIGINT), 143 (SIGTERM) or 3.",
    )
    p.add_argument(
        "--workload",
        "--workloads",
        dest="workload",
        nargs="+",
        default=[["SYN"]],
        type=_workload_list,
        metavar="{" + ",".join(WORKLOADS) + "}",
        help="workload(s), comma separated as in collect and compare (spaces also work); "
        "several share one cluster, interleaved by arrival (default SYN)",
    )
    p.add_argument("--policy", default="none", help="speculation policy (straggler policies)")
    p.add_argument(
        "--placement",
        default="fair",
        help="placement policy (default fair: the Fair Scheduler the replayed Facebook "
        "clusters ran)",
    )
    p.add_argument(
        "--param",
        type=_param,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a speculation-policy parameter, e.g. --param quantile=0.9 (repeatable)",
    )
    p.add_argument(
        "--placement-param",
        type=_param,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a placement-policy parameter (repeatable)",
    )
    p.add_argument("--nodes", type=int, default=50, help="cluster nodes (50)")
    p.add_argument("--slots", type=int, default=2, help="slots per node (2)")
    p.add_argument(
        "--hours", type=float, default=1.0, help="first H hours of the workload (1; 24 = a day)"
    )
    p.add_argument("--scale", type=float, default=1.0, help="data scale factor (1.0)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw (0)")
    p.add_argument(
        "--data-dir", default=None, help="data directory (flag, $STRAGGLER_DATA_DIR, data/)"
    )
    p.add_argument(
        "--counters",
        choices=("synthetic", "alibaba2018"),
        default="synthetic",
        help="background contention: synthetic or replay of the Alibaba 2018 machines",
    )
    p.add_argument("--beta", type=float, default=1.3, help="straggler threshold x job median")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: on for runs of more than 2,000 jobs)",
    )
    p.add_argument(
        "--engine",
        choices=("auto", "compiled", "python"),
        default="auto",
        help="event loop: auto (compiled where no policy hook can act), compiled, python",
    )
    world = p.add_argument_group(
        "world model", "the causes of stragglers (sim_bridge.world); 0 turns a cause off"
    )
    world.add_argument(
        "--interference",
        type=float,
        default=None,
        help="load a node full of one workload's tasks puts on its dominant resource "
        "(default 0.5; 0: co-located tasks do not slow each other)",
    )
    world.add_argument(
        "--bad-node-share",
        type=float,
        default=None,
        help="share of persistently degraded nodes (default 0.1)",
    )
    world.add_argument(
        "--no-skew",
        action="store_true",
        help="no data skew within a stage (every task of a stage gets the same input)",
    )
    world.add_argument(
        "--record-truth",
        action="store_true",
        help="add the hidden truth of each attempt (truth_* columns training never reads)",
    )
    p.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="stream the trace to Parquet as jobs finish, for big replays: memory follows the "
        "jobs alive, rows come in the order jobs finish (default: built in memory, rows in "
        "launch order)",
    )
    p.add_argument(
        "--max-wall-seconds",
        type=float,
        default=None,
        help="stop the event loop after this many seconds (with --stream: an incomplete "
        "output set of the jobs finished so far)",
    )
    p.add_argument(
        "--max-events",
        type=int,
        default=None,
        help="stop after this many events (a guard for policy experiments; with --stream: an "
        "incomplete output set)",
    )
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=func)


def _world_kwargs(args: argparse.Namespace) -> dict:
    """The world-model options given on the command line (absent ones keep the defaults)."""
    kw: dict = {}
    if args.interference is not None:
        kw["interference"] = args.interference
    if args.bad_node_share is not None:
        kw["bad_node_share"] = args.bad_node_share
    if args.no_skew:
        kw["skew"] = (0.0, 0.0)
    if args.record_truth:
        kw["record_truth"] = True
    return kw


def func(args: argparse.Namespace) -> int:
    """Run the simulation and write the three files."""
    import os
    import resource
    from pathlib import Path

    import sim_bridge
    from pipelines._io import write_summary

    names = [w for group in args.workload for w in group]
    workload = names[0] if len(names) == 1 else names
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stream_kw: dict = {}
    if args.max_events is not None:
        stream_kw["max_events"] = args.max_events
    if args.max_wall_seconds is not None:
        stream_kw["max_wall_seconds"] = args.max_wall_seconds
    if args.stream:
        # no earlier run's files may sit next to the one being written
        for name in ("tasks.parquet", "jobs.parquet", "summary.json"):
            (out / name).unlink(missing_ok=True)
        stream_kw["trace_sink"] = out / "tasks.parquet"
    result = sim_bridge.simulate(
        workload,
        args.policy,
        args.placement,
        nodes=args.nodes,
        slots=args.slots,
        hours=args.hours,
        scale=args.scale,
        seed=args.seed,
        data_dir=args.data_dir,
        counters=args.counters,
        beta=args.beta,
        progress=args.progress,
        policy_params=dict(args.param),
        placement_params=dict(args.placement_param),
        engine=args.engine,
        **stream_kw,
        **_world_kwargs(args),
    )
    tables = [("jobs", result.jobs)]
    if result.tasks is not None:
        tables.insert(0, ("tasks", result.tasks))
    for name, table in tables:
        tmp = out / f".{name}.parquet.tmp"
        table.to_parquet(tmp, index=False)
        os.replace(tmp, out / f"{name}.parquet")
    s = result.summary
    summary = {
        "command": "simulate",
        **s,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if not s["complete"]:
        summary["status"] = "incomplete"
    write_summary(out, summary)
    if not s["complete"]:
        print(
            f"stopped early ({s['stop_reason']}) after {s['events']} events: wrote the "
            f"{s['jobs']} jobs finished so far ({s['attempts']} attempts) of "
            f"{s['jobs_submitted']}; summary.json says complete: false"
        )
        return {"SIGINT": 130, "KeyboardInterrupt": 130, "SIGTERM": 143}.get(s["stop_reason"], 3)
    print(
        f"{s['jobs']} jobs, {s['tasks']} tasks, {s['attempts']} attempts "
        f"({s['copies']} copies); JCT mean {s['mean_jct']:.1f} s, p50 {s['p50_jct']:.1f}, "
        f"p90 {s['p90_jct']:.1f}, p99 {s['p99_jct']:.1f}; task-seconds {s['task_seconds']:.0f}; "
        f"PoCD {s['pocd']:.3f}; {s['events']} events in {s['wall_seconds']:.1f} s "
        f"({s['engine']} loop)"
    )
    print(f"wrote {out}/tasks.parquet, jobs.parquet, summary.json")
    return 0
