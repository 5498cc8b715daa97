"""A test workload whose jobs crowd a few nodes of many slots, and a run's tables (shared by
the scan tests and the engine's fast-path tests), and two runs' tables compared."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import sim_bridge
from sim_bridge import JobSpec, Workload


def crowded_workload(
    seed: int,
    n_jobs: int,
    maps: tuple[int, int] = (4, 40),
    gap: float = 20.0,
    name: str = "CROWD",
) -> Workload:
    """``n_jobs`` jobs of ``maps`` (4-40) maps and 0-6 reduces arriving about every ``gap``
    (20) s, the workload ``name`` (its jobs named ``c0``, ``c1``, ... after its initial): on few
    nodes of many slots co-tenants share every node, so most progress reads are under
    co-located demand."""
    rng = np.random.default_rng(seed)
    jobs, t = [], 0.0
    for i in range(n_jobs):
        t += float(rng.exponential(gap))
        n_maps = rng.uniform(20.0, 200.0, int(rng.integers(*maps)))
        reds = rng.uniform(20.0, 100.0, int(rng.integers(0, 7)))
        jobs.append(JobSpec(f"{name[0].lower()}{i}", t, n_maps, reds, workload=name))
    return Workload(name, jobs, tail_alpha=1.6)


def run_tables(res) -> dict[str, pd.DataFrame]:
    """The run's task and job tables (a streamed run's tasks from its Parquet trace)."""
    tasks = res.tasks if res.tasks is not None else pd.read_parquet(res.summary["trace_path"])
    out = {"tasks": tasks}
    if res.jobs is not None:
        out["jobs"] = res.jobs
    return out


def simulate_tables(workload, kw: dict, out: Path | None = None):
    """``(tasks, jobs)`` of ``sim_bridge.simulate(workload, **kw)``, or streamed to ``out``
    (a Parquet trace) ``(tasks read back, None)``."""
    if out is not None:
        sim_bridge.simulate(workload, trace_sink=out, progress=False, **kw)
        return pd.read_parquet(out), None
    r = sim_bridge.simulate(workload, progress=False, **kw)
    return r.tasks, r.jobs


def assert_same_tables(tasks, jobs, tasks0, jobs0) -> None:
    """Two runs' task tables (in attempt order: a streamed trace is in job-finish order) and
    job tables are equal, bit for bit."""
    key = ["job_id", "task_id", "attempt"]
    pd.testing.assert_frame_equal(
        tasks.sort_values(key).reset_index(drop=True),
        tasks0.sort_values(key).reset_index(drop=True),
        check_exact=True,
    )
    pd.testing.assert_frame_equal(jobs, jobs0, check_exact=True)


def mapreduce_workload(
    n_jobs: int, seed: int, gap: float, max_maps: int, map_mu: float
) -> Workload:
    """``n_jobs`` FB2009-labelled jobs of 1 to ``max_maps - 1`` maps (lognormal ``map_mu``,
    0.8) and 0-3 reduces (lognormal 3.0, 0.5), arriving every ``gap`` s on average: on a
    small cluster they queue, so jobs stay alive with done tasks while later ones run."""
    rng = np.random.default_rng(seed)
    jobs, t = [], 0.0
    for i in range(n_jobs):
        t += float(rng.exponential(gap))
        maps = rng.lognormal(map_mu, 0.8, int(rng.integers(1, max_maps)))
        reds = rng.lognormal(3.0, 0.5, int(rng.integers(0, 4)))
        jobs.append(JobSpec(f"j{i}", t, maps, reds, workload="FB2009"))
    return Workload("FB2009", jobs)
