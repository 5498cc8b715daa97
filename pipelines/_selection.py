"""Choosing a model's grid point on validation rows: one loop for ``evaluate`` and ``compare``.

``train`` runs the same search as an Optuna study (resumable, tracked in MLflow); the
commands that fit a model as one step of a larger job use :func:`select_point`, which fits
each regulariser set once and scores every threshold of the grid on the same predictions.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipelines._estimators import make_estimator
from pipelines._grid import grid_points
from pipelines._metrics import binary_metrics


@dataclass(frozen=True)
class Selection:
    """The chosen point and what it scored.

    Attributes
    ----------
    point : dict
        Regularisers and threshold (the first point in grid order among the best).
    score : float
        Its validation ``metric``; NaN when nothing was scored (no validation rows, a single
        grid point, or one class in the validation rows under a threshold-free metric), and
        ``point`` is then the grid's first.
    proba : numpy.ndarray or None
        The chosen point's straggler probabilities on the validation rows.
    fits : int
        Models fitted (one per regulariser set; thresholds share them).
    """

    point: dict[str, float]
    score: float
    proba: np.ndarray | None
    fits: int


def select_point(
    model: str,
    X: pd.DataFrame,
    y: np.ndarray,
    fit_rows: np.ndarray,
    val_rows: np.ndarray,
    space: dict[str, list[float]],
    *,
    seed: int = 0,
    metric: str = "accuracy",
    extra: dict | None = None,
) -> Selection:
    """The grid point of ``space`` whose model, fitted on ``fit_rows``, scores best on
    ``val_rows`` by ``metric`` (a key of :func:`pipelines._metrics.binary_metrics`).

    A threshold-free metric (``roc_auc``, ``pr_auc``) ranks the regulariser sets and keeps
    the grid's first threshold for each; ties go to the first point in grid order.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"node": rng.choice(["a", "b"], 400), "workload": "w",
    ...                   "c_cpu": rng.normal(size=400)})
    >>> y = (X["c_cpu"] + rng.normal(size=400) > 1).to_numpy(dtype=int)
    >>> s = select_point("f0nl", X, y, np.arange(300), np.arange(300, 400),
    ...                  {"lambda0": [1.0, 100.0], "nu": [1.0], "omega": [1.0],
    ...                   "threshold": [0.5]}, metric="roc_auc")
    >>> s.fits, sorted(s.point), s.score > 0.7
    (2, ['lambda0', 'nu', 'omega', 'threshold'], True)
    """
    thresholds = list(space.get("threshold", [0.5]))
    regs = {k: v for k, v in space.items() if k != "threshold"}
    points = grid_points(regs) if regs else [{}]
    first = {**points[0], "threshold": thresholds[0]}
    yv = np.asarray(y)[val_rows]
    threshold_free = metric in ("roc_auc", "pr_auc")
    one_class = len(np.unique(yv)) < 2  # a threshold-free metric is undefined there
    if len(val_rows) == 0 or (threshold_free and one_class) or len(points) * len(thresholds) == 1:
        return Selection(first, math.nan, None, 0)
    best, best_score, best_p = first, -math.inf, None
    Xf, yf, Xv = X.iloc[fit_rows], np.asarray(y)[fit_rows], X.iloc[val_rows]
    from mtl import DegenerateModelWarning

    for reg in points:
        # A candidate whose probabilities collapse is a point the search can pass over, not
        # something to warn about; the refit of the chosen point warns if that one collapses.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateModelWarning)
            est = make_estimator(model, reg, seed, **(extra or {})).fit(Xf, yf)
        p = est.predict_proba(Xv)[:, 1]
        for thr in thresholds[:1] if threshold_free else thresholds:
            score = float(binary_metrics(yv, p, thr)[metric])
            if score > best_score:  # NaN never wins; ties keep the earlier point
                best, best_score, best_p = {**reg, "threshold": thr}, score, p
    score = best_score if math.isfinite(best_score) else math.nan
    return Selection(best, score, best_p, len(points))
