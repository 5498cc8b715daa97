"""Xu & Lau (seed 000): the light/heavy load cut-off (eqs. 1-5), SCA's per-slot problem P2
and ESE's small-job cloning count (eq. 29), all for Pareto task times."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import optimize, special

from ._common import check_int, check_positive

__all__ = [
    "cloned_task_delay",
    "cloning_cutoff_load",
    "cloning_cutoff_rate",
    "ese_is_small_job",
    "ese_small_job_clones",
    "mg1_task_delay",
    "sca_clone_counts",
    "sca_job_value",
    "sca_relaxed_solution",
]


def _check_alpha(alpha: float, minimum: float = 1.0) -> float:
    alpha = check_positive("alpha", alpha)
    if alpha <= minimum:
        raise ValueError(f"alpha must be > {minimum} (finite mean task time), got {alpha!r}")
    return alpha


def mg1_task_delay(omega: float, alpha: float, mean_duration: float = 1.0) -> float:
    """Eq. 1 of seed 000: mean task delay of one machine as an M/G/1 queue, no cloning.

    ``W_t = lam_mt E[s^2] / (2 (1 - lam_mt E[s])) + E[s]`` with Pareto(alpha) service of mean
    ``E[s]`` and per-machine load ``omega = lam_mt E[s] = lam E[m] E[s] / M``; for Pareto
    ``E[s^2] / E[s]^2 = (alpha - 1)^2 / (alpha (alpha - 2))`` (infinite for ``alpha <= 2``).
    Taken from the paper.

    Examples
    --------
    >>> round(mg1_task_delay(0.5, 3.0), 4)
    1.6667
    >>> mg1_task_delay(0.5, 2.0)
    inf
    """
    alpha = _check_alpha(alpha)
    es = check_positive("mean_duration", mean_duration)
    omega = float(omega)
    if not 0.0 <= omega < 1.0:
        return math.inf if omega >= 1.0 else _bad_omega(omega)
    if omega == 0.0:
        return es
    if alpha <= 2.0:
        return math.inf
    ratio = (alpha - 1.0) ** 2 / (alpha * (alpha - 2.0))
    return es * (omega * ratio / (2.0 * (1.0 - omega)) + 1.0)


def _bad_omega(omega: float) -> float:
    raise ValueError(f"omega (per-machine load) must be >= 0, got {omega!r}")


def cloned_task_delay(omega: float, alpha: float, mean_duration: float = 1.0) -> float:
    """Eq. 3 of seed 000: mean task delay when every task runs as two clones.

    Each task becomes two copies (per-machine arrival rate ``2 lam_mt``) whose service is
    the minimum of two Pareto(alpha) times, i.e. Pareto(2 alpha); Pollaczek-Khinchine gives::

        W_t^c = E[s] (omega (alpha-1)(1 + 4 alpha - 4 alpha^2) / (alpha (2 alpha - 1))
                      + 2 (alpha - 1)) / (2 alpha - 1 - 4 omega (alpha - 1))

    Re-derived from the M/G/1 formula; it agrees with the printed eq. 3. Infinite at and
    beyond the stability limit of Theorem 1, ``omega >= (2 alpha - 1) / (4 (alpha - 1))``.

    Examples
    --------
    >>> round(cloned_task_delay(0.0, 2.0), 4)  # E[min of two] = 2/3 E[s] for alpha = 2
    0.6667
    """
    alpha = _check_alpha(alpha)
    es = check_positive("mean_duration", mean_duration)
    omega = float(omega)
    if omega < 0.0:
        _bad_omega(omega)
    den = 2.0 * alpha - 1.0 - 4.0 * omega * (alpha - 1.0)
    if den <= 0.0:
        return math.inf
    num = omega * (alpha - 1.0) * (1.0 + 4.0 * alpha - 4.0 * alpha**2) / (
        alpha * (2.0 * alpha - 1.0)
    ) + 2.0 * (alpha - 1.0)
    return es * num / den


def cloning_cutoff_load(alpha: float) -> float:
    """``omega_U``: the largest per-machine load below which 2-clone cloning beats no cloning.

    Solves ``W_t^c(omega) = W_t(omega)`` (eqs. 1, 3, 4 of seed 000) for the first crossing
    on ``[0, omega_c)``, ``omega_c = min(1, (2 alpha - 1) / (4 (alpha - 1)))`` the stability
    limit of Theorem 1. For ``alpha <= 2`` the uncloned delay is infinite (``E[s^2] = inf``)
    so cloning wins up to its own stability limit and ``omega_U = omega_c`` (3/4 at
    ``alpha = 2``). Not stated numerically in the paper; computed here.

    Examples
    --------
    >>> cloning_cutoff_load(2.0)
    0.75
    >>> round(cloning_cutoff_load(3.0), 4)
    0.3642
    """
    alpha = _check_alpha(alpha)
    omega_c = min(1.0, (2.0 * alpha - 1.0) / (4.0 * (alpha - 1.0)))
    if alpha <= 2.0:
        return omega_c

    def gap(w: float) -> float:
        return cloned_task_delay(w, alpha) - mg1_task_delay(w, alpha)

    grid = np.linspace(0.0, omega_c, 2001)[:-1]
    vals = np.array([gap(w) for w in grid])
    pos = np.flatnonzero(vals >= 0.0)
    if pos.size == 0:
        return omega_c
    i = int(pos[0])
    if i == 0:
        return 0.0
    return float(optimize.brentq(gap, grid[i - 1], grid[i], xtol=1e-14))


def cloning_cutoff_rate(
    alpha: float, mean_tasks: float, mean_duration: float, machines: int
) -> float:
    """Eq. 5 of seed 000: the job arrival rate ``lambda_U = omega_U M / (E[m] E[s])``.

    Below ``lambda_U`` the cluster is "lightly loaded" (SCA/SDA); above it ESE applies.

    Examples
    --------
    >>> round(cloning_cutoff_rate(2.0, 50.5, 2.5, 3000), 2)  # the paper's SCA setting
    17.82
    """
    mean_tasks = check_positive("mean_tasks", mean_tasks)
    mean_duration = check_positive("mean_duration", mean_duration)
    machines = check_int("machines", machines, minimum=1)
    return cloning_cutoff_load(alpha) * machines / (mean_tasks * mean_duration)


def _expected_max_pareto(m: int, shape: float, scale: float) -> float:
    """``E[max of m i.i.d. Pareto(shape, scale)] = scale G(m+1) G(1-1/shape) / G(m+1-1/shape)``."""
    if shape <= 1.0:
        return math.inf
    inv = 1.0 / shape
    return scale * math.exp(
        special.gammaln(m + 1) + special.gammaln(1 - inv) - special.gammaln(m + 1 - inv)
    )


def sca_job_value(copies: int, tasks: int, scale: float, alpha: float, gamma: float) -> float:
    """Per-job objective of P2 (seed 000) with ``U(E[t], m) = -E[t]``, up to a constant.

    ``-E[d(c)] - gamma m c E[t_j(c)]`` where ``d(c)`` is the maximum of ``m`` task times each
    the minimum of ``c`` Pareto(alpha, scale) copies (eqs. 10-13): ``min`` is
    Pareto(``c alpha``, scale), ``E[t_j(c)] = scale c alpha / (c alpha - 1)`` and ``E[d(c)]``
    is the exact expected maximum (Gamma-function ratio). The waiting time ``l - a`` of
    ``E[t] = E[d] + l - a`` does not depend on ``c`` and is dropped.

    Examples
    --------
    >>> round(sca_job_value(2, 10, 1.0, 2.0, 0.01), 4)
    -2.4661
    """
    c = check_int("copies", copies, minimum=1)
    m = check_int("tasks", tasks, minimum=1)
    shape = c * alpha
    if shape <= 1.0:
        return -math.inf
    e_min = scale * shape / (shape - 1.0)
    return -_expected_max_pareto(m, shape, scale) - gamma * m * c * e_min


def _sca_inputs(tasks, scales, alpha, free_machines, r_max, gamma):
    m = np.atleast_1d(np.asarray(tasks))
    if m.ndim != 1 or m.size == 0 or not np.all(np.equal(np.mod(m, 1), 0)) or np.any(m < 1):
        raise ValueError(f"tasks must be a non-empty list of positive integers, got {tasks!r}")
    m = m.astype(int)
    mu = np.broadcast_to(np.asarray(scales, dtype=float), m.shape)
    if np.any(~np.isfinite(mu) | (mu <= 0)):
        raise ValueError(f"scales must be positive, got {scales!r}")
    al = np.broadcast_to(np.asarray(alpha, dtype=float), m.shape)
    if np.any(al <= 1.0):
        raise ValueError(f"alpha must be > 1, got {alpha!r}")
    n_free = check_int("free_machines", free_machines, minimum=0)
    r_max = check_int("r_max", r_max, minimum=1)
    if gamma < 0 or not np.isfinite(gamma):
        raise ValueError(f"gamma must be a finite number >= 0, got {gamma!r}")
    if m.sum() > n_free:
        raise ValueError(
            f"P2 needs one copy of every task to fit: sum(tasks) = {int(m.sum())} > "
            f"free_machines = {n_free}"
        )
    values = np.array(
        [
            [sca_job_value(c, int(mk), float(sk), float(ak), gamma) for c in range(1, r_max + 1)]
            for mk, sk, ak in zip(m, mu, al, strict=True)
        ]
    )
    return m, values, n_free, r_max


def sca_clone_counts(
    tasks: Sequence[int],
    scales: Sequence[float] | float,
    alpha: Sequence[float] | float,
    free_machines: int,
    r_max: int,
    gamma: float,
    method: str = "exact",
) -> np.ndarray:
    """SCA's per-slot problem P2 (seed 000): copies per task for each waiting job.

    Maximise ``sum_i v_i(c_i)`` (see :func:`sca_job_value`) subject to
    ``sum_i m_i c_i <= N(l)`` and ``1 <= c_i <= r_max``, ``c_i`` integer.

    ``method="exact"`` solves it by dynamic programming over the machine budget
    (a multiple-choice knapsack, ``O(J r_max N)``), exact for any ``v_i``.
    ``method="greedy"`` adds one copy at a time to the job with the largest positive gain
    per machine; it is exact only when every job has the same ``m`` (then the problem is a
    separable concave program with a uniform budget); with unequal ``m`` the budget is a
    knapsack constraint and greedy can be suboptimal (see NOTES.md for an instance).
    ``method="relaxed"`` is the paper's Lagrangian approach (eqs. 14-16): ``c`` real in
    ``[1, r_max]`` (box constraints by projection, i.e. the multipliers ``xi, h`` at their
    optimum), each job maximises ``v_i(c) - nu m_i c``, and the budget multiplier ``nu`` is
    found by bisection (``sum m_i c_i(nu)`` is non-increasing in ``nu``) instead of the
    paper's fixed-step gradient iteration, which converges to the same point; the real
    solution is floored (still feasible). See :func:`sca_relaxed_solution`.

    Parameters
    ----------
    tasks : sequence of int
        ``m_i``, tasks of each unscheduled job.
    scales, alpha : float or sequence of float
        Pareto scale and tail index of each job's task times.
    free_machines : int
        ``N(l)``; must be at least ``sum(tasks)`` (SCA only solves P2 then).
    r_max : int
        Maximum copies per task ``r``.
    gamma : float
        Resource price ``gamma``.
    method : {"exact", "greedy", "relaxed"}

    Returns
    -------
    numpy.ndarray of int
        ``c_i`` for each job (ties go to fewer copies).

    Examples
    --------
    >>> sca_clone_counts([10, 20, 5, 10], [1, 2, 1, 2], 2.0, 100, 8, 0.01).tolist()
    [2, 2, 2, 3]
    """
    m, values, n_free, r_max = _sca_inputs(tasks, scales, alpha, free_machines, r_max, gamma)
    if method == "exact":
        return _knapsack(m, values, n_free)
    if method == "greedy":
        return _greedy(m, values, n_free)
    if method == "relaxed":
        c, _, _ = sca_relaxed_solution(tasks, scales, alpha, free_machines, r_max, gamma)
        return np.floor(c + 1e-9).astype(np.int64)
    raise ValueError(f"method must be 'exact', 'greedy' or 'relaxed', got {method!r}")


def _real_value(c: float, m: int, scale: float, alpha: float, gamma: float) -> float:
    shape = c * alpha
    if shape <= 1.0:
        return -math.inf
    return -_expected_max_pareto(m, shape, scale) - gamma * m * c * scale * shape / (shape - 1.0)


def sca_relaxed_solution(
    tasks: Sequence[int],
    scales: Sequence[float] | float,
    alpha: Sequence[float] | float,
    free_machines: int,
    r_max: int,
    gamma: float,
) -> tuple[np.ndarray, float, float]:
    """Continuous relaxation of P2 (seed 000, eqs. 14-16) solved in the dual.

    Returns ``(c, nu, dual_bound)``: the real copy counts ``c_i(nu)`` in ``[1, r_max]``,
    the budget multiplier, and ``D(nu) = sum_i max_c (v_i(c) - nu m_i c) + nu N``, which
    by weak duality bounds the integer optimum of P2 from above.

    Examples
    --------
    >>> c, nu, bound = sca_relaxed_solution([10, 20, 5, 10], [1, 2, 1, 2], 2.0, 100, 8, 0.01)
    >>> bool(np.dot(c, [10, 20, 5, 10]) <= 100 + 1e-6)
    True
    """
    m, _, n_free, r_max = _sca_inputs(tasks, scales, alpha, free_machines, r_max, gamma)
    mu = np.broadcast_to(np.asarray(scales, dtype=float), m.shape)
    al = np.broadcast_to(np.asarray(alpha, dtype=float), m.shape)

    def best(nu: float) -> tuple[np.ndarray, float]:
        cs, total = np.empty(len(m)), 0.0
        for i in range(len(m)):
            lo = max(1.0, (1.0 + 1e-9) / al[i])

            def neg(c: float, i: int = i) -> float:
                return -(_real_value(c, int(m[i]), mu[i], al[i], gamma) - nu * m[i] * c)

            cands = [lo, float(r_max)]
            if r_max > lo:
                res = optimize.minimize_scalar(
                    neg, bounds=(lo, float(r_max)), method="bounded", options={"xatol": 1e-10}
                )
                cands.append(float(res.x))
            vals = [neg(c) for c in cands]
            k = int(np.argmin(vals))
            cs[i], total = cands[k], total - vals[k]
        return cs, total

    c0, v0 = best(0.0)
    if float(np.dot(m, c0)) <= n_free:
        return c0, 0.0, v0
    lo, hi = 0.0, 1.0
    while float(np.dot(m, best(hi)[0])) > n_free:
        hi *= 2.0
    while hi - lo > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(np.dot(m, best(mid)[0])) > n_free else (lo, mid)
    c, val = best(hi)
    return c, hi, val + hi * n_free


def _knapsack(m: np.ndarray, values: np.ndarray, budget: int) -> np.ndarray:
    n_jobs, r_max = values.shape
    dp = np.zeros(budget + 1)  # best value with total weight <= b
    choice = np.zeros((n_jobs, budget + 1), dtype=np.int64)
    for j in range(n_jobs):
        new = np.full(budget + 1, -np.inf)
        best_c = np.zeros(budget + 1, dtype=np.int64)
        for c in range(1, r_max + 1):
            w = int(m[j]) * c
            if w > budget:
                break
            cand = np.full(budget + 1, -np.inf)
            cand[w:] = dp[: budget + 1 - w] + values[j, c - 1]
            better = cand > new
            new = np.where(better, cand, new)
            best_c = np.where(better, c, best_c)
        dp, choice[j] = new, best_c
    counts = np.zeros(n_jobs, dtype=np.int64)
    b = budget
    for j in range(n_jobs - 1, -1, -1):
        counts[j] = choice[j, b]
        b -= int(m[j]) * int(counts[j])
    return counts


def _greedy(m: np.ndarray, values: np.ndarray, budget: int) -> np.ndarray:
    n_jobs, r_max = values.shape
    counts = np.ones(n_jobs, dtype=np.int64)
    used = int(m.sum())
    while True:
        best, best_j = 0.0, -1
        for j in range(n_jobs):
            c = int(counts[j])
            if c < r_max and used + m[j] <= budget:
                gain = (values[j, c] - values[j, c - 1]) / m[j]
                if gain > best:
                    best, best_j = gain, j
        if best_j < 0:
            return counts
        counts[best_j] += 1
        used += int(m[best_j])


def ese_is_small_job(
    tasks: int, mean_duration: float, free_machines: int, waiting_jobs: int, eta: float, xi: float
) -> bool:
    """Algorithm 2 of seed 000, line 17: clone job ``J`` if ``m < eta N(l) / |chi(l)|`` and
    ``E[x] < xi``.

    Examples
    --------
    >>> ese_is_small_job(5, 0.8, 300, 10, 0.5, 1.0)
    True
    """
    waiting_jobs = check_int("waiting_jobs", waiting_jobs, minimum=1)
    return bool(tasks < eta * free_machines / waiting_jobs and mean_duration < xi)


def ese_small_job_clones(
    tasks: int, scale: float, alpha: float, gamma: float, r_max: int, free_machines: int
) -> int:
    """Eq. 29 of seed 000: copies per task for a small job, ``argmax_c v(c)`` of
    :func:`sca_job_value`, over ``1 <= c <= min(r_max, N(l) // m)`` (at least 1).

    Examples
    --------
    >>> ese_small_job_clones(5, 0.5, 2.0, 0.01, 8, 100)
    6
    """
    m = check_int("tasks", tasks, minimum=1)
    r_max = check_int("r_max", r_max, minimum=1)
    free_machines = check_int("free_machines", free_machines, minimum=0)
    top = max(1, min(r_max, free_machines // m))
    vals = [sca_job_value(c, m, scale, alpha, gamma) for c in range(1, top + 1)]
    return int(np.argmax(vals)) + 1
