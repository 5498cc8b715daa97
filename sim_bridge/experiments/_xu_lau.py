"""Xu & Lau's simulation settings (seeds 000 and 001) on the engine.

Every machine is one slot; tasks of a job share a mean ``E[x]`` and last i.i.d.
Pareto(``alpha``) times (the engine's ``duration_dist`` times the task's base work, which we set
to ``E[x]``). The policies know ``E[x]`` and ``alpha`` (the papers' assumption).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from sim_bridge._simulate import simulate
from sim_bridge._workloads import JobSpec
from sim_bridge.policies.base import PlacementPolicy

__all__ = [
    "SlotHold",
    "pareto_unit_mean",
    "run_cluster",
    "sigma_sweep",
    "xu_lau_jobs",
]


class SlotHold(PlacementPolicy):
    """Placement that never places: the slotted Xu & Lau policies place every task themselves at
    slot starts (not registered: on its own it would leave tasks waiting forever)."""

    name = "slot-hold"


def pareto_unit_mean(alpha: float) -> Any:
    """Pareto(``alpha``) with mean 1 (scale ``(alpha - 1) / alpha``), a frozen scipy law.

    Examples
    --------
    >>> round(float(pareto_unit_mean(2.0).mean()), 6)
    1.0
    """
    if not (isinstance(alpha, (int, float)) and alpha > 1.0):
        raise ValueError(f"parameter alpha must be > 1, got {alpha!r}")
    return stats.pareto(b=float(alpha), scale=(alpha - 1.0) / alpha)


def xu_lau_jobs(
    rate: float,
    horizon: float,
    seed: int,
    tasks: tuple[int, int] = (1, 100),
    mean_range: tuple[float, float] = (1.0, 4.0),
) -> list[JobSpec]:
    """The papers' workload: Poisson arrivals of ``rate`` jobs per unit over ``horizon``,
    ``m ~ U{tasks}`` tasks per job, task mean ``E[x] ~ U(mean_range)`` per job.

    Examples
    --------
    >>> jobs = xu_lau_jobs(2.0, 10.0, seed=1)
    >>> 5 < len(jobs) < 40, all(1 <= j.n_tasks <= 100 for j in jobs)
    (True, True)
    """
    if not (isinstance(rate, (int, float)) and rate > 0):
        raise ValueError(f"parameter rate must be > 0, got {rate!r}")
    if not (isinstance(horizon, (int, float)) and horizon > 0):
        raise ValueError(f"parameter horizon must be > 0, got {horizon!r}")
    rng = np.random.default_rng([int(seed), 4000])
    jobs = []
    t = float(rng.exponential(1.0 / rate))
    k = 0
    while t < horizon:
        m = int(rng.integers(tasks[0], tasks[1] + 1))
        ex = float(rng.uniform(*mean_range))
        jobs.append(JobSpec(f"x{k}", t, np.full(m, ex), workload="XULAU"))
        k += 1
        t += float(rng.exponential(1.0 / rate))
    if not jobs:
        raise ValueError(f"no job arrives in horizon {horizon!r} at rate {rate!r}")
    return jobs


def run_cluster(
    policy: Any,
    jobs: list[JobSpec],
    machines: int,
    alpha: float = 2.0,
    seed: int = 0,
    policy_params: dict[str, Any] | None = None,
    progress: bool = False,
    dist: Any = None,
) -> pd.DataFrame:
    """Run ``jobs`` on ``machines`` single-slot machines; one row per job with ``flowtime``
    (completion minus arrival), ``resource`` (machine time of all its attempts, killed ones
    included), ``n_tasks``, ``attempts`` and ``policy``.

    A policy given with ``policy_params["slotted"] = True`` decides only at slot starts and
    places tasks itself (:class:`SlotHold` placement); any other runs with FIFO placement.
    ``dist`` replaces the unit-mean Pareto(``alpha``) task-time multiplier.

    Examples
    --------
    >>> df = run_cluster("none", xu_lau_jobs(1.0, 3.0, seed=0), machines=50)
    >>> bool((df.attempts == df.n_tasks).all()), list(df.columns)[:3]
    (True, ['job_id', 'policy', 'flowtime'])
    """
    slotted = bool((policy_params or {}).get("slotted", False))
    res = simulate(
        jobs,
        policy,
        SlotHold() if slotted else "fifo",
        nodes=int(machines),
        slots=1,
        duration_dist=pareto_unit_mean(alpha) if dist is None else dist,
        ideal=True,
        seed=int(seed),
        record_counters=False,
        policy_params=policy_params,
        progress=progress,
    )
    t = res.tasks
    assert t is not None  # kept in memory: no trace_sink was given
    resource = t.groupby("job_id", sort=False)["duration"].sum()
    attempts = t.groupby("job_id", sort=False).size()
    j = res.jobs
    return pd.DataFrame(
        {
            "job_id": j["job_id"].to_numpy(),
            "policy": res.summary["policy"],
            "flowtime": j["jct"].to_numpy(),
            "resource": j["job_id"].map(resource).to_numpy(),
            "n_tasks": j["n_tasks"].to_numpy(),
            "attempts": j["job_id"].map(attempts).to_numpy(),
        }
    )


def sigma_sweep(
    sigmas,
    n_tasks: int,
    machines: int,
    runs: int,
    seed: int,
    alpha: float = 2.0,
    interval: float = 0.1,
    progress: bool = False,
    dist: Any = None,
) -> pd.DataFrame:
    """Fig. 5 of seed 000: one job of ``n_tasks`` unit-mean tasks on ``machines`` machines
    under ESE with each threshold ``sigma`` (and ``sigma = nan``: no backup), ``runs`` runs
    each; returns one row per (sigma, run) with the job's ``resource`` and ``flowtime``.
    ``dist`` replaces the unit-mean Pareto(``alpha``) task times (e.g. ``expon()``, seed 001).

    Examples
    --------
    >>> df = sigma_sweep([1.7], n_tasks=50, machines=5, runs=2, seed=0)
    >>> df.shape, int(df.sigma.isna().sum())
    ((4, 4), 2)
    """
    from tqdm.auto import tqdm

    jobs = [JobSpec("single", 0.0, np.ones(int(n_tasks)), workload="XULAU")]
    cases = [float("nan")] + [float(s) for s in sigmas]
    rows = []
    bar = tqdm(total=len(cases) * runs, desc="seed 000 Fig. 5", disable=not progress)
    for sigma in cases:
        for k in range(runs):
            if np.isnan(sigma):
                pol, params = "none", None
            else:
                pol = "ese"
                params = {"sigma": sigma, "alpha": alpha, "interval": interval, "slotted": True}
            df = run_cluster(
                pol, jobs, machines, alpha, seed=seed * 1000 + k, policy_params=params, dist=dist
            )
            rows.append(
                {
                    "sigma": sigma,
                    "run": k,
                    "resource": float(df.resource.iloc[0]),
                    "flowtime": float(df.flowtime.iloc[0]),
                }
            )
            bar.update(1)
    bar.close()
    return pd.DataFrame(rows)
