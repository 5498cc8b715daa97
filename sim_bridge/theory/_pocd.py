"""Deadline-aware speculation (seed 003, Shed / Shed+): PoCD of new and running jobs
(Theorems 1-2), the greedy online allocation (Algorithm 1) and Dolly's clone count."""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ._common import check_int, check_positive, check_probability

__all__ = [
    "ShedJob",
    "dolly_clone_count",
    "dolly_job_miss_probability",
    "pareto_shape_from_remaining",
    "pocd_new_job",
    "pocd_running_job",
    "shed_plus_allocation",
    "task_pocd",
]


def pocd_new_job(
    n_tasks: int, deadline: float, t_min: float, beta: float, extra_attempts: int = 0
) -> float:
    """Theorem 1 of seed 003: PoCD of a job whose ``N`` tasks all start now.

    ``[1 - (t_min / D)^(beta (r + 1))]^N`` for Pareto(beta, t_min) attempt times; the paper's
    eq. 3 is ``r = 0``; the ``r + 1`` exponent (minimum of ``r + 1`` i.i.d. attempts) is the
    same step as eq. 9 (re-derived). ``D <= t_min`` gives 0.

    Examples
    --------
    >>> round(pocd_new_job(10, 300.0, 120.0, 2.0), 4)
    0.1749
    >>> round(pocd_new_job(10, 300.0, 120.0, 2.0, extra_attempts=1), 4)
    0.7716
    """
    n = check_int("n_tasks", n_tasks, minimum=1)
    r = check_int("extra_attempts", extra_attempts, minimum=0)
    d = check_positive("deadline", deadline)
    t_min = check_positive("t_min", t_min)
    beta = check_positive("beta", beta)
    miss = min(1.0, t_min / d) ** (beta * (r + 1))
    return (1.0 - miss) ** n


def task_pocd(
    progress, shape, extra_attempts, deadline: float, elapsed: float, t_min: float
) -> np.ndarray:
    """Eq. 9 of seed 003: probability that a running task finishes by the deadline.

    ``1 - ((1 - phi) t_min / (D - tau))^(beta (r + 1))``: the fastest attempt (progress
    ``phi``) and ``r`` new attempts starting from its byte offset (Shed+) each have a
    Pareto(beta, (1 - phi) t_min) remaining time. The base is clipped at 1 (a remaining
    time below the Pareto minimum cannot be met) and ``D <= tau`` gives 0.

    Examples
    --------
    >>> task_pocd([0.5], [2.0], [1], 300.0, 100.0, 120.0).round(4).tolist()
    [0.9919]
    """
    phi = np.asarray(progress, dtype=float)
    if np.any((phi < 0) | (phi > 1)):
        raise ValueError(f"progress must lie in [0, 1], got {progress!r}")
    b = np.asarray(shape, dtype=float)
    if np.any(b <= 0):
        raise ValueError(f"shape must be > 0, got {shape!r}")
    r = np.asarray(extra_attempts)
    if np.any(r < 0):
        raise ValueError(f"extra_attempts must be >= 0, got {extra_attempts!r}")
    left = float(deadline) - float(elapsed)
    if left <= 0:
        return np.zeros(np.broadcast(phi, b, r).shape)
    base = np.minimum(1.0, (1.0 - phi) * t_min / left)
    return 1.0 - base ** (b * (r + 1))


def pocd_running_job(
    progress, shape, extra_attempts, deadline: float, elapsed: float, t_min: float
) -> float:
    """Theorem 2 of seed 003 (eq. 6): PoCD of a running job, the product of
    :func:`task_pocd` over its tasks (non-stragglers with ``r = 0``).

    Examples
    --------
    >>> round(pocd_running_job([0.5, 0.9], [2.0, 2.0], [1, 0], 300.0, 100.0, 120.0), 4)
    0.9883
    """
    return float(np.prod(task_pocd(progress, shape, extra_attempts, deadline, elapsed, t_min)))


def pareto_shape_from_remaining(t_rem: float, progress: float, t_min: float) -> float:
    """Eq. 14 of seed 003: ``beta = t_rem / (t_rem - (1 - phi) t_min)``, the Pareto shape
    whose mean with scale ``(1 - phi) t_min`` equals the expected remaining time ``t_rem``.

    Examples
    --------
    >>> pareto_shape_from_remaining(120.0, 0.5, 120.0)
    2.0
    """
    x_m = (1.0 - check_probability("progress", progress, low_open=False, high_open=True)) * t_min
    if not t_rem > x_m:
        raise ValueError(
            f"t_rem must exceed (1 - progress) t_min = {x_m!r} for a finite shape, got {t_rem!r}"
        )
    return float(t_rem / (t_rem - x_m))


class ShedJob(NamedTuple):
    """State of one job at a Shed+ decision point.

    ``progress`` and ``shape`` are per task (fastest attempt); ``straggler`` marks the
    tasks that may receive extra attempts.
    """

    deadline: float
    elapsed: float
    t_min: float
    progress: Sequence[float]
    shape: Sequence[float]
    straggler: Sequence[bool]


def shed_plus_allocation(
    jobs: Sequence[ShedJob], capacity: float, max_extra: int = 5, rule: str = "paper"
) -> list[np.ndarray]:
    """Algorithm 1 of seed 003: extra attempts per straggler under capacity ``lambda m``.

    Budget ``kappa = lambda m - sum_j N_j - |J|`` (constraint 11: every task's attempts plus
    one master per job). ``rule="paper"`` follows the algorithm: repeatedly give one attempt
    to the straggler with the lowest task PoCD inside the job with the lowest PoCD, until the
    budget is spent or every straggler has ``max_extra`` (ties: lowest index). This is
    max-min fair across single-straggler jobs but not an optimum of any stated objective.
    ``rule="log_gain"`` gives each attempt to the straggler with the largest gain in
    ``log`` task PoCD: because ``log(1 - x^(r+1))`` is concave in ``r`` and every attempt
    costs one VM, this is exactly optimal for proportional fairness,
    ``max sum_j log p_j`` (eq. 10 with the alpha = 1 utility).

    Parameters
    ----------
    jobs : sequence of ShedJob
    capacity : float
        ``lambda * m`` VMs available to these jobs.
    max_extra : int
        ``MAX`` extra attempts per straggler (5 in the paper).
    rule : {"paper", "log_gain"}

    Returns
    -------
    list of numpy.ndarray of int
        Extra attempts per task of each job (0 for non-stragglers).

    Examples
    --------
    >>> j1 = ShedJob(300.0, 100.0, 120.0, [0.2, 0.9], [1.5, 2.0], [True, False])
    >>> j2 = ShedJob(400.0, 50.0, 120.0, [0.1], [1.2], [True])
    >>> [a.tolist() for a in shed_plus_allocation([j1, j2], capacity=10)]
    [[3, 0], [2]]
    """
    max_extra = check_int("max_extra", max_extra, minimum=0)
    if rule not in ("paper", "log_gain"):
        raise ValueError(f"rule must be 'paper' or 'log_gain', got {rule!r}")
    states = []
    for j, job in enumerate(jobs):
        phi = np.asarray(job.progress, dtype=float)
        b = np.asarray(job.shape, dtype=float)
        s = np.asarray(job.straggler, dtype=bool)
        if not (phi.shape == b.shape == s.shape and phi.ndim == 1):
            raise ValueError(
                f"jobs[{j}]: progress, shape and straggler must be 1-D of equal length, got "
                f"{phi.shape}, {b.shape}, {s.shape}"
            )
        left = job.deadline - job.elapsed
        base = np.minimum(1.0, (1.0 - phi) * job.t_min / left) if left > 0 else np.ones_like(phi)
        states.append((base, b, s))
    n_tasks = sum(len(st[0]) for st in states)
    kappa = int(math.floor(float(capacity) - n_tasks - len(states) + 1e-9))
    alloc = [np.zeros(len(st[0]), dtype=np.int64) for st in states]
    if kappa <= 0 or max_extra == 0:
        return alloc

    def p_task(j: int, i: int, r: int) -> float:
        base, b, _ = states[j]
        return 1.0 - base[i] ** (b[i] * (r + 1))

    if rule == "log_gain":
        heap = []
        for j, (_, _, s) in enumerate(states):
            for i in np.flatnonzero(s).tolist():
                heap.append((-_log_gain(p_task(j, i, 0), p_task(j, i, 1)), j, int(i)))
        heapq.heapify(heap)
        for _ in range(kappa):
            if not heap:
                break
            neg, j, i = heapq.heappop(heap)
            alloc[j][i] += 1
            r = int(alloc[j][i])
            if r < max_extra:
                heapq.heappush(heap, (-_log_gain(p_task(j, i, r), p_task(j, i, r + 1)), j, i))
        return alloc

    active = {j: [int(i) for i in np.flatnonzero(st[2])] for j, st in enumerate(states)}
    active = {j: v for j, v in active.items() if v}
    used = 0
    while active and used + 1 <= kappa:
        job_p = {
            j: float(np.prod([p_task(j, i, int(alloc[j][i])) for i in range(len(alloc[j]))]))
            for j in active
        }
        j = min(active, key=lambda k: (job_p[k], k))
        i = min(active[j], key=lambda k: (p_task(j, k, int(alloc[j][k])), k))
        alloc[j][i] += 1
        used += 1
        if alloc[j][i] == max_extra:
            active[j].remove(i)
            if not active[j]:
                del active[j]
    return alloc


def _log_gain(p_now: float, p_next: float) -> float:
    if p_now <= 0.0:
        return math.inf if p_next > 0.0 else 0.0
    return math.log(p_next) - math.log(p_now)


def dolly_clone_count(p: float, n_tasks: int, epsilon: float = 0.05, p_is: str = "task") -> int:
    """Dolly's clones per task: ``c = r + 1 = ceil(log(1 - (1 - eps)^(1/N)) / log p)``.

    The smallest ``c`` with ``1 - (1 - p^c)^N <= eps``: a job of ``N`` tasks, each cloned
    ``c`` times, straggles with probability at most ``eps`` when each clone independently
    straggles with probability ``p`` (Dolly's definition; taken from seed 003, Section
    VI.A). Seed 003 sets ``p = 1 - PoCD`` of default Hadoop, a *job*-level miss
    probability; pass ``p_is="job"`` to convert it first to the per-task probability
    ``1 - (1 - p)^(1/N)`` (plugging the job-level value in directly, ``p_is="task"``, is
    what the formula literally does and over-clones).

    Examples
    --------
    >>> dolly_clone_count(0.1, 10), dolly_clone_count(0.5, 10, p_is="job")
    (3, 2)
    """
    p = check_probability("p", p, low_open=True, high_open=True)
    n = check_int("n_tasks", n_tasks, minimum=1)
    eps = check_probability("epsilon", epsilon, low_open=True, high_open=True)
    if p_is == "job":
        p = -math.expm1(math.log1p(-p) / n)
    elif p_is != "task":
        raise ValueError(f"p_is must be 'task' or 'job', got {p_is!r}")
    target = -math.expm1(math.log1p(-eps) / n)  # 1 - (1 - eps)^(1/N)
    c = max(1, math.ceil(math.log(target) / math.log(p) - 1e-12))
    return int(c)


def dolly_job_miss_probability(p: float, clones: int, n_tasks: int) -> float:
    """``1 - (1 - p^c)^N``: probability that a job of ``N`` tasks with ``c`` clones each
    straggles when each clone straggles independently with probability ``p``.

    Examples
    --------
    >>> round(dolly_job_miss_probability(0.1, 3, 10), 5)
    0.00996
    """
    return float(-math.expm1(n_tasks * math.log1p(-(p**clones))))
