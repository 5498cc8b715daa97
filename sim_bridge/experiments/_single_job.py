"""One job of ``n`` tasks with i.i.d. durations under pi_keep / pi_kill, run on the engine."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sim_bridge._cluster import Cluster
from sim_bridge._engine import Simulator
from sim_bridge._workloads import JobSpec, Workload
from sim_bridge.policies._placement import FIFOPlacement
from sim_bridge.policies._single_fork import PiKeep, PiKill

__all__ = ["EmpiricalDistribution", "run_seeds", "single_job"]


def run_seeds(seed: int, runs: int) -> list[int]:
    """``runs`` independent engine seeds derived from ``seed`` (``numpy.random.SeedSequence``).

    Examples
    --------
    >>> run_seeds(0, 3) == run_seeds(0, 3), len(set(run_seeds(0, 100)))
    (True, 100)
    """
    state = np.random.SeedSequence(int(seed)).generate_state(int(runs), dtype=np.uint32)
    return [int(s) for s in state]


def _run_one(spec, policy, slots: int, dist: Any, seed: int) -> tuple[float, float, int]:
    """One engine run: (job latency, total machine time of all attempts, attempts).

    Drives :class:`sim_bridge._engine.Simulator` directly, as :func:`sim_bridge.simulate`
    does, but reads the job and its attempts instead of building the trace tables (which
    cost as much as the run itself for one job).
    """
    policy.validate()
    policy.reset()
    placement = FIFOPlacement()
    placement.reset()
    cluster = Cluster(1, slots, seed, ideal=True)
    sim = Simulator(
        cluster, [Workload("SYN", spec)], policy, placement, seed=seed, duration_dist=dist
    )
    sim.run()
    job = sim.jobs[0]
    # the run is over: every attempt ended and the job finished (end_time, finish_time set)
    busy = sum(a.end_time - a.launch_time for a in sim.attempts if a.end_time is not None)
    assert job.finish_time is not None
    jct = job.finish_time - job.submit_time
    return jct, busy, len(sim.attempts)


def _check(dist: Any, n_tasks: Any, p: Any, r: Any, keep: Any, runs: Any, seed: Any) -> None:
    if not hasattr(dist, "rvs"):
        raise ValueError(f"parameter dist must be a frozen scipy distribution, got {dist!r}")
    for name, v, lo in (("n_tasks", n_tasks, 1), ("r", r, 0), ("runs", runs, 2), ("seed", seed, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"parameter {name} must be an integer >= {lo}, got {v!r}")
    if not (isinstance(p, (int, float)) and 0.0 <= p < 1.0):
        raise ValueError(f"parameter p must be in [0, 1), got {p!r}")
    if not isinstance(keep, (bool, np.bool_)):
        raise ValueError(f"parameter keep must be a bool, got {keep!r}")


def single_job(
    dist: Any,
    n_tasks: int,
    p: float,
    r: int,
    keep: bool,
    runs: int = 200,
    seed: int = 0,
    *,
    progress: bool = False,
) -> dict[str, Any]:
    """Mean latency and cost of ``pi_keep/pi_kill(p, r)`` on one job, by running the engine.

    Each run simulates one job of ``n_tasks`` tasks of unit work whose attempts last i.i.d.
    draws of ``dist`` (``simulate(..., duration_dist=dist)``), on one node with
    ``n_tasks * (r + 1)`` slots, enough for every replica, so no task ever waits (the node
    model is ignored when ``duration_dist`` is given; one wide node is much cheaper to build
    than ``n (r + 1)`` single-slot nodes and gives the same trajectories). Latency is the
    job's completion time, cost is eq. 4 of seed 002: the machine time of every attempt,
    killed ones included, divided by ``n``.

    Parameters
    ----------
    dist : frozen scipy.stats distribution
        Task execution time ``X`` (e.g. ``scipy.stats.expon(loc=1, scale=1)`` for
        ShiftedExp(1, 1), ``scipy.stats.pareto(b=2, scale=2)`` for Pareto(2, 2)).
    n_tasks : int
    p : float
        Straggler fraction in ``[0, 1)``; ``floor(p n)`` tasks are replicated.
    r : int
        Replicas added per straggler (``keep``) or ``r + 1`` fresh ones (kill).
    keep : bool
        ``pi_keep`` if True, ``pi_kill`` if False.
    runs : int
        Independent simulated jobs (``>= 2``).
    seed : int
        Root seed; run ``i`` uses the engine seed ``run_seeds(seed, runs)[i]``.
    progress : bool
        Show a tqdm bar over the runs (``TQDM_DISABLE`` wins).

    Returns
    -------
    dict
        ``latency, cost`` (means), ``latency_se, cost_se`` (standard errors of the means),
        ``latency_sd, cost_sd``, ``copies`` (mean extra attempts per job) and the inputs.

    Examples
    --------
    >>> from scipy import stats
    >>> out = single_job(stats.expon(loc=1.0, scale=1.0), 20, 0.1, 1, True, runs=20, seed=0)
    >>> sorted(out)[:4], out["runs"]
    (['copies', 'cost', 'cost_sd', 'cost_se'], 20)
    >>> out == single_job(stats.expon(loc=1.0, scale=1.0), 20, 0.1, 1, True, runs=20, seed=0)
    True
    """
    _check(dist, n_tasks, p, r, keep, runs, seed)
    n = int(n_tasks)
    policy = PiKeep(p=float(p), r=int(r)) if keep else PiKill(p=float(p), r=int(r))
    spec = [JobSpec("job", 0.0, np.ones(n))]
    lat = np.empty(runs)
    cost = np.empty(runs)
    copies = np.empty(runs)
    it = enumerate(run_seeds(seed, runs))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=runs, unit="job", desc=f"single_job {policy.name}(p={p}, r={r})")
    try:
        for i, s in it:
            lat[i], machine_time, n_attempts = _run_one(spec, policy, n * (int(r) + 1), dist, s)
            cost[i] = machine_time / n
            copies[i] = n_attempts - n
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    root = math.sqrt(runs)
    return {
        "latency": float(lat.mean()),
        "cost": float(cost.mean()),
        "latency_se": float(lat.std(ddof=1) / root),
        "cost_se": float(cost.std(ddof=1) / root),
        "latency_sd": float(lat.std(ddof=1)),
        "cost_sd": float(cost.std(ddof=1)),
        "copies": float(copies.mean()),
        "n_tasks": n,
        "p": float(p),
        "r": int(r),
        "keep": bool(keep),
        "policy": policy.name,
        "runs": int(runs),
        "seed": int(seed),
    }


class EmpiricalDistribution:
    """Draws with replacement from observed task times, usable as ``duration_dist``.

    The engine only calls ``rvs(size=..., random_state=...)``; this is the empirical c.d.f.
    ``F^`` of Algorithm 1 of seed 002 as a distribution the engine can sample.

    Examples
    --------
    >>> d = EmpiricalDistribution([1.0, 2.0, 4.0])
    >>> d.rvs(size=4, random_state=np.random.default_rng(0)).tolist()
    [4.0, 2.0, 2.0, 1.0]
    >>> EmpiricalDistribution([1.0, -2.0])
    Traceback (most recent call last):
    ...
    ValueError: parameter samples must be finite and >= 0; samples[1] = -2.0
    """

    def __init__(self, samples: Any):
        x = np.asarray(samples, dtype=float).ravel()
        if x.size == 0:
            raise ValueError("parameter samples is empty")
        bad = np.flatnonzero(~np.isfinite(x) | (x < 0))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"parameter samples must be finite and >= 0; samples[{i}] = {float(x[i])!r}"
            )
        self.samples = x

    def rvs(self, size: Any = None, random_state: Any = None) -> Any:
        rng = np.random.default_rng(random_state)
        if size is None:
            return float(self.samples[rng.integers(0, self.samples.size)])
        return self.samples[rng.integers(0, self.samples.size, size=size)]

    def mean(self) -> float:
        return float(self.samples.mean())

    def __repr__(self) -> str:
        return f"EmpiricalDistribution({self.samples.size} samples)"
