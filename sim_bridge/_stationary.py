"""A trace's job mix at a constant arrival rate: the stationary control for memory and load.

A production trace's load follows its day: FB-2010's busiest hour brings about twice the
day's mean work, and its live tasks grow threefold from 6 to 14 h. An engine whose memory
follows the work alive then peaks with the trace, and a peak against the clock cannot say
whether it also grows with the tasks ever run (a leak). :func:`stationary_workload` takes the
trace's own jobs, drawn with replacement, and sends them as a Poisson process of one rate.
The work alive then tends to a steady level, but only once the longest jobs' durations have
passed: FB-2010's live tasks still grew from 6 to 18 h of such a load (README, "Big
replays"). Memory that grows with the clock beyond the work alive grows with what has run.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from sim_bridge._workload_spec import JobSpec, Workload

__all__ = ["mean_rate", "stationary_workload"]


def mean_rate(jobs: list[JobSpec]) -> float:
    """Jobs a second over the span of their arrivals: ``(n - 1) / (last - first)``.

    Examples
    --------
    >>> mean_rate([JobSpec("a", 0.0, [1.0]), JobSpec("b", 30.0, [1.0]), JobSpec("c", 60.0, [1.0])])
    0.03333333333333333
    """
    span = jobs[-1].submit_time - jobs[0].submit_time
    if len(jobs) < 2 or not span > 0:
        raise ValueError(
            f"the workload's {len(jobs)} job(s) arrive at one instant: no mean rate; pass rate="
        )
    return (len(jobs) - 1) / span


def stationary_workload(
    workload: Workload,
    hours: float,
    *,
    rate: float | None = None,
    seed: int = 0,
) -> Workload:
    """The jobs of ``workload`` drawn with replacement, arriving at one constant rate.

    Parameters
    ----------
    workload : Workload
        The job mix: each new job is a copy of one of its jobs, drawn uniformly, with its
        tasks' base work, stage names, label and relative deadline (its arrays are shared,
        not copied: a job spec is read, never written).
    hours : float
        Arrivals over ``[0, hours * 3600)`` seconds.
    rate : float, optional
        Jobs a second; by default the workload's own mean over the span of its arrivals, so
        the stationary version brings the trace's mean load.
    seed : int
        Seed of the draws (arrival gaps, then which job).

    Returns
    -------
    Workload
        Named as ``workload``, with its profiles and noise tail, ``source`` saying what it
        was drawn from; job ``k`` is ``"<original id>#k"``.

    Examples
    --------
    >>> w = Workload("X", [JobSpec("a", 0.0, [5.0]), JobSpec("b", 60.0, [9.0, 9.0])])
    >>> s = stationary_workload(w, 2.0, seed=1)
    >>> round(len(s.jobs) / (2 * 3600 / 60), 1)  # the mean rate: one job a minute
    1.0
    >>> s.jobs[0].job_id.split("#")[0] in {"a", "b"}, s.name
    (True, 'X')
    >>> stationary_workload(w, 1.0, rate=0.0)
    Traceback (most recent call last):
    ...
    ValueError: parameter rate must be > 0 and finite, got 0.0
    """
    if not (isinstance(hours, (int, float)) and hours > 0 and math.isfinite(hours)):
        raise ValueError(f"parameter hours must be > 0 and finite, got {hours!r}")
    jobs = workload.jobs
    if not jobs:
        raise ValueError(f"workload {workload.name!r} has no job to draw from")
    if rate is None:
        rate = mean_rate(jobs)
    elif not (rate > 0 and math.isfinite(rate)):
        raise ValueError(f"parameter rate must be > 0 and finite, got {rate!r}")
    rng = np.random.default_rng(seed)
    end = hours * 3600.0
    n = int(end * rate)
    times = np.cumsum(rng.exponential(1.0 / rate, size=n + 8 * int(math.sqrt(n)) + 16))
    while times[-1] < end:  # rare: more arrivals than the mean plus eight deviations
        more = times[-1] + np.cumsum(rng.exponential(1.0 / rate, size=n + 16))
        times = np.concatenate([times, more])
    times = times[times < end]
    picks = rng.integers(len(jobs), size=times.size)
    out = []
    for k, (t, i) in enumerate(zip(times.tolist(), picks.tolist(), strict=True)):
        src = jobs[i]
        job = copy.copy(src)  # the packed work arrays shared (the setters would pack again)
        job.job_id = f"{src.job_id}#{k}"
        job.submit_time = t
        if src.deadline is not None:
            job.deadline = t + (src.deadline - src.submit_time)
        out.append(job)
    return Workload(
        workload.name,
        out,
        profiles=dict(workload.profiles),
        tail_alpha=workload.tail_alpha,
        source=f"stationary({workload.source}, rate={rate:.6g}/s, seed={seed})",
    )
