"""``straggler collect``: one training trace of several workloads sharing one cluster.

As Wrangler replayed several production workloads on one 50-node cluster and snapshotted
node counters at every task launch, this runs the simulator (no predictor, speculation as
configured, ``none`` by default so that every original attempt runs to completion and its
duration is the label's ground truth) on all the workloads at once and writes the attempt
table (``tasks.parquet``, ``sim_bridge.trace``), the job table and a summary: rows, (node, workload)
pairs, straggler share per workload, jobs excluded for lack of a median.

Workloads differ by orders of magnitude in tasks per hour (an FB-2010 hour at full scale has
~50x more tasks than an FB-2009 hour), so each workload has its own data scale
(:data:`DEFAULT_SCALES`, chosen so the four contribute thousands of tasks each in an hour).

This module writes one cell's trace (:func:`collect`) or several cells' (:func:`collect_cells`);
the other jobs live in their own modules and are re-exported here:

- :mod:`pipelines._collect_options`: :data:`DEFAULT_LOAD`, :data:`DEFAULT_SCALES`,
  :func:`parse_scales` (``--scale``), :func:`check_workloads` (``--workloads``);
- :mod:`pipelines._collect_load`: :func:`offered_load`, :func:`realised_load`;
- :mod:`pipelines._collect_calibrate`: :func:`scales_for_load` and its calibration and
  bisection runs (:func:`calibration_run`, :func:`nominal_scales`);
- :mod:`pipelines._collect_cell`: :class:`CellRun`, :func:`simulate_cell`,
  :func:`warn_if_saturated`, :func:`write_tables`;
- :mod:`pipelines._collect_cells`: :func:`cell_key`, :func:`workload_groups`,
  :func:`plan_cells`, :func:`collect_cell`, :func:`combine_cells`.
"""

from __future__ import annotations

import time
from pathlib import Path

from pipelines._collect_calibrate import (
    _scale_for_nominal,  # noqa: F401 (tests/test_pipelines_collect.py reads it here)
    calibration_run,
    nominal_scale_task,
    nominal_scales,
    scales_for_load,
)
from pipelines._collect_cell import (
    CellRun,
    simulate_cell,
    simulate_options,
    warn_if_saturated,
    write_tables,
)
from pipelines._collect_cells import (
    cell_key,
    collect_cell,
    combine_cells,
    plan_cells,
    workload_groups,
)
from pipelines._collect_load import offered_load, realised_load
from pipelines._collect_options import DEFAULT_LOAD, DEFAULT_SCALES, check_workloads, parse_scales
from pipelines._dataset import DEFAULT_BETA, DEFAULT_MIN_TASKS, label_stragglers, validate_trace
from pipelines._io import write_summary
from pipelines._sweep import SweepTask, run_sweep

__all__ = [
    "DEFAULT_LOAD",
    "DEFAULT_SCALES",
    "CellRun",
    "calibration_run",
    "cell_key",
    "check_workloads",
    "collect",
    "collect_cell",
    "collect_cells",
    "combine_cells",
    "nominal_scale_task",
    "nominal_scales",
    "offered_load",
    "parse_scales",
    "plan_cells",
    "realised_load",
    "scales_for_load",
    "simulate_cell",
    "simulate_options",
    "warn_if_saturated",
    "workload_groups",
    "write_tables",
]


def collect(
    out: str | Path,
    workloads: list[str],
    nodes: int = 50,
    slots: int = 2,
    hours: float = 1.0,
    seed: int = 0,
    scales: dict[str, float] | None = None,
    policy: str = "none",
    data_dir: str | None = None,
    counters: str = "synthetic",
    beta: float = DEFAULT_BETA,
    min_tasks: int = DEFAULT_MIN_TASKS,
    cluster_seed: int | None = None,
) -> dict:
    """Simulate ``workloads`` on one cluster and write the trace and its summary to ``out``.

    The simulation (:func:`simulate_cell`) is a sweep task: inside a
    :func:`pipelines._sweep.sweep_session` it runs on the session's engine, else here.
    ``cluster_seed`` (default ``seed``) seeds the cluster.

    Returns
    -------
    dict
        The summary written to ``out/summary.json``.
    """
    check_workloads(workloads)
    scales = scales or {w: DEFAULT_SCALES.get(w, 1.0) for w in workloads}
    t0 = time.perf_counter()
    key = f"seed={seed}"
    task = SweepTask(
        key,
        simulate_cell,
        (workloads, scales),
        simulate_options(locals()),
    )
    run: CellRun = run_sweep([task], desc="collect", progress=False)[key]
    warn_if_saturated(run.realised_load, nodes, slots)
    out = Path(out)
    write_tables(out, run.tasks, run.jobs)
    labelled = label_stragglers(validate_trace(run.tasks), beta, min_tasks)
    data = labelled.summary()
    summary = {
        "command": "collect",
        "workloads": workloads,
        "sources": run.sources,
        "synthetic_fallback": run.synthetic_fallback,
        "scales": scales,
        "offered_load": run.offered_load,
        "realised_load": run.realised_load,
        "nodes": nodes,
        "slots": slots,
        "hours": hours,
        "seed": seed,
        "policy": policy,
        "counters_source": counters,
        "attempt_rows": len(run.tasks),
        **data,
        "simulation": run.simulation,
        "wall_seconds": time.perf_counter() - t0,
    }
    write_summary(out, summary)
    return summary


def _mean_by_workload(dicts: list[dict[str, float]]) -> dict[str, float]:
    """Mean of each key over the dicts that have it (cells of one workload have only it)."""
    keys = list(dict.fromkeys(k for d in dicts for k in d))
    return {k: float(sum(d[k] for d in dicts if k in d) / sum(k in d for d in dicts)) for k in keys}


def collect_cells(config, *, engine=None, overwrite: bool = False) -> dict:
    """``straggler collect`` over every (seed, load) cell, on ``engine``.

    Without ``config.seeds`` and ``config.loads`` this is one cell: exactly
    :func:`pipelines.collect_trace` (same files, bit for bit), its calibration and
    simulation run as sweep tasks on ``engine``. Otherwise every cell of
    :func:`plan_cells` is one sweep task (:func:`collect_cell`: calibration, then the
    simulation), run in this process, on a local Dask cluster (``Engine(workers=N)``) or on
    an existing one; the cells run with their own seed on the cluster of ``config.seed``
    (the same machines in every cell, so node names mean the same node), the client
    combines them (:func:`combine_cells`) and writes ``tasks.parquet``, ``jobs.parquet``
    and ``summary.json`` (its ``cells`` list each cell's scales and loads; ``scales``,
    ``sources`` are the first cell's, ``offered_load``/``realised_load`` the means over
    cells). The result is the same whatever the engine. Nothing is written before every
    cell finished, inside :func:`pipelines._api.claimed_output` (an interrupted run leaves
    no output set that looks complete).

    Parameters
    ----------
    config : pipelines.CollectConfig
    engine : pipelines._sweep.Engine, optional
        Default: ``$STRAGGLER_DASK_SCHEDULER`` when set, else this process.
    overwrite : bool
        Replace an earlier run's results in ``config.out``.

    Returns
    -------
    dict
        The summary written to ``config.out/summary.json``.
    """
    import warnings

    from pipelines._api import claimed_output, collect_one
    from pipelines._sweep import Engine, require_dask, sweep_session

    if engine is None:
        engine = Engine.resolve()
    if engine.uses_dask:
        require_dask()
    groups = workload_groups(config) if config.source != "flowbench" else []
    if config.source == "flowbench" or (
        config.seeds is None and config.loads is None and len(groups) == 1
    ):
        with sweep_session(engine):
            return collect_one(config, overwrite=overwrite)
    check_workloads(config.workloads)
    separate = len(groups) > 1  # one workload: the same run either way
    cells = [
        (seed, load, *((group[0],) if separate else ()))
        for seed, load in plan_cells(config)
        for group in groups
    ]
    with claimed_output(config.out, overwrite=overwrite, command="collect"):
        t0 = time.perf_counter()
        tasks = [
            SweepTask(
                cell_key(*cell),
                collect_cell,
                (list(cell[2:]) if separate else list(config.workloads), cell[0], cell[1]),
                dict(
                    scales=(
                        {w: config.scales[w] for w in cell[2:]}
                        if separate and config.scales is not None
                        else config.scales
                    ),
                    cluster_seed=config.seed,
                    nodes=config.nodes,
                    slots=config.slots,
                    hours=config.hours,
                    load_basis=config.load_basis,
                    policy=config.policy,
                    data_dir=config.data_dir,
                    counters=config.counters,
                    beta=config.beta,
                ),
            )
            for cell in cells
        ]
        got = run_sweep(tasks, engine, desc="collect", unit="cell")
        runs = {cell: got[cell_key(*cell)] for cell in cells}
        for cell, run in runs.items():
            for message in run.warnings:
                warnings.warn(f"cell {cell_key(*cell)}: {message}", stacklevel=2)
            warn_if_saturated(run.realised_load, config.nodes, config.slots, f" {cell_key(*cell)}")
        table, jobs = combine_cells(runs)
        labelled = label_stragglers(validate_trace(table), config.beta, DEFAULT_MIN_TASKS)
        # a workload's scale and source: its first cell's (every workload is in the first
        # (seed, load)'s cells, together or one each)
        scales: dict[str, float] = {}
        sources: dict[str, str] = {}
        for run in runs.values():
            for w, v in run.scales.items():
                scales.setdefault(w, v)
            for w, v in run.sources.items():
                sources.setdefault(w, v)
        fallback = {w for run in runs.values() for w in run.synthetic_fallback}
        summary = {
            "command": "collect",
            "workloads": list(config.workloads),
            "layout": config.layout,
            "cells": [
                {
                    "cell": cell_key(*cell),
                    "seed": cell[0],
                    "load": cell[1],
                    "workloads": list(cell[2:]) if separate else list(config.workloads),
                    "scales": run.scales,
                    "sources": run.sources,
                    "synthetic_fallback": run.synthetic_fallback,
                    "offered_load": run.offered_load,
                    "realised_load": run.realised_load,
                    "attempt_rows": len(run.tasks),
                    "simulation": run.simulation,
                }
                for cell, run in runs.items()
            ],
            "seeds": list(dict.fromkeys(c[0] for c in cells)),
            "loads": [v for v in dict.fromkeys(c[1] for c in cells) if v is not None],
            "sources": sources,
            "synthetic_fallback": [w for w in config.workloads if w in fallback],
            "scales": scales,
            "offered_load": _mean_by_workload([r.offered_load for r in runs.values()]),
            "realised_load": _mean_by_workload([r.realised_load for r in runs.values()]),
            "nodes": config.nodes,
            "slots": config.slots,
            "hours": config.hours,
            "seed": config.seed,
            "policy": config.policy,
            "counters_source": config.counters,
            "attempt_rows": len(table),
            **labelled.summary(),
            "engine": engine.describe(),
            "wall_seconds": time.perf_counter() - t0,
        }
        out = Path(config.out)
        write_tables(out, table, jobs)
        write_summary(out, summary)
    return summary
