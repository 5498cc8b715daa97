"""Platt scaling: ``P(y = 1 | s) = 1 / (1 + exp(-(a s + c)))`` with ``a > 0``.

Fitted by maximum likelihood on Platt's smoothed targets ``(N+ + 1) / (N+ + 2)`` and
``1 / (N- + 2)`` (Platt 1999), so a perfectly separated calibration set does not give
probabilities of exactly 0 or 1. The slope is kept strictly positive so that the probability
is increasing in the SVM margin (ranking is preserved).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, NamedTuple, TypeVar

import numpy as np
from scipy.special import expit, log_expit

from ._common import stratified_folds

_MIN_SLOPE = 1e-8

#: The rows a fit or a scoring sees: a boolean mask, or ``slice(None)`` for all of them (a
#: view, no copy of the counters).
Rows = np.ndarray | slice

M = TypeVar("M")


class CalibratedFit(NamedTuple, Generic[M]):
    """What :func:`cross_fitted_platt` returns."""

    #: The model fitted on all rows.
    model: M
    #: Platt slope ``a`` and intercept ``c`` on the margin.
    slope: float
    intercept: float
    #: ``"cross-fitted"`` or ``"in-sample"``.
    mode: str
    #: The margins the sigmoid was fitted on (out-of-fold when cross-fitted).
    scores: np.ndarray


def cross_fitted_platt(
    fit: Callable[[Rows], M],
    margin: Callable[[M, Rows], np.ndarray],
    y_pm: np.ndarray,
    cv: int | None,
    seed,
) -> CalibratedFit[M]:
    """Fit a model on all rows and a Platt sigmoid on its cross-fitted margins.

    With ``cv`` folds (:func:`~mtl._common.stratified_folds`, seeded by ``seed``) and at least
    ``cv`` rows of the minority class, the model is fitted ``cv`` times without one fold and
    scores that fold; then once on all rows. Otherwise (``cv`` None or too few rows) the
    sigmoid is fitted on the all-rows model's own, in-sample margins.

    Parameters
    ----------
    fit : callable
        ``fit(rows) -> model`` on the rows selected by ``rows``.
    margin : callable
        ``margin(model, rows) -> decision values`` of those rows.
    y_pm : ndarray of shape (n,)
        Labels in {-1, +1}.
    cv : int or None
        Number of calibration folds (already validated).
    seed : int, Generator or None
        Seed of the folds.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=300)
    >>> y = np.where(x + rng.normal(size=300) > 0, 1.0, -1.0)
    >>> mean_gap = lambda rows: x[rows][y[rows] > 0].mean() - x[rows][y[rows] < 0].mean()
    >>> res = cross_fitted_platt(mean_gap, lambda gap, rows: gap * x[rows], y, 3, 0)
    >>> res.mode, res.slope > 0
    ('cross-fitted', True)
    """
    n_minority = int(min((y_pm > 0).sum(), (y_pm < 0).sum()))
    all_rows = slice(None)
    if cv is not None and n_minority >= cv:
        folds = stratified_folds(y_pm, cv, seed)
        scores = np.empty(y_pm.shape[0])
        for k in range(cv):
            tr, te = folds != k, folds == k
            scores[te] = margin(fit(tr), te)
        model = fit(all_rows)
        mode = "cross-fitted"
    else:
        model = fit(all_rows)
        scores = margin(model, all_rows)
        mode = "in-sample"
    a, c = fit_platt(scores, (y_pm > 0).astype(int))
    return CalibratedFit(model, a, c, mode, scores)


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
    prior = np.clip((n_pos + 1.0) / (n_pos + n_neg + 2.0), 1e-12, 1 - 1e-12)
    a, c = _newton(s, t, w, 1.0, float(np.log(prior / (1 - prior))), fix_slope=False)
    if a < _MIN_SLOPE:  # anti-correlated scores: keep the slope at its floor, refit c
        a, c = _newton(s, t, w, _MIN_SLOPE, c, fix_slope=True)
    return float(a / scale), float(c)


def _nll(s, t, w, a, c) -> float:
    f = a * s + c
    return float(-(w * (t * log_expit(f) + (1 - t) * log_expit(-f))).sum())


def _newton(s, t, w, a, c, *, fix_slope: bool, max_iter: int = 100) -> tuple[float, float]:
    """Damped Newton on the 2-parameter (or intercept-only) logistic likelihood."""
    f_old = _nll(s, t, w, a, c)
    for _ in range(max_iter):
        p = expit(a * s + c)
        r = w * (p - t)
        q = w * p * (1.0 - p)
        g = np.array([float(r @ s), float(r.sum())])
        if fix_slope:
            step = np.array([0.0, g[1] / max(float(q.sum()), 1e-300)])
        else:
            H = np.array([[float(q @ (s * s)), float(q @ s)], [float(q @ s), float(q.sum())]])
            H += 1e-12 * np.eye(2) * max(1.0, float(np.trace(H)))
            step = np.linalg.solve(H, g)
        lr = 1.0
        while lr > 1e-10:
            a_new, c_new = a - lr * step[0], c - lr * step[1]
            f_new = _nll(s, t, w, a_new, c_new)
            if f_new <= f_old + 1e-4 * lr * float(-g @ step):
                break
            lr *= 0.5
        else:
            break
        done = abs(f_old - f_new) <= 1e-12 * max(1.0, abs(f_old))
        a, c, f_old = a_new, c_new, f_new
        if done or np.abs(g).max() < 1e-10 * max(1.0, float(w.sum())):
            break
    return a, c


def platt_proba(scores: np.ndarray, a: float, c: float) -> np.ndarray:
    """Probability of the positive class for decision values ``scores``."""
    return expit(a * np.asarray(scores, dtype=np.float64) + c)
