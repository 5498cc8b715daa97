"""``straggler simulate``: run the cluster simulator once with one policy."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines._simulate_config import SimulateConfig
from pipelines.commands._params import add_options, config_from_args


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
        "with 130 (SIGINT), 143 (SIGTERM) or 3. --load 0.8 chooses the nodes for a busiest "
        "hour at 0.8 realised load (calibration replays of a sample of the jobs); without it, "
        "a cluster too small for the busiest hour's base work gets a warning.",
    )
    add_options(p, SimulateConfig)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run the simulation and write the three files."""
    from pipelines._api import simulate

    s = simulate(config_from_args(SimulateConfig, args))
    out = Path(args.out)
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
    occ, offered, real = s["occupancy"], s["offered_load"], s["realised_load"]
    a, b = (x / 3600 for x in occ["busiest_hour_span_s"])
    print(
        f"cluster {s['nodes']:,} x {s['slots']}: load by arrival hour (run time over slot "
        f"time) {real['window']:.3f} over the window, {real['busiest_hour']:.3f} in its busiest "
        f"hour (base work alone: {offered['window']:.3f}, {offered['busiest_hour']:.3f}); "
        f"slots busy {occ['busiest_hour']:.0%} in the busiest hour of the run ({a:g}-{b:g} h)"
    )
    print(f"wrote {out}/tasks.parquet, jobs.parquet, summary.json")
    return 0
