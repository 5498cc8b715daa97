"""Single-fork replication (Wang, Joshi and Wornell, seed 002): Theorems 1-3 and Lemma 1.

Definitions used throughout (Definition 1 and eqs. 2-4 of the paper): a job of ``n`` tasks,
i.i.d. task times ``X ~ F_X`` on ``[0, inf)``, all launched at time 0. When ``k = (1 - p) n``
tasks have finished (time ``T1 = X_(k:n)``) each of the ``m = p n`` stragglers gets ``r`` new
replicas (``keep``) or is killed and replaced by ``r + 1`` new replicas (``kill``); the first
copy to finish wins and the others are killed. ``Y`` is a straggler's residual time after the
fork, latency ``T = T1 + max_j Y_j`` and cost ``C = (1/n) * sum of all machine running times``
(eq. 4), so ``n C = sum_{i<=k} X_(i) + m T1 + (r + 1) sum_j Y_j``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from scipy import integrate, optimize, special, stats

from ._common import (
    _GL_W,
    _GL_X,
    check_int,
    check_positive,
    check_probability,
    check_time_distribution,
    frozen_params,
    half_line_rule,
    tail_breaks,
)

__all__ = [
    "keep_or_kill",
    "pareto_single_fork",
    "shifted_exp_single_fork",
    "single_fork_analytic",
]

Method = Literal["auto", "integral", "closed", "exact"]


def _check_common(p: float, r: int, keep: bool, n: int) -> tuple[float, int, bool, int]:
    p = check_probability("p", p, low_open=False, high_open=True)
    r = check_int("r", r, minimum=0)
    n = check_int("n", n, minimum=1)
    if not isinstance(keep, bool | np.bool_):
        raise ValueError(f"keep must be a bool (True = pi_keep, False = pi_kill), got {keep!r}")
    return p, r, bool(keep), n


def _residual_tail(dist: Any, y: np.ndarray, t: np.ndarray | float, r: int, keep: bool):
    """Tail of a straggler's residual time ``Y`` after a fork at time ``t`` (eq. 7 / 35)."""
    sy = dist.sf(y)
    if keep:
        return sy**r * dist.sf(y + t) / dist.sf(t)
    return sy ** (r + 1)


def _expected_max(tail: np.ndarray, count: float, w: np.ndarray) -> np.ndarray:
    """``E[max of count i.i.d. Y] = int_0^inf 1 - (1 - S_Y(y))**count dy`` on nodes ``w``."""
    with np.errstate(divide="ignore"):
        integrand = -np.expm1(count * np.log1p(-np.clip(tail, 0.0, 1.0)))
    return integrand @ w


def _baseline_integral(dist: Any, n: int) -> tuple[float, float]:
    """No replication (p = 0): ``E[X_(n:n)]`` and ``E[X]``."""
    _, upper = dist.support()
    y, w = half_line_rule(tail_breaks(dist), float(upper))
    s = dist.sf(y)
    return float(_expected_max(s, n, w)), float(s @ w)


def _theorem1_integral(dist: Any, p: float, r: int, keep: bool, n: int) -> tuple[float, float]:
    """Theorem 1 (eqs. 5-7) evaluated by quadrature, with ``E[Y_(pn:pn)]`` computed exactly
    as ``int 1 - F_Y^{pn}`` rather than by its extreme-value limit."""
    if p == 0.0:
        return _baseline_integral(dist, n)
    _, upper = dist.support()
    t0 = float(dist.isf(p))  # F_X^{-1}(1 - p)
    y, w = half_line_rule(tail_breaks(dist, (t0,)), float(upper))
    s_y = _residual_tail(dist, y, t0, r, keep)
    e_y = float(s_y @ w)
    e_max = float(_expected_max(s_y, p * n, w))
    s = dist.sf(y)
    e_x = float(s @ w)
    # int_0^{1-p} F^{-1}(h) dh = E[X; X <= t0] = int_0^{t0} S(x) dx - t0 S(t0)
    e_below = e_x - float(dist.sf(y + t0) @ w) - t0 * float(dist.sf(t0))
    return t0 + e_max, e_below + p * t0 + (r + 1) * p * e_y


def _finite_n_exact(dist: Any, p: float, r: int, keep: bool, n: int) -> tuple[float, float]:
    """Exact finite-``n`` expectations for Definition 1 (re-derived, not in the paper).

    Conditional on ``T1 = X_(k:n) = t`` the ``k - 1`` faster tasks are i.i.d. ``X | X < t``
    and the ``m = n - k`` stragglers' originals are i.i.d. ``X | X > t``; ``F_X(T1)`` is
    ``Beta(k, m + 1)``. Hence
    ``E[T] = E_t[t + E max_m Y(t)]`` and
    ``n E[C] = E_t[(k - 1) E[X | X < t] + t + m t + m (r + 1) E[Y(t)]]``.
    """
    m_real = p * n
    m = round(m_real)
    if abs(m_real - m) > 1e-6:
        raise ValueError(
            f"method='exact' needs p * n to be an integer (Definition 1), got p={p!r}, n={n!r}"
        )
    if m == 0:
        return _baseline_integral(dist, n)
    k = n - m
    _, upper = dist.support()
    if k == 0:  # fork at time 0
        t = np.array([0.0])
        wt = np.array([1.0])
    else:
        beta = stats.beta(k, m + 1)
        lo, hi = beta.ppf(1e-13), beta.isf(1e-13)
        edges = np.linspace(lo, hi, 9)
        a0, a1 = edges[:-1], edges[1:]
        u = ((a0 + a1)[:, None] / 2 + ((a1 - a0) / 2)[:, None] * _GL_X).ravel()
        wt = (((a1 - a0) / 2)[:, None] * _GL_W).ravel() * beta.pdf(u)
        wt = wt / wt.sum()
        t = dist.ppf(u)
    shifts = np.quantile(t, [0.0, 0.5, 1.0])
    y, w = half_line_rule(tail_breaks(dist, shifts), float(upper))
    s = dist.sf(y)
    e_x = float(s @ w)
    tt = t[:, None]
    s_shift = dist.sf(y[None, :] + tt)
    s_t = dist.sf(t)
    if keep:
        s_y = s[None, :] ** r * s_shift / s_t[:, None]
    else:
        s_y = np.broadcast_to(s ** (r + 1), s_shift.shape)
    e_y = s_y @ w
    e_max = _expected_max(s_y, m, w)
    e_below = e_x - s_shift @ w - t * s_t  # E[X; X <= t]
    with np.errstate(divide="ignore", invalid="ignore"):
        faster = np.where(k > 1, (k - 1) * e_below / (1.0 - s_t), 0.0)
    latency = float(wt @ (t + e_max))
    cost = float(wt @ (faster + t + m * t + m * (r + 1) * e_y)) / n
    return latency, cost


def shifted_exp_single_fork(
    delta: float, mu: float, p: float, r: int, keep: bool, n: int
) -> tuple[float, float]:
    """Theorem 2: latency and cost of ``pi_keep/pi_kill(p, r)`` for ShiftedExp(delta, mu).

    Latency (eq. 10, checked and taken from the paper)::

        keep: (2r+1)/(r+1) delta + (ln n - r ln p + gamma_EM) / ((r+1) mu)
        kill: 2 delta            + (ln n - r ln p + gamma_EM) / ((r+1) mu)

    Cost (eq. 11 **re-derived**; the paper's eq. 51 integrates ``delta`` over ``[0, 1-p]``
    as ``delta (1 + p)`` instead of ``delta (1 - p)``, which adds a spurious ``p delta``)::

        keep: delta + 1/mu + p r (1 - exp(-mu delta)) / mu
        kill: delta + 1/mu + p (r + 1) delta

    (with ``r = 0`` and keep this is the no-replication cost ``delta + 1/mu``, as it must be).
    ``p = 0`` returns the baseline ``delta + (ln n + gamma_EM)/mu`` and ``delta + 1/mu``.
    The keep latency uses the Gumbel limit of the residual maximum, valid when
    ``ln(p n) >= mu delta`` (the threshold falls on the exponential part of ``F_Y``).

    Parameters
    ----------
    delta, mu : float
        Shift ``delta >= 0`` and rate ``mu > 0`` (``scipy.stats.expon(loc=delta, scale=1/mu)``).
    p : float
        Fraction of tasks declared stragglers, ``0 <= p < 1``.
    r : int
        Number of extra replicas (``r + 1`` copies run after the fork).
    keep : bool
        ``True`` for ``pi_keep`` (original kept), ``False`` for ``pi_kill``.
    n : int
        Number of tasks.

    Returns
    -------
    (latency, cost) : tuple of float
        ``E[T]`` and ``E[C]`` (cost normalised by ``n``, eq. 4).

    Examples
    --------
    >>> lat, cost = shifted_exp_single_fork(1.0, 1.0, 0.1, 1, True, 400)
    >>> round(lat, 3), round(cost, 4)
    (5.936, 2.0632)
    """
    p, r, keep, n = _check_common(p, r, keep, n)
    delta = float(delta)
    if not (np.isfinite(delta) and delta >= 0.0):
        raise ValueError(f"delta must be a finite number >= 0, got {delta!r}")
    mu = check_positive("mu", mu)
    if p == 0.0:
        return delta + (math.log(n) + np.euler_gamma) / mu, delta + 1.0 / mu
    tail = (math.log(n) - r * math.log(p) + np.euler_gamma) / ((r + 1) * mu)
    if keep:
        latency = (2 * r + 1) / (r + 1) * delta + tail
        cost = delta + 1.0 / mu + p * r * (-math.expm1(-mu * delta)) / mu
    else:
        latency = 2 * delta + tail
        cost = delta + 1.0 / mu + p * (r + 1) * delta
    return latency, cost


def _pareto_keep_tail(y: np.ndarray, alpha: float, xm: float, p: float, r: int) -> np.ndarray:
    """Eq. 18 with the support made explicit: the replicas' factor is ``min(1, (xm/y)^(r a))``."""
    t0 = xm * p ** (-1.0 / alpha)
    y = np.asarray(y, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        repl = np.where(y > xm, (xm / np.maximum(y, xm)) ** (r * alpha), 1.0)
    return (t0 / (y + t0)) ** alpha * repl


def pareto_single_fork(
    alpha: float, xm: float, p: float, r: int, keep: bool, n: int
) -> tuple[float, float]:
    """Theorem 3: latency and cost of ``pi_keep/pi_kill(p, r)`` for Pareto(alpha, xm).

    Latency (eq. 14): ``xm p^(-1/alpha) + Gamma(1 - 1/((r+1) alpha)) a_pn`` with
    ``a_pn = xm (p n)^(1/((r+1) alpha))`` for kill (eq. 16; the appendix's ``xm (pn)^(1/alpha)``
    is a typo) and ``a_pn = F_Y^{-1}(1 - 1/(p n))`` for keep, solved by root finding on eq. 18.
    Eq. 18 as printed omits the support of the ``r`` new replicas; we use
    ``S_Y(y) = (1/p) (xm / (y + t0))^alpha min(1, (xm / y)^(r alpha))``, ``t0 = xm p^(-1/alpha)``.
    Cost (eq. 15, checked): ``xm alpha/(alpha-1) - xm p^(1-1/alpha)/(alpha-1) + (r+1) p E[Y]``
    with ``E[Y] = (r+1) alpha xm / ((r+1) alpha - 1)`` (kill, eq. 17) or the integral of the
    keep tail (numerical, as the paper says). ``p = 0`` returns the baseline
    ``xm Gamma(1 - 1/alpha) n^(1/alpha)`` and ``xm alpha / (alpha - 1)``.

    The Frechet limit drops the location of the keep residual, so the keep latency converges
    slowly in ``n`` (relative error of order ``t0 / a_pn``); see ``method='integral'``.

    Parameters
    ----------
    alpha, xm : float
        Tail index ``alpha > 1`` and scale ``xm > 0`` (``scipy.stats.pareto(b=alpha, scale=xm)``).
    p, r, keep, n :
        As in :func:`shifted_exp_single_fork`.

    Returns
    -------
    (latency, cost) : tuple of float

    Examples
    --------
    >>> lat, cost = pareto_single_fork(2.0, 2.0, 0.1, 1, False, 400)
    >>> round(lat, 3), round(cost, 4)
    (12.488, 3.9009)
    """
    p, r, keep, n = _check_common(p, r, keep, n)
    alpha = check_positive("alpha", alpha)
    xm = check_positive("xm", xm)
    if alpha <= 1.0:
        raise ValueError(f"alpha must be > 1 for a finite expected cost, got {alpha!r}")
    if p == 0.0:
        base = xm * float(special.gamma(1.0 - 1.0 / alpha)) * n ** (1.0 / alpha)
        return base, xm * alpha / (alpha - 1.0)
    ra = (r + 1) * alpha
    t0 = xm * p ** (-1.0 / alpha)
    cost_head = xm * alpha / (alpha - 1.0) - xm * p ** (1.0 - 1.0 / alpha) / (alpha - 1.0)
    if not keep:
        a_pn = xm * (p * n) ** (1.0 / ra)
        e_y = ra / (ra - 1.0) * xm
    else:
        target = 1.0 / (p * n)
        if target >= 1.0:
            a_pn = 0.0
        else:
            hi = t0 + xm
            while _pareto_keep_tail(hi, alpha, xm, p, r) > target:
                hi *= 2.0
            a_pn = optimize.brentq(
                lambda v: float(_pareto_keep_tail(v, alpha, xm, p, r)) - target,
                0.0,
                hi,
                xtol=1e-12 * hi,
                rtol=1e-14,
            )
        head = t0 / (alpha - 1.0) * (1.0 - (t0 / (xm + t0)) ** (alpha - 1.0))
        tail, _ = integrate.quad(
            lambda v: float(_pareto_keep_tail(v, alpha, xm, p, r)), xm, np.inf, limit=200
        )
        e_y = head + tail
    latency = t0 + float(special.gamma(1.0 - 1.0 / ra)) * a_pn
    return float(latency), float(cost_head + (r + 1) * p * e_y)


def _closed_form_kind(dist: Any) -> tuple[str, tuple[float, float]] | None:
    name, shapes, loc, scale = frozen_params(dist)
    if name == "expon" and loc >= 0.0:
        return "expon", (loc, 1.0 / scale)
    if name == "pareto" and loc == 0.0 and shapes.get("b", 0.0) > 1.0:
        return "pareto", (shapes["b"], scale)
    return None


def single_fork_analytic(
    dist: Any, p: float, r: int, keep: bool, n: int, method: Method = "auto"
) -> tuple[float, float]:
    """Expected latency and cost of the single-fork policy ``pi_keep/pi_kill(p, r)``.

    Implements Theorem 1 of seed 002 (eqs. 5-7)::

        E[T] = F^{-1}(1 - p) + E[Y_(pn:pn)]
        E[C] = int_0^{1-p} F^{-1}(h) dh + p F^{-1}(1 - p) + (r + 1) p E[Y]
        S_Y(y) = S_X(y)^(r+1)                                  (kill)
        S_Y(y) = S_X(y)^r S_X(y + F^{-1}(1 - p)) / p           (keep)

    Parameters
    ----------
    dist : frozen scipy.stats continuous distribution
        Task-time distribution, support in ``[0, inf)``.
    p : float
        Straggler fraction, ``0 <= p < 1`` (``p = 0`` is no replication).
    r : int
        Extra replicas per straggler (``r + 1`` copies run after the fork).
    keep : bool
        ``True``: keep the original (``pi_keep``); ``False``: kill it (``pi_kill``).
    n : int
        Number of tasks.
    method : {"auto", "integral", "closed", "exact"}
        ``"integral"``: Theorem 1 by quadrature, the residual maximum computed exactly as
        ``int 1 - F_Y(y)^(pn) dy`` (no extreme-value approximation). ``"closed"``: Theorem 2
        (``scipy.stats.expon(loc=delta, scale=1/mu)``) or Theorem 3
        (``scipy.stats.pareto(b=alpha, scale=xm)``); raises for any other distribution.
        ``"auto"``: closed form when available, else integral. ``"exact"`` (re-derived, not
        in the paper): the finite-``n`` expectation of the process of Definition 1,
        conditioning on ``T1 = X_((1-p)n:n)`` (needs ``p n`` integral); this is what a Monte
        Carlo simulation of ``n`` tasks estimates.

    Returns
    -------
    (latency, cost) : tuple of float
        ``E[T]`` and ``E[C]`` with cost normalised by ``n`` (eq. 4).

    Examples
    --------
    >>> from scipy import stats
    >>> d = stats.expon(loc=1.0, scale=1.0)
    >>> [round(v, 2) for v in single_fork_analytic(d, 0.1, 1, True, 400)]
    [5.94, 2.06]
    >>> [round(v, 2) for v in single_fork_analytic(d, 0.1, 1, True, 400, method="integral")]
    [5.94, 2.06]
    """
    p, r, keep, n = _check_common(p, r, keep, n)
    if method not in ("auto", "integral", "closed", "exact"):
        raise ValueError(f"method must be 'auto', 'integral', 'closed' or 'exact', got {method!r}")
    check_time_distribution(dist)
    if not np.isfinite(float(dist.mean())):
        raise ValueError(
            f"dist must have a finite mean task time (expected cost), got mean {dist.mean()!r}"
        )
    if method in ("auto", "closed"):
        kind = _closed_form_kind(dist)
        if kind is not None:
            name, (a, b) = kind
            if name == "expon":
                return shifted_exp_single_fork(a, b, p, r, keep, n)
            return pareto_single_fork(a, b, p, r, keep, n)
        if method == "closed":
            raise ValueError(
                "method='closed' needs dist = scipy.stats.expon(loc>=0, scale) or "
                f"scipy.stats.pareto(b>1, scale, loc=0), got {frozen_params(dist)}"
            )
    if method == "exact":
        return _finite_n_exact(dist, p, r, keep, n)
    return _theorem1_integral(dist, p, r, keep, n)


def keep_or_kill(dist: Any, p: float, n_grid: int = 4096) -> str:
    """Lemma 1: whether killing or keeping the original straggler copy is better.

    Compares the two residual tails through condition (8),
    ``(1/p) S_X(x + F^{-1}(1 - p)) >= S_X(x)`` for all ``x >= 0``: when it holds the kept
    original's residual is stochastically longer than a new copy, so killing gives lower
    latency and cost (for every ``r``); the reversed inequality means keeping is better.
    The paper's remark that (8) holds for "new-longer-than-used" distributions such as the
    shifted exponential has the direction backwards: for those the *reverse* of (8) holds,
    which is why keeping is better for ShiftedExp (as the paper itself concludes).

    The inequality is checked on ``n_grid`` points of ``[0, F^{-1}(1 - 1e-12)]`` plus the
    tail quantiles of ``X`` and of the residual; ``p`` is replaced by ``S_X(F^{-1}(1-p))``.

    Parameters
    ----------
    dist : frozen scipy.stats continuous distribution on ``[0, inf)``
    p : float
        Straggler fraction, ``0 < p < 1``.
    n_grid : int
        Number of evenly spaced grid points.

    Returns
    -------
    str
        ``"kill"`` if (8) holds (strictly somewhere), ``"keep"`` if its reverse holds,
        ``"equal"`` if both hold (e.g. the memoryless exponential), ``"neither"`` otherwise
        (e.g. Pareto, whose residual is shorter at small ``x`` and longer at large ``x``).

    Examples
    --------
    >>> from scipy import stats
    >>> keep_or_kill(stats.expon(loc=1.0, scale=1.0), 0.2)
    'keep'
    >>> keep_or_kill(stats.lomax(c=2.0), 0.2)
    'kill'
    >>> keep_or_kill(stats.pareto(b=2.0, scale=2.0), 0.2)
    'neither'
    """
    p = check_probability("p", p, low_open=True, high_open=True)
    n_grid = check_int("n_grid", n_grid, minimum=16)
    check_time_distribution(dist)
    t0 = float(dist.isf(p))
    s_t0 = float(dist.sf(t0))
    hi = float(dist.isf(1e-12))
    x = np.concatenate([np.linspace(0.0, hi, n_grid), tail_breaks(dist, (t0,))])
    x = np.unique(x[np.isfinite(x)])
    d = dist.sf(x + t0) / s_t0 - dist.sf(x)
    tol = 1e-10
    ge = bool(np.all(d >= -tol))
    le = bool(np.all(d <= tol))
    if ge and le:
        return "equal"
    if ge:
        return "kill"
    if le:
        return "keep"
    return "neither"
