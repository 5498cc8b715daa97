"""One ``straggler simulate`` run into its claimed output directory: the flags checked, the
workloads loaded, the cluster chosen (:func:`choose_nodes`, with
:mod:`pipelines._simulate_sizing`), the replay, its tables and a summary
with the loads the cluster carried (:mod:`pipelines._cluster_load`). :func:`pipelines.simulate`
claims the directory and calls :func:`run_simulate`.

Nothing here imports pyarrow at import time: a streamed run sets its allocators first.
"""

from __future__ import annotations

import resource
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipelines._cluster_load import offered_load_profile
from pipelines._simulate_sizing import ClusterSize, check_load, nodes_needed, size_cluster

if TYPE_CHECKING:
    from pipelines._simulate_config import SimulateConfig


def stderr_line(text: str) -> None:
    """One line of the sizing's report, on stderr at once."""
    print(text, file=sys.stderr, flush=True)


def run_simulate(
    config: SimulateConfig, out: Path, allocators: dict[str, bool] | None = None
) -> dict[str, Any]:
    """Run ``config`` and write ``tasks.parquet``, ``jobs.parquet`` and ``summary.json`` in
    ``out`` (claimed by the caller); returns the summary (``allocators``: what
    :func:`sim_bridge.lean_allocators` set, for the summary)."""
    import sim_bridge
    from mtl._atomic import atomic_path
    from pipelines._cluster_load import trace_loads, window_hours
    from pipelines._io import write_summary

    # every check that needs no data comes before the data is read and before anything
    # earlier in ``out`` is removed
    if not (
        isinstance(config.seed, int) and not isinstance(config.seed, bool) and config.seed >= 0
    ):
        raise ValueError(f"parameter seed must be an integer >= 0, got {config.seed!r}")
    check_sizing(config)
    kw = config.simulator_kwargs()
    # loaded here as simulate() loads names (workload k draws with seed + k), once: the
    # cluster's size and the offered load need the jobs
    kw["workload"] = [
        sim_bridge.load_workload(
            name, config.data_dir, hours=config.hours, scale=config.scale, seed=config.seed + k
        )
        for k, name in enumerate(config.workloads)
    ]
    window = window_hours(kw["workload"], config.hours)
    say = None if config.progress is False else stderr_line
    kw["nodes"], size = choose_nodes(config, kw["workload"], window, report=say)
    if size is not None and say is not None:
        say(size.describe())
    sink: dict[str, Any] = {}
    if config.stream:
        # no earlier run's files may sit next to the one being written
        for name in ("tasks.parquet", "jobs.parquet", "summary.json"):
            (out / name).unlink(missing_ok=True)
        sink["trace_sink"] = out / "tasks.parquet"
    result = sim_bridge.simulate(**kw, **sink)
    offered = offered_load_profile(kw["workload"], kw["nodes"], config.slots, window)
    tables = [("jobs", result.jobs)]
    if result.tasks is not None:
        tables.insert(0, ("tasks", result.tasks))
    for name, table in tables:
        with atomic_path(out / f"{name}.parquet") as tmp:
            table.to_parquet(tmp, index=False)
    s = result.summary
    summary = {
        "command": "simulate",
        **s,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "offered_load": {
            "window": offered.window,
            "busiest_hour": offered.busiest,
            "busiest_hour_span_s": list(offered.busiest_bin),
        },
    }
    if s["complete"]:  # a stopped run's trace lacks the attempts still running
        trace = result.tasks if result.tasks is not None else s["trace_path"]
        occ, real = trace_loads(trace, kw["nodes"], config.slots, window)
        summary["realised_load"] = {
            "window": real.window,
            "busiest_hour": real.busiest,
            "busiest_hour_span_s": list(real.busiest_bin),
        }
        summary["occupancy"] = {
            "busiest_hour": occ.busiest,
            "busiest_hour_span_s": list(occ.busiest_bin),
            "hourly": occ.hourly,
        }
    if size is not None:
        summary["sizing"] = size.as_dict()
    if allocators is not None:
        summary["lean_allocators"] = allocators
    if not s["complete"]:
        summary["status"] = "incomplete"
    write_summary(out, summary)
    return summary


def check_sizing(config: Any) -> None:
    """The errors of ``config``'s sizing flags, raised before anything is loaded or run:
    ``--nodes`` with ``--load``, a load outside (0, 1], and (with ``--load``, whose
    calibration runs first) an unknown policy.

    Examples
    --------
    >>> from pipelines._simulate_config import SimulateConfig
    >>> check_sizing(SimulateConfig(out="o", nodes=3, load=0.5))
    Traceback (most recent call last):
    ...
    ValueError: give --nodes or --load, not both (got --nodes 3 and --load 0.5)
    """
    load = config.load
    if load is None:
        return
    if config.nodes is not None:
        raise ValueError(
            f"give --nodes or --load, not both (got --nodes {config.nodes} and --load {load:g})"
        )
    check_load(load)
    from sim_bridge.policies import get_policy

    get_policy(config.policy, **config.policy_params)
    get_policy(config.placement, **config.placement_params)


def choose_nodes(
    config: Any,
    workloads: Sequence[Any],
    hours: float,
    report: Callable[[str], None] | None = None,
) -> tuple[int, ClusterSize | None]:
    """The nodes of a ``straggler simulate`` run (:class:`pipelines.SimulateConfig`, its
    flags checked by :func:`check_sizing`) over a window of ``hours``, and the
    :class:`ClusterSize` when ``config.load`` chose them.

    Without ``load``: ``config.nodes`` (50 when not given), with a warning when the busiest
    hour offers more base work than the cluster's slots can run even on idle nodes (the jobs
    then queue without bound, and a streamed run's memory grows with the queue).

    Examples
    --------
    >>> from pipelines._simulate_config import SimulateConfig
    >>> from sim_bridge import JobSpec, Workload
    >>> w = Workload("X", [JobSpec("a", 0.0, [60.0] * 4)])
    >>> choose_nodes(SimulateConfig(out="o", nodes=3), [w], hours=1.0)
    (3, None)
    """
    kw = config.simulator_kwargs()
    if config.load is None:
        nodes, slots = kw["nodes"], config.slots
        if not all(isinstance(v, int) and v >= 1 for v in (nodes, slots)):
            return nodes, None  # sim_bridge.simulate says what is wrong
        offered = offered_load_profile(workloads, nodes, slots, hours)
        if offered.busiest > 1:
            import logging

            a, b = offered.busiest_bin
            logging.getLogger("pipelines.simulate").warning(
                "simulate: the busiest hour of arrivals (%g-%g h) brings %.1fx the base work "
                "%d nodes x %d slots can run even on idle nodes (the window: %.1fx); the jobs "
                "will queue without bound and the run may not end. --load 0.8 sizes the "
                "cluster for you; --nodes %d is the least that keeps up with the base work "
                "alone (attempts run longer than their base work).",
                a / 3600,
                b / 3600,
                offered.busiest,
                nodes,
                slots,
                offered.window,
                nodes_needed(offered.busiest * nodes, 1.0, 1.0),
            )
        return nodes, None
    cal_kw = {
        k: kw[k] for k in ("placement", "placement_params", "seed", "data_dir", "counters", "beta")
    }
    cal_kw.update(config.world_kwargs())
    cal_kw.pop("record_truth", None)
    size = size_cluster(
        workloads,
        load=config.load,
        slots=config.slots,
        hours=hours,
        simulate_kwargs=cal_kw,
        report=report,
    )
    return size.nodes, size
