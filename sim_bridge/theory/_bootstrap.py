"""Algorithm 1 of seed 002: bootstrap estimate of single-fork latency and cost."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._common import check_int, check_probability

__all__ = ["BootstrapEstimate", "bootstrap_single_fork"]

_CHUNK_DRAWS = 2_000_000  # random numbers per vectorised chunk (bounds memory)


class BootstrapEstimate(NamedTuple):
    """Bootstrap means and their Monte Carlo standard errors (``sd / sqrt(n_boot)``)."""

    latency: float
    cost: float
    latency_se: float
    cost_se: float


def _check_samples(samples: np.ndarray) -> np.ndarray:
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"samples must be a 1-D array of >= 2 durations, got shape {x.shape}")
    bad = np.flatnonzero(~np.isfinite(x) | (x < 0.0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"samples must be finite and >= 0; samples[{i}] = {x[i]!r} ({bad.size} bad values)"
        )
    return np.sort(x)


def bootstrap_single_fork(
    samples: np.ndarray,
    p: float,
    r: int,
    keep: bool,
    n: int,
    n_boot: int = 1000,
    seed: int | None = 0,
    *,
    with_se: bool = False,
) -> tuple[float, float] | BootstrapEstimate:
    """Bootstrap latency and cost of ``pi_keep/pi_kill(p, r)`` from task-time samples.

    Algorithm 1 of seed 002, taken from the paper: with ``F^`` the empirical c.d.f. of
    ``samples`` and ``k = (1 - p) n``, ``m = p n``, each of ``n_boot`` rounds draws ``n``
    values from ``F^``, sorts them, sets ``T1 = x_(k)`` and ``C1 = sum_{j<=k} x_(j)``, draws
    ``m`` residuals ``y`` from ``F^_Y`` (eq. 7), and records ``T = T1 + max y`` and
    ``C = (C1 + m T1 + (r + 1) sum y) / n``; the estimates are the means over rounds.

    ``F^_Y`` is sampled rather than tabulated: for kill ``y = min`` of ``r + 1`` draws from
    ``F^``; for keep ``y = min(x' - t0, r draws)`` where ``x'`` is drawn from the samples
    above ``t0 = F^{-1}(1 - p)`` (the ``inverted_cdf`` quantile). This has exactly the tail
    (7) with ``F_X`` replaced by ``F^`` and ``p`` by ``P^(X > t0)``. As in the paper, ``t0``
    is fixed from the data, not re-estimated in each round.

    Parameters
    ----------
    samples : array_like
        Observed task durations (no replication, no killing), finite and ``>= 0``.
    p : float
        Straggler fraction ``0 <= p < 1``; ``p n`` must be an integer.
    r : int
        Extra replicas per straggler.
    keep : bool
        ``True`` for ``pi_keep``, ``False`` for ``pi_kill``.
    n : int
        Number of tasks of the job being evaluated.
    n_boot : int
        Number of bootstrap rounds ``m``.
    seed : int or None
        Seed of the local ``numpy.random.Generator``; same seed, same result.
    with_se : bool
        Also return the Monte Carlo standard errors.

    Returns
    -------
    (latency, cost) or BootstrapEstimate

    Examples
    --------
    >>> import numpy as np
    >>> x = 1.0 + np.random.default_rng(0).exponential(1.0, 5000)
    >>> lat, cost = bootstrap_single_fork(x, 0.1, 1, True, 400, n_boot=200, seed=1)
    >>> bool(abs(lat - 5.93) < 0.2 and abs(cost - 2.06) < 0.05)
    True
    """
    x = _check_samples(samples)
    p = check_probability("p", p, low_open=False, high_open=True)
    r = check_int("r", r, minimum=0)
    n = check_int("n", n, minimum=1)
    n_boot = check_int("n_boot", n_boot, minimum=2)
    if not isinstance(keep, bool | np.bool_):
        raise ValueError(f"keep must be a bool, got {keep!r}")
    m = round(p * n)
    if abs(p * n - m) > 1e-6:
        raise ValueError(f"p * n must be an integer (Definition 1), got p={p!r}, n={n!r}")
    k = n - m
    pool = x
    t0 = 0.0
    if keep and m > 0:
        t0 = float(np.quantile(x, 1.0 - p, method="inverted_cdf"))
        pool = x[x > t0]
        if pool.size == 0:
            raise ValueError(
                f"no sample lies above the (1 - p) quantile {t0!r}; p={p!r} is too small "
                f"for {x.size} samples"
            )
    rng = np.random.default_rng(seed)
    n_new = (r if keep else r + 1) if m > 0 else 0
    per_round = n + m * (n_new + (1 if keep else 0))
    chunk = max(1, _CHUNK_DRAWS // max(per_round, 1))
    lat = np.empty(n_boot)
    cost = np.empty(n_boot)
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        xs = np.sort(x[rng.integers(0, x.size, size=(b, n))], axis=1)
        if m == 0:
            lat[start : start + b] = xs[:, -1]
            cost[start : start + b] = xs.sum(axis=1) / n
            continue
        t1 = xs[:, k - 1] if k > 0 else np.zeros(b)
        c1 = xs[:, :k].sum(axis=1)
        if n_new > 0:
            y = x[rng.integers(0, x.size, size=(b, m, n_new))].min(axis=2)
        else:
            y = np.full((b, m), np.inf)
        if keep:
            y = np.minimum(y, pool[rng.integers(0, pool.size, size=(b, m))] - t0)
        lat[start : start + b] = t1 + y.max(axis=1)
        cost[start : start + b] = (c1 + m * t1 + (r + 1) * y.sum(axis=1)) / n
    if not with_se:
        return float(lat.mean()), float(cost.mean())
    root = np.sqrt(n_boot)
    return BootstrapEstimate(
        float(lat.mean()),
        float(cost.mean()),
        float(lat.std(ddof=1) / root),
        float(cost.std(ddof=1) / root),
    )
