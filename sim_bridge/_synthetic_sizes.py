"""The size distribution of the synthetic workload, fitted to the real SWIM traces.

:data:`SYNTHETIC_SIZES` is the default; :func:`fit_synthetic_sizes` measures it from the
FB-2009 and FB-2010 day samples (``tests/test_sim_workloads.py`` checks the two agree).

Examples
--------
>>> SYNTHETIC_SIZES.rate_per_hour
245.6
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim_bridge._data_dir import resolve_data_dir
from sim_bridge._workload_files import SWIM_FILES, read_swim

__all__ = ["SYNTHETIC_SIZES", "SyntheticSizes", "fit_log_mixture", "fit_synthetic_sizes"]


#: Probabilities at which :func:`fit_synthetic_sizes` matches the map-input distribution.
_FIT_PROBS = np.linspace(0.01, 0.99, 99)


@dataclass(frozen=True)
class SyntheticSizes:
    """Parameters of the synthetic workload, each measured by :func:`fit_synthetic_sizes`.

    Sizes are natural logs of bytes. ``ln(map input)`` is a two-component normal mixture
    (``big_share`` of the jobs in the big component); a ``shuffle_share`` of the jobs have a
    shuffle stage, with ``ln(shuffle / input) ~ N(shuffle_mu, shuffle_sd)`` and
    ``ln(output / shuffle) ~ N(output_mu, output_sd)``; byte counts are capped at the
    largest of the real traces (``max_bytes``).
    """

    rate_per_hour: float
    big_share: float
    small_mu: float
    small_sd: float
    big_mu: float
    big_sd: float
    shuffle_share: float
    shuffle_mu: float
    shuffle_sd: float
    output_mu: float
    output_sd: float
    max_bytes: float


#: The synthetic default: ``fit_synthetic_sizes(data_dir)`` on the real SWIM files, rounded
#: as that function states (``tests/test_sim_workloads.py`` checks the two agree).
SYNTHETIC_SIZES = SyntheticSizes(
    rate_per_hour=245.6,
    big_share=0.384,
    small_mu=8.77,
    small_sd=3.41,
    big_mu=20.3,
    big_sd=3.68,
    shuffle_share=0.452,
    shuffle_mu=-0.29,
    shuffle_sd=2.71,
    output_mu=-1.74,
    output_sd=2.59,
    max_bytes=8.6e13,
)


def _robust_normal(x: np.ndarray) -> tuple[float, float]:
    """Median and IQR / 1.349 of ``x``: a normal fit the far tails cannot drag.

    Examples
    --------
    >>> _robust_normal(np.array([-1.349, 0.0, 0.0, 1.349, 50.0]))
    (0.0, 1.0)
    """
    q1, med, q3 = np.quantile(x, [0.25, 0.5, 0.75])
    return float(med), float((q3 - q1) / 1.349)


def _mixture_cdf(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    from scipy.special import expit, ndtr

    w, mu1, ls1, mu2, ls2 = theta
    return (1 - expit(w)) * ndtr((x - mu1) / np.exp(ls1)) + expit(w) * ndtr((x - mu2) / np.exp(ls2))


def _pooled_quantiles(samples: Sequence[np.ndarray], probs: np.ndarray) -> np.ndarray:
    """Quantiles of the samples pooled with equal total weight per sample.

    Examples
    --------
    >>> _pooled_quantiles([np.array([0.0, 1.0]), np.arange(10.0, 20.0)], np.array([0.25, 0.75]))
    array([ 0.5, 14.5])
    """
    x = np.concatenate([np.asarray(s, dtype=float) for s in samples])
    w = np.concatenate([np.full(len(s), 1.0 / len(s)) for s in samples])
    order = np.argsort(x, kind="mergesort")
    cum = (np.cumsum(w[order]) - 0.5 * w[order]) / w.sum()
    return np.interp(probs, cum, x[order])


def _mixture_quantiles(theta: np.ndarray, probs: np.ndarray, grid: np.ndarray) -> np.ndarray:
    cdf = _mixture_cdf(grid, theta)
    return np.interp(probs, cdf, grid)


def fit_log_mixture(samples: Sequence[np.ndarray]) -> tuple[float, float, float, float, float]:
    """Two-component normal mixture matched to the pooled quantiles of ``samples``.

    Each sample weighs the same (a long trace does not outvote a short one). The mixture's
    1%, 2%, ..., 99% quantiles are fitted to the pooled ones by least squares (Nelder-Mead
    from the pooled quartiles, deterministic); matching quantiles rather than CDF values
    keeps the far tail, which holds most of the work, in place.

    Returns
    -------
    big_share, small_mu, small_sd, big_mu, big_sd : float
        The component with the larger mean is ``big``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = np.concatenate([rng.normal(0, 1, 8000), rng.normal(10, 2, 2000)])
    >>> np.round(fit_log_mixture([x]), 1).tolist()
    [0.2, 0.0, 1.0, 10.1, 1.9]
    """
    from scipy.optimize import minimize

    target = _pooled_quantiles(samples, _FIT_PROBS)
    lo, hi = target[0], target[-1]
    grid = np.linspace(lo - (hi - lo), hi + (hi - lo), 4001)

    def loss(theta: np.ndarray) -> float:
        return float(np.sum((_mixture_quantiles(theta, _FIT_PROBS, grid) - target) ** 2))

    # a few deterministic starts (the split between the components, their spread): the
    # quantile loss has local minima where one component collapses
    starts = [
        np.array(
            [
                math.log(p / (1 - p)),
                np.quantile(target, p / 2),
                ls,
                np.quantile(target, (1 + p) / 2),
                ls,
            ]
        )
        for p in (0.2, 0.5, 0.8)
        for ls in (0.0, math.log((hi - lo) / 8))
    ]
    fits = [
        minimize(
            loss,
            theta0,
            method="Nelder-Mead",
            options={"xatol": 1e-6, "fatol": 1e-10, "maxiter": 20000, "maxfev": 20000},
        )
        for theta0 in starts
    ]
    res = min(fits, key=lambda r: r.fun)
    w, mu1, ls1, mu2, ls2 = res.x
    share = float(1.0 / (1.0 + np.exp(-w)))
    if mu1 > mu2:
        share, mu1, ls1, mu2, ls2 = 1.0 - share, mu2, ls2, mu1, ls1
    return share, float(mu1), float(np.exp(ls1)), float(mu2), float(np.exp(ls2))


def fit_synthetic_sizes(data_dir: str | os.PathLike[str] | None = None) -> SyntheticSizes:
    """Fit :class:`SyntheticSizes` to the real SWIM FB-2009 and FB-2010 day samples.

    - ``rate_per_hour``: FB-2009's jobs per hour (its day sample spans 24 hours);
    - the ``ln(map input)`` mixture: :func:`fit_log_mixture` on FB-2009 and FB-2010 (jobs
      with input > 0), the two traces weighing the same;
    - ``shuffle_share``: the mean over the two traces of their share of jobs with a shuffle;
    - ``shuffle_*`` and ``output_*``: :func:`_robust_normal` of ``ln(shuffle / input)`` and
      ``ln(output / shuffle)`` over the jobs with input, shuffle and output > 0 of both traces,
      each trace weighing the same (the median and IQR are taken over the two traces' values
      resampled to equal size by quantiles);
    - ``max_bytes``: the largest byte count of either trace.

    Rounding: the rate to 0.1 job/h, shares to 0.001, log parameters to 0.01, ``max_bytes``
    to two significant digits (rounded up).

    Examples
    --------
    >>> fit_synthetic_sizes("/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: ...
    """
    root = resolve_data_dir(data_dir)
    rows = {n: np.array([r[1:] for r in read_swim(root / SWIM_FILES[n])]) for n in SWIM_FILES}
    fb09 = rows["FB2009"]
    rate = fb09.shape[0] / 24.0
    logs_in = [np.log(r[r[:, 1] > 0, 1]) for r in rows.values()]
    big_share, small_mu, small_sd, big_mu, big_sd = fit_log_mixture(logs_in)
    shuffle_share = float(np.mean([np.mean(r[:, 2] > 0) for r in rows.values()]))
    probs = (np.arange(2000) + 0.5) / 2000  # each trace resampled to 2,000 quantiles
    ok = [r[(r[:, 1] > 0) & (r[:, 2] > 0) & (r[:, 3] > 0)] for r in rows.values()]
    shuffle_mu, shuffle_sd = _robust_normal(
        np.concatenate([np.quantile(np.log(r[:, 2] / r[:, 1]), probs) for r in ok])
    )
    output_mu, output_sd = _robust_normal(
        np.concatenate([np.quantile(np.log(r[:, 3] / r[:, 2]), probs) for r in ok])
    )
    top = max(float(r[:, 1:].max()) for r in rows.values())
    digits = 10.0 ** (math.floor(math.log10(top)) - 1)
    return SyntheticSizes(
        rate_per_hour=round(rate, 1),
        big_share=round(big_share, 3),
        small_mu=round(small_mu, 2),
        small_sd=round(small_sd, 2),
        big_mu=round(big_mu, 2),
        big_sd=round(big_sd, 2),
        shuffle_share=round(shuffle_share, 3),
        shuffle_mu=round(shuffle_mu, 2),
        shuffle_sd=round(shuffle_sd, 2),
        output_mu=round(output_mu, 2),
        output_sd=round(output_sd, 2),
        max_bytes=math.ceil(top / digits) * digits,
    )
