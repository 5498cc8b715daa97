"""The residual noise of an attempt's duration: a small body and a rare, heavy Pareto tail.

What is left once node state, contention and data skew are accounted for. Most attempts run
within a few percent of their nominal time (the *body*, ``exp(b * v)`` with ``v`` uniform on
[0, 1)); a share ``p`` of them meets a rare event (a failed disk read, a GC pause, a slow
remote fetch) that stretches it by a Pareto factor of exponent ``alpha`` above the body's top.
One uniform draw ``u`` gives the multiplier by inverting the mixture's CDF, so the originals'
draws can be made up front (common random numbers across policies).

Defaults and their evidence:

- ``p = 0.2``: Garraghan et al. (2016) attribute 53% of stragglers to server load, so about
  half of the stragglers must come from causes a node's state does not show. ``p`` is the
  share that, on the default world, makes the share of stragglers the median node would not
  have produced closest to that figure (``straggler fidelity`` measures it; with FB-2009 at
  3 h on 50 nodes: p = 0.1 gives 0.72, 0.15 gives 0.63, 0.2 gives 0.56, 0.25 gives 0.52;
  FB-2010, whose profiles lean on the cpu, stays higher: 0.81, 0.74, 0.69, 0.68). A calibration
  to a published fact, not a fit to data; it makes the predictor's task harder, not easier.
- ``alpha = 1.5`` (``Workload.tail_alpha``): the p90 of a tail event is then about
  ``exp(b) * 10 ** (1 / 1.5) = 5.4x``; Dolly (NSDI'13) reports the slowest task of a median
  job at ~8x the median task, Mantri reports stragglers of 1.5-10x.
- ``b = 0.15``: a healthy attempt's spread (up to 16% over nominal) stays below the 1.3x
  threshold, so the body alone never makes a straggler. This one is an assumption.
- ``cap = 100``: a Pareto tail of exponent 1.5 is unbounded (one draw in ~4,000 exceeds 100x,
  one in ~10^6 exceeds 10^4x), but a real framework fails an attempt that stops making
  progress and runs it again (Hadoop's ``mapred.task.timeout``, 10 minutes by default), so
  no attempt runs for ever. The cap is an assumption of that order; it also keeps the
  contention paths, solved up to each attempt's end, from reaching weeks into the future.
"""

from __future__ import annotations

import math

import numpy as np

from sim_bridge import _portable_math as portable_math

__all__ = [
    "NOISE_BODY",
    "NOISE_CAP",
    "NOISE_TAIL_ALPHA",
    "NOISE_TAIL_SHARE",
    "noise_sf",
    "residual_noise",
    "residual_noise_one",
]

NOISE_TAIL_SHARE = 0.2
NOISE_TAIL_ALPHA = 1.5
NOISE_BODY = 0.15
NOISE_CAP = 100.0


def residual_noise(
    u,
    alpha=NOISE_TAIL_ALPHA,
    p: float = NOISE_TAIL_SHARE,
    body: float = NOISE_BODY,
    cap: float = NOISE_CAP,
) -> np.ndarray:
    """The duration multiplier (in [1, cap]) for uniform draws ``u`` in [0, 1) (vectorised).

    ``exp(body * u / (1 - p))`` for ``u < 1 - p``, else ``min(cap, exp(body) * ((1 - u) / p)
    ** (-1 / alpha))``: continuous and non-decreasing in ``u``.

    Examples
    --------
    >>> residual_noise([0.0, 0.4, 0.8]).round(4).tolist()
    [1.0, 1.0779, 1.1618]
    >>> float(residual_noise(0.98).round(3))  # a tail event: the p90 of the tail
    5.393
    """
    u = np.asarray(u, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    q = 1.0 - p
    with np.errstate(divide="ignore"):
        tail = math.exp(body) * portable_math.power((1.0 - u) / p, -1.0 / alpha)
    body_part = portable_math.exp(body * np.minimum(u, q) / q)
    return np.where(u < q, body_part, np.minimum(tail, cap))


def residual_noise_one(
    u: float,
    alpha: float,
    p: float = NOISE_TAIL_SHARE,
    body: float = NOISE_BODY,
    cap: float = NOISE_CAP,
) -> float:
    """:func:`residual_noise` of one draw, as a float: the same value bit for bit, without
    the arrays (the engine draws a copy's noise at its launch; the arrays took 24 us a call).

    Examples
    --------
    >>> residual_noise_one(0.98, 1.5) == float(residual_noise(0.98, 1.5))
    True
    """
    q = 1.0 - p
    if u < q:
        return portable_math.exp_scalar(body * u / q)
    tail = math.exp(body) * portable_math.pow_scalar((1.0 - u) / p, -1.0 / alpha)
    return cap if cap < tail else tail  # np.minimum's: a NaN tail stays NaN


def noise_sf(
    x,
    alpha=NOISE_TAIL_ALPHA,
    p: float = NOISE_TAIL_SHARE,
    body: float = NOISE_BODY,
    cap: float = NOISE_CAP,
):
    """``P(multiplier > x)``: the survival function of :func:`residual_noise` (closed form;
    0 from the cap on).

    Examples
    --------
    >>> float(noise_sf(1.0)), round(float(noise_sf(5.393)), 3)
    (1.0, 0.02)
    """
    x = np.asarray(x, dtype=float)
    top = math.exp(body)
    with np.errstate(divide="ignore", invalid="ignore"):
        in_body = p + (1.0 - p) * (1.0 - portable_math.log(np.maximum(x, 1.0)) / body)
        in_tail = p * portable_math.power(np.maximum(x, top) / top, -np.asarray(alpha, float))
    out = np.where(x <= 1.0, 1.0, np.where(x <= top, in_body, in_tail))
    return np.where(x >= cap, 0.0, out)
