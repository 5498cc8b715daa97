"""Platt scaling: ``P(y = 1 | s) = 1 / (1 + exp(-(a s + c)))`` with ``a > 0``.

Fitted by maximum likelihood on Platt's smoothed targets ``(N+ + 1) / (N+ + 2)`` and
``1 / (N- + 2)`` (Platt 1999), so a perfectly separated calibration set does not give
probabilities of exactly 0 or 1. The slope is kept strictly positive so that the probability
is increasing in the SVM margin (ranking is preserved).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

_MIN_SLOPE = 1e-8


def fit_platt(
    scores: np.ndarray, y01: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[float, float]:
    """Fit ``(a, c)`` of the Platt sigmoid on decision values ``scores`` and labels in {0, 1}.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(size=400)
    >>> y = (rng.random(400) < 1 / (1 + np.exp(-2 * s))).astype(int)
    >>> a, c = fit_platt(s, y)
    >>> 1.4 < a < 2.8 and abs(c) < 0.4
    True
    """
    scores = np.asarray(scores, dtype=np.float64)
    y01 = np.asarray(y01)
    w = np.ones_like(scores) if sample_weight is None else np.asarray(sample_weight, float)
    n_pos = float(w[y01 == 1].sum())
    n_neg = float(w[y01 == 0].sum())
    t = np.where(y01 == 1, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    scale = float(np.std(scores))
    if not np.isfinite(scale) or scale <= 0:
        scale = 1.0
    s = scores / scale

    def nll(p):
        a, c = p
        f = a * s + c
        val = -(w * (t * log_expit(f) + (1 - t) * log_expit(-f))).sum()
        r = w * (expit(f) - t)
        return val, np.array([float(r @ s), float(r.sum())])

    prior = np.clip((n_pos + 1.0) / (n_pos + n_neg + 2.0), 1e-12, 1 - 1e-12)
    x0 = np.array([1.0, float(np.log(prior / (1 - prior)))])
    res = minimize(
        nll, x0, jac=True, method="L-BFGS-B", bounds=[(_MIN_SLOPE * scale, None), (None, None)]
    )
    a, c = res.x
    return float(a / scale), float(c)


def platt_proba(scores: np.ndarray, a: float, c: float) -> np.ndarray:
    """Probability of the positive class for decision values ``scores``."""
    return expit(a * np.asarray(scores, dtype=np.float64) + c)
