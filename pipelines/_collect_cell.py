"""One collect simulation (a *cell*): its result, the saturation warning and the trace
files (part of :mod:`pipelines._collect`)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mtl._atomic import atomic_path
from pipelines._collect_load import offered_load, realised_by_request
from pipelines._dataset import DEFAULT_BETA

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class CellRun:
    """One collect simulation (a *cell*: a seed and a target load or given scales).

    Attributes
    ----------
    tasks, jobs : pandas.DataFrame
        The attempt and job tables (:mod:`sim_bridge.trace`).
    simulation : dict
        The simulation summary's scalar entries.
    sources : dict
        Requested workload -> the file (or ``"synthetic"``) it was loaded from.
    synthetic_fallback : list of str
        Requested workloads that had no data file and ran as the synthetic one.
    scales, offered_load, realised_load : dict
        Per requested workload: the data scale, :func:`offered_load`, :func:`realised_load`.
    warnings : list of str
        Warnings raised while calibrating or simulating (a Dask worker's would be lost).
    """

    tasks: pd.DataFrame
    jobs: pd.DataFrame
    simulation: dict[str, Any]
    sources: dict[str, str]
    synthetic_fallback: list[str]
    scales: dict[str, float]
    offered_load: dict[str, float]
    realised_load: dict[str, float]
    warnings: list[str] = field(default_factory=list)


def simulate_cell(
    workloads: list[str],
    scales: dict[str, float],
    *,
    nodes: int = 50,
    slots: int = 2,
    hours: float = 1.0,
    seed: int = 0,
    cluster_seed: int | None = None,
    policy: str = "none",
    data_dir: str | None = None,
    counters: str = "synthetic",
    beta: float = DEFAULT_BETA,
    progress: bool | None = None,
) -> CellRun:
    """Simulate ``workloads`` at ``scales`` on one cluster (a sweep task of ``collect``).

    Workload ``k`` draws with ``seed + k``; the run with ``seed``; the cluster with
    ``cluster_seed`` (default ``seed``).

    Examples
    --------
    >>> run = simulate_cell(["SYN"], {"SYN": 0.05}, nodes=3, hours=0.1, seed=1)
    >>> run.sources, len(run.tasks) > 0, run.realised_load["SYN"] > 0
    ({'SYN': 'synthetic'}, True, True)
    """
    import sim_bridge

    loaded = [
        sim_bridge.load_workload(w, data_dir, hours=hours, scale=scales[w], seed=seed + k)
        for k, w in enumerate(workloads)
    ]
    result = sim_bridge.simulate(
        loaded,
        policy,
        nodes=nodes,
        slots=slots,
        seed=seed,
        cluster_seed=cluster_seed,
        data_dir=data_dir,
        counters=counters,
        beta=beta,
        progress=progress,
    )
    pairs = list(zip(workloads, loaded, strict=True))
    return CellRun(
        tasks=result.tasks,
        jobs=result.jobs,
        simulation={k: v for k, v in result.summary.items() if not isinstance(v, (dict, list))},
        sources={req: w.source for req, w in pairs},
        synthetic_fallback=[req for req, w in pairs if req != w.name],
        scales=dict(scales),
        offered_load={req: offered_load(w, nodes, slots, hours) for req, w in pairs},
        realised_load=realised_by_request(result.tasks, workloads, loaded, nodes, slots, hours),
    )


def simulate_options(values: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`simulate_cell`'s settings (its keyword arguments but ``progress``) taken from
    ``values``, in its signature's order.

    The one place that names them for its two callers, whose parameters carry the same
    names and which pass their ``locals()``: :func:`pipelines._collect.collect` (the
    keyword arguments of its sweep task) and :func:`pipelines._collect_cells.collect_cell`.

    Raises
    ------
    KeyError
        ``values`` lacks one of the settings.

    Examples
    --------
    >>> settings = dict(nodes=3, slots=2, hours=0.1, seed=1, cluster_seed=None,
    ...                 policy="none", data_dir=None, counters="synthetic", beta=1.5)
    >>> simulate_options({**settings, "out": "elsewhere"}) == settings
    True
    >>> list(simulate_options(settings))[:3]
    ['nodes', 'slots', 'hours']
    """
    names = [
        p.name
        for p in inspect.signature(simulate_cell).parameters.values()
        if p.kind is p.KEYWORD_ONLY and p.name != "progress"
    ]
    return {name: values[name] for name in names}


def warn_if_saturated(realised: dict[str, float], nodes: int, slots: int, what: str = "") -> None:
    """Warn when a realised load (summed over workloads) is above 1."""
    if sum(realised.values()) > 1.0:
        import warnings

        warnings.warn(
            f"collect{what}: realised load {sum(realised.values()):.2f} > 1 ({nodes} nodes x "
            f"{slots} slots): the cluster saturates and queueing dominates job completion "
            "times; use --load (e.g. 0.7), smaller --scale values or more --nodes",
            stacklevel=3,
        )


def write_tables(out: Path, tasks: pd.DataFrame, jobs: pd.DataFrame) -> None:
    """Write ``tasks.parquet`` and ``jobs.parquet`` into ``out`` (each atomically)."""
    out.mkdir(parents=True, exist_ok=True)
    for name, table in (("tasks", tasks), ("jobs", jobs)):
        with atomic_path(out / f"{name}.parquet") as tmp:
            table.to_parquet(tmp, index=False)
