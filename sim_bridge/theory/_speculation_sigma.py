"""Straggler-detection thresholds of Xu & Lau: SDA (eqs. 21-28 of seed 000, Section IV.B of
seed 001) and ESE (eqs. 30-33 of seed 000, eqs. 18-25 of seed 001)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate, optimize

from ._common import (
    check_int,
    check_positive,
    check_probability,
    frozen_params,
    half_line_rule,
    tail_breaks,
)

__all__ = [
    "ese_expected_resource",
    "ese_sigma_star",
    "sda_expected_resource",
    "sda_optimal_copies",
    "sda_sigma_star",
    "sda_straggler_cost",
]


def _alpha(alpha: float) -> float:
    alpha = check_positive("alpha", alpha)
    if alpha <= 1.0:
        raise ValueError(f"alpha must be > 1 (finite mean), got {alpha!r}")
    return alpha


def sda_straggler_cost(copies: int, alpha: float, sigma: float, scale: float = 1.0) -> float:
    """``tau(c) = c E[l | straggler]`` of SDA for Pareto(alpha, scale) task times.

    A task is a straggler when its remaining time ``z = (1 - s) x`` exceeds
    ``theta = sigma E[x]``; then ``c - 1`` new copies start and ``l = min(z, y)`` with
    ``y`` the minimum of the new copies (Pareto((c-1) alpha, scale)) and ``z | z >= theta``
    Pareto(alpha, theta). Integrating the tail ``P(z > t) P(y > t)`` gives (re-derived; equal
    to the expression in the proof of Lemma 2 of seed 001; eq. 15 there is garbled)::

        tau(c) = scale [alpha c (c-1) / (alpha c - alpha - 1)
                        - alpha^2 sigma c q^(alpha (c-1)) / ((alpha-1)(alpha c-1)(alpha c-alpha-1))]

    with ``q = (alpha - 1) / (sigma alpha) = scale / theta``; ``tau(1) = theta alpha/(alpha-1)``.
    Valid for ``theta >= scale`` (``sigma >= (alpha - 1) / alpha``).

    Examples
    --------
    >>> round(sda_straggler_cost(1, 2.0, 1.7071), 4), round(sda_straggler_cost(2, 2.0, 1.7071), 4)
    (6.8284, 3.6095)
    """
    c = check_int("copies", copies, minimum=1)
    alpha = _alpha(alpha)
    sigma = check_positive("sigma", sigma)
    scale = check_positive("scale", scale)
    theta = sigma * scale * alpha / (alpha - 1.0)
    if theta < scale:
        raise ValueError(
            f"sigma must be >= (alpha - 1) / alpha = {(alpha - 1) / alpha!r} so that the "
            f"threshold exceeds the Pareto scale, got {sigma!r}"
        )
    if c == 1:
        return theta * alpha / (alpha - 1.0)
    beta = alpha * (c - 1)
    if beta <= 1.0:
        return math.inf
    q = scale / theta
    return (
        c
        * scale
        * (beta / (beta - 1.0) - alpha * q ** (beta - 1.0) / ((alpha + beta - 1.0) * (beta - 1.0)))
    )


def sda_optimal_copies(alpha: float, sigma: float, r_max: int = 16) -> int:
    """Eq. 27 of seed 000: ``c* = argmin_c tau(c)`` over ``1 <= c <= r_max``.

    Theorem 3 (seed 000) / Lemma 2 (seed 001) claim that for Pareto tasks ``tau``
    increases on ``c >= 2`` for every ``alpha > 1``, so ``c*`` is 2 (one duplicate) once
    ``tau(2) < tau(1)``. That holds for ``alpha >= 2`` but not below: as ``sigma`` grows,
    ``tau(c) -> scale alpha c (c - 1) / (alpha c - alpha - 1)`` and ``tau(3) < tau(2)`` iff
    ``alpha < 2`` (e.g. ``alpha = 1.5, sigma = 2`` gives ``c* = 3``). This function searches
    all ``c`` and does not assume the theorem.

    Examples
    --------
    >>> sda_optimal_copies(2.0, 1.7071)
    2
    """
    r_max = check_int("r_max", r_max, minimum=1)
    costs = [sda_straggler_cost(c, alpha, sigma) for c in range(1, r_max + 1)]
    return int(np.argmin(costs)) + 1


def sda_expected_resource(
    sigma: float, alpha: float, scale: float = 1.0, progress: float = 0.1, copies: int = 2
) -> float:
    """Expected resource of one SDA task (eqs. 21-26 of seed 000 with ``gamma = 1``).

    ``E[c l + s x] = E[x] + P(straggler) (tau(c) - tau(1))`` with
    ``P(straggler) = ((1 - s) scale / theta)^alpha`` (re-derived from eq. 22). Detection
    happens after fraction ``s`` = ``progress`` of the first copy's run.

    Examples
    --------
    >>> round(sda_expected_resource(1.7071, 2.0), 4)
    1.7763
    """
    alpha = _alpha(alpha)
    s = check_probability("progress", progress, low_open=False, high_open=True)
    theta = sigma * scale * alpha / (alpha - 1.0)
    p_strag = ((1.0 - s) * scale / theta) ** alpha
    mean = scale * alpha / (alpha - 1.0)
    gain = sda_straggler_cost(copies, alpha, sigma, scale) - sda_straggler_cost(
        1, alpha, sigma, scale
    )
    return mean + p_strag * gain


def sda_sigma_star(alpha: float, copies: int = 2) -> float:
    """Eq. 28 of seed 000 / eq. 16 of seed 001: the SDA threshold minimising the resource.

    Minimises ``P(straggler) (tau(c) - tau(1))``, which for ``c = 2`` is proportional to
    ``sigma^(1-alpha) (2q - 2 q^alpha / (2 alpha - 1) - 1)``, ``q = (alpha-1)/(alpha sigma)``
    (eq. 16, taken from the paper), over ``sigma >= (alpha - 1) / alpha``. Setting the
    derivative to zero gives (re-derived; the printed eq. 17 is garbled and has no root
    near the minimum)::

        (alpha - 1) sigma + 2 ((alpha - 1) / alpha)^alpha sigma^(1 - alpha) = 2 (alpha - 1)

    which for ``alpha = 2`` is ``sigma^2 - 2 sigma + 1/2 = 0``, ``sigma* = 1 + sqrt(2)/2``
    as the paper reports. Independent of the scale and of ``s`` (Theorem 3).

    Examples
    --------
    >>> round(sda_sigma_star(2.0), 6)
    1.707107
    """
    alpha = _alpha(alpha)
    c = check_int("copies", copies, minimum=2)
    lo = (alpha - 1.0) / alpha

    def objective(sig: float) -> float:
        return sda_expected_resource(sig, alpha, 1.0, 0.0, c)

    grid = np.linspace(lo, 20.0, 4000)
    vals = np.array([objective(g) for g in grid])
    i = int(np.argmin(vals))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(
        objective, bounds=(a, b), method="bounded", options={"xatol": 1e-10}
    )
    return float(res.x)


def _min_mean_functions(dist: Any):
    """``m(v) = E[min(X, v)] = int_0^v S`` and ``M(v) = int_0^v m`` for ``dist``.

    Closed forms for ``expon(scale)`` and ``pareto(b, scale)`` (loc 0); otherwise
    tabulated by cumulative Simpson integration on a fine grid.
    """
    name, shapes, loc, scale = frozen_params(dist)
    if name == "expon" and loc == 0.0:
        lam = 1.0 / scale

        def m(v):
            return -np.expm1(-lam * np.asarray(v, float)) / lam

        def big_m(v):
            v = np.asarray(v, float)
            return v / lam + np.expm1(-lam * v) / lam**2

        return m, big_m
    if name == "pareto" and loc == 0.0:
        a, mu = shapes["b"], scale

        def m(v):
            v = np.asarray(v, float)
            vv = np.maximum(v, mu)
            return np.where(v <= mu, v, mu * a / (a - 1) - mu**a * vv ** (1 - a) / (a - 1))

        def big_m(v):
            v = np.asarray(v, float)
            vv = np.maximum(v, mu)
            if a == 2.0:
                i = np.log(vv / mu)
            else:
                i = (vv ** (2 - a) - mu ** (2 - a)) / (2 - a)
            return np.where(
                v <= mu, v * v / 2, mu * mu / 2 + mu * a * (vv - mu) / (a - 1) - mu**a * i / (a - 1)
            )

        return m, big_m
    hi = float(dist.isf(1e-9))
    grid = np.concatenate([np.linspace(0.0, hi, 20001), [hi * 4, hi * 16]])
    mv = integrate.cumulative_simpson(dist.sf(grid), x=grid, initial=0.0)
    mm = integrate.cumulative_simpson(mv, x=grid, initial=0.0)

    def m_tabulated(v):
        return np.interp(v, grid, mv)

    def big_m_tabulated(v):
        v = np.asarray(v, float)
        return np.where(v <= grid[-1], np.interp(v, grid, mm), mm[-1] + mv[-1] * (v - grid[-1]))

    return m_tabulated, big_m_tabulated


def ese_expected_resource(sigma: float, dist: Any) -> float:
    """Expected resource ``E[R]`` of one task under ESE's threshold ``sigma`` (``gamma = 1``).

    Model of eqs. 30-33 (seed 000) / 18-25 (seed 001): the scheduler asks once, at a time
    ``u`` uniform on ``[0, x]``; if the remaining time ``x - u > sigma E[x]`` one duplicate
    starts and both run until the first finishes (resource ``u + 2 min(x - u, t_new)``),
    otherwise the task just runs (``x``)::

        E[R] = int_0^theta t dF(t) + int_theta^inf dF(t) [((t - theta)^2 / 2
               + 2 (M(t) - M(theta))) / t + theta],   theta = sigma E[x]

    with ``m(v) = E[min(v, t_new)] = int_0^v S`` (eq. 33) and ``M(v) = int_0^v m``.
    For the exponential this reduces to the integrand of eq. 25 of seed 001, whose last
    term must read ``(1 - e^-sigma - sigma e^-sigma) / lambda`` (eqs. 19-20), not the
    printed ``(1 - sigma - sigma e^-sigma) / lambda``.

    Parameters
    ----------
    sigma : float
        Threshold multiplier, ``>= 0``.
    dist : frozen scipy.stats distribution on ``[0, inf)``
        Task time; closed forms for ``expon`` and ``pareto`` (loc 0), tabulated otherwise.

    Returns
    -------
    float
        ``E[R]`` in the units of the task time.

    Examples
    --------
    >>> from scipy import stats
    >>> round(ese_expected_resource(1.6, stats.expon()), 4)
    0.961
    """
    sigma = float(sigma)
    if not (np.isfinite(sigma) and sigma >= 0.0):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
    _, big_m = _min_mean_functions(dist)
    theta = sigma * float(dist.mean())
    lower, upper = (float(v) for v in dist.support())
    # E[X; X <= theta] = int_0^theta S(x) dx - theta S(theta)
    yb, wb = half_line_rule(np.array([0.0, min(lower, theta), theta]), theta)
    below = float(dist.sf(yb) @ wb) - theta * float(dist.sf(theta))
    breaks = tail_breaks(dist, (theta,))
    y, w = half_line_rule(np.concatenate([breaks, [max(lower - theta, 0.0)]]), upper - theta)
    t = theta + y
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = ((t - theta) ** 2 / 2.0 + 2.0 * (big_m(t) - big_m(theta))) / t + theta
        g = np.where(dist.pdf(t) > 0, dist.pdf(t) * inner, 0.0)
    return below + float(g @ w)


def ese_sigma_star(dist: Any, upper: float = 8.0) -> float:
    """ESE's threshold: ``argmin_sigma E[R](sigma)`` on ``(0, upper]`` (eq. 33 et seq. of
    seed 000, eq. 25 of seed 001), by a grid scan then bounded Brent refinement.

    The papers report about 1.6 for the exponential and 1.7 for Pareto(alpha = 2); this
    gives 1.5936 and 1.7071 (= 1 + sqrt(2)/2, the same value as SDA's eq. 28).

    Examples
    --------
    >>> from scipy import stats
    >>> round(ese_sigma_star(stats.expon()), 3), round(ese_sigma_star(stats.pareto(2.0)), 3)
    (1.594, 1.707)
    """
    upper = check_positive("upper", upper)
    grid = np.linspace(upper / 80, upper, 80)
    vals = [ese_expected_resource(s, dist) for s in grid]
    i = int(np.argmin(vals))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(
        lambda s: ese_expected_resource(s, dist),
        bounds=(a, b),
        method="bounded",
        options={"xatol": 1e-7},
    )
    return float(res.x)
