"""Seed 002's experiments: ``E[T]`` vs ``n``, ``E[T]`` and ``E[C]`` vs ``p``, and the policy
choice on an empirical sample (part of :mod:`pipelines._reproduce_002`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

#: name -> frozen distribution of Figs. 3-6
DISTRIBUTIONS: dict[str, Any] = {
    "ShiftedExp(1,1)": stats.expon(loc=1.0, scale=1.0),
    "Pareto(2,2)": stats.pareto(b=2.0, scale=2.0),
}


#: (r, keep) curves of Figs. 4 and 6 (r = 0 with keep is the baseline itself)
CONFIGS: tuple[tuple[int, bool], ...] = ((0, False), (1, True), (1, False), (2, True), (2, False))


def _vs_n_point(d: str, p: float, r: int, k: bool, n: int, runs: int, seed: int) -> dict:
    """One point of Figs. 3/5 (a sweep task: its seed is part of its arguments)."""
    from sim_bridge.experiments import single_job
    from sim_bridge.theory import single_fork_analytic

    dist = DISTRIBUTIONS[d]
    sim = single_job(dist, n, p, r, k, runs=runs, seed=seed)
    lat, cost = single_fork_analytic(dist, p, r, k, n, method="closed")
    return {
        "dist": d,
        "p": p,
        "r": r,
        "keep": k,
        "n": n,
        "sim_latency": sim["latency"],
        "sim_latency_se": sim["latency_se"],
        "analysis_latency": lat,
        "sim_cost": sim["cost"],
        "sim_cost_se": sim["cost_se"],
        "analysis_cost": cost,
    }


def latency_vs_n(
    n_grid, runs: int, seed: int, progress: bool = False, ps=(0.1, 0.2)
) -> pd.DataFrame:
    """Figs. 3 and 5: simulated and analytic ``E[T]`` (and ``E[C]``) against ``n``.

    One sweep task per point (:func:`pipelines._sweep.run_sweep`: on Dask inside
    ``reproduce --workers``), seeded by its position in the grid as before."""
    from pipelines._sweep import SweepTask, run_sweep

    combos = [
        (d, p, r, k, n)
        for d in DISTRIBUTIONS
        for p in ps
        for r, k in ((1, True), (1, False), (2, True), (2, False))
        for n in n_grid
    ]
    tasks = [
        SweepTask(
            f"dist={d}/p={p}/r={r}/keep={k}/n={n}",
            _vs_n_point,
            (d, p, r, k, int(n), runs, seed + 1000 * i),
        )
        for i, (d, p, r, k, n) in enumerate(combos)
    ]
    rows = run_sweep(tasks, desc="seed 002 Figs. 3/5", unit="pt", progress=progress)
    df = pd.DataFrame(list(rows.values()))
    df["latency_rel_diff"] = (df.sim_latency - df.analysis_latency) / df.analysis_latency
    df["latency_z"] = (df.sim_latency - df.analysis_latency) / df.sim_latency_se
    return df


def _vs_p_point(d: str, p: float, r: int, k: bool, n: int, runs: int, seed: int) -> dict:
    """One point of Figs. 4/6 (a sweep task): a Figs. 3/5 point plus the exact finite-n
    analysis."""
    from sim_bridge.theory import single_fork_analytic

    row = _vs_n_point(d, p, r, k, n, runs, seed)
    row["exact_latency"], row["exact_cost"] = single_fork_analytic(
        DISTRIBUTIONS[d], p, r, k, n, method="exact"
    )
    return row


def metrics_vs_p(n: int, p_grid, runs: int, seed: int, progress: bool = False) -> pd.DataFrame:
    """Figs. 4 and 6: ``E[T]``, ``E[C]`` against ``p`` for ``r = 0..2``, keep and kill, plus
    the baseline ``p = 0`` (no replication) per distribution (one sweep task per point)."""
    from pipelines._sweep import SweepTask, run_sweep

    combos = [(d, 0.0, 0, True) for d in DISTRIBUTIONS]
    combos += [(d, p, r, k) for d in DISTRIBUTIONS for r, k in CONFIGS for p in p_grid]
    tasks = [
        SweepTask(
            f"dist={d}/p={p}/r={r}/keep={k}",
            _vs_p_point,
            (d, p, r, k, n, runs, seed + 7919 * (i + 1)),
        )
        for i, (d, p, r, k) in enumerate(combos)
    ]
    rows = run_sweep(tasks, desc="seed 002 Figs. 4/6", unit="pt", progress=progress)
    return pd.DataFrame(list(rows.values()))


def empirical_sample(n_tasks: int, seed: int) -> np.ndarray:
    """Task times of one ``n_tasks``-task job run by the engine's node model without
    speculation (SYN profile, contention, heavy-tailed noise) on 50 nodes x 2 slots: the
    stand-in for the paper's Google trace jobs (Fig. 7)."""
    from sim_bridge import JobSpec, simulate

    res = simulate(
        [JobSpec("emp", 0.0, np.full(n_tasks, 10.0))],
        "none",
        nodes=50,
        slots=2,
        seed=seed,
        record_counters=False,
        progress=False,
    )
    return res.tasks["duration"].to_numpy(dtype=float)


def empirical_study(
    sample: np.ndarray,
    n: int,
    p_grid,
    n_boot: int,
    runs: int,
    seed: int,
    lam: float = 0.1,
    progress: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Algorithm 1 over the grid, eqs. 19 / 20, and the engine's check of the choices.

    Returns the bootstrap grid and a table with one row per chosen policy (baseline,
    latency-sensitive, cost-sensitive): bootstrap and engine latency / cost.
    """
    from sim_bridge.experiments import EmpiricalDistribution, single_job
    from sim_bridge.theory import bootstrap_single_fork, choose_single_fork_policy

    def est(p, r, keep):
        return bootstrap_single_fork(sample, p, r, keep, n, n_boot=n_boot, seed=seed)

    grid_p = [p for p in p_grid if abs(p * n - round(p * n)) < 1e-6]
    lat_choice, grid = choose_single_fork_policy(
        est, "latency", p_grid=grid_p, r_max=4, progress=progress
    )
    cost_choice, _ = choose_single_fork_policy(
        est, "cost", p_grid=grid_p, r_max=4, lam=lam, n=n, progress=False
    )
    base = grid.iloc[0]
    dist = EmpiricalDistribution(sample)
    rows = []
    for i, (label, p, r, keep, blat, bcost) in enumerate(
        (
            ("baseline", 0.0, 0, True, base.latency, base.cost),
            (
                "latency-sensitive (eq. 19)",
                lat_choice.p,
                lat_choice.r,
                lat_choice.keep,
                lat_choice.latency,
                lat_choice.cost,
            ),
            (
                f"cost-sensitive (eq. 20, lambda={lam})",
                cost_choice.p,
                cost_choice.r,
                cost_choice.keep,
                cost_choice.latency,
                cost_choice.cost,
            ),
        )
    ):
        sim = single_job(dist, n, p, r, keep, runs=runs, seed=seed + 31 * (i + 1))
        rows.append(
            {
                "policy": label,
                "p": p,
                "r": r,
                "keep": keep,
                "bootstrap_latency": blat,
                "bootstrap_cost": bcost,
                "engine_latency": sim["latency"],
                "engine_latency_se": sim["latency_se"],
                "engine_cost": sim["cost"],
                "engine_cost_se": sim["cost_se"],
            }
        )
    return grid, pd.DataFrame(rows)
