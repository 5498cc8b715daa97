"""Classification metrics at a decision threshold, overall and per (node, workload) pair."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Metric names :func:`binary_metrics` returns (besides the counts).
METRICS: tuple[str, ...] = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "roc_auc",
    "pr_auc",
    "tpr",
    "fpr",
)


def _roc_auc(y: np.ndarray, score: np.ndarray) -> float:
    """Mann-Whitney AUC with ties counted one half; NaN with a single class."""
    pos, neg = int(y.sum()), int(len(y) - y.sum())
    if pos == 0 or neg == 0:
        return float("nan")
    ranks = pd.Series(score).rank(method="average").to_numpy()
    return float((ranks[y == 1].sum() - pos * (pos + 1) / 2) / (pos * neg))


def _pr_auc(y: np.ndarray, score: np.ndarray) -> float:
    """Average precision (the step-wise area under the precision-recall curve, as
    scikit-learn's ``average_precision_score``; ties form one step); NaN without a positive.

    Examples
    --------
    >>> _pr_auc(np.array([0, 1, 1]), np.array([0.1, 0.9, 0.8]))
    1.0
    >>> round(_pr_auc(np.array([1, 0, 1]), np.array([0.1, 0.9, 0.8])), 4)
    0.5833
    """
    pos = int(y.sum())
    if pos == 0:
        return float("nan")
    order = np.argsort(-score, kind="mergesort")
    s, t = score[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(s)), len(s) - 1]  # the end of each tie group
    tp = np.cumsum(t)[last]
    fp = (last + 1) - tp
    precision = tp / (tp + fp)
    recall = tp / pos
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def binary_metrics(y_true, proba, threshold: float = 0.5) -> dict[str, float]:
    """Accuracy, precision, recall, F1, ROC-AUC, PR-AUC (average precision), TPR and FPR
    when ``proba > threshold``; the two AUCs do not depend on the threshold.

    Undefined ratios (no predicted positive, no positive, a single class for ROC-AUC) are NaN.

    Parameters
    ----------
    y_true : array-like of 0/1
    proba : array-like of float
        Probability of the positive class (straggler).
    threshold : float
        Predict positive when ``proba > threshold`` (as ``GroupedMTLSVC.predict``).

    Returns
    -------
    dict
        The :data:`METRICS` plus ``rows``, ``positives`` and ``predicted_positives``.

    Examples
    --------
    >>> m = binary_metrics([0, 0, 1, 1], [0.1, 0.6, 0.7, 0.9], threshold=0.5)
    >>> m["accuracy"], m["precision"], m["recall"], m["roc_auc"]
    (0.75, 0.6666666666666666, 1.0, 1.0)
    """
    y = np.asarray(y_true).astype(np.int64)
    p = np.asarray(proba, dtype=np.float64)
    if y.shape != p.shape:
        raise ValueError(f"y_true and proba differ in shape: {y.shape} vs {p.shape}")
    pred = p > threshold
    tp = int((pred & (y == 1)).sum())
    fp = int((pred & (y == 0)).sum())
    fn = int((~pred & (y == 1)).sum())
    tn = int((~pred & (y == 0)).sum())
    n = len(y)

    def ratio(a: int, b: int) -> float:
        return a / b if b else float("nan")

    precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
    f1 = ratio(2 * tp, 2 * tp + fp + fn)  # = harmonic mean of precision and recall
    return {
        "accuracy": ratio(tp + tn, n),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "roc_auc": _roc_auc(y, p),
        "pr_auc": _pr_auc(y, p),
        "tpr": recall,
        "fpr": ratio(fp, fp + tn),
        "rows": n,
        "positives": int(y.sum()),
        "predicted_positives": tp + fp,
    }


def confusion(y_true, proba, threshold: float = 0.5) -> np.ndarray:
    """2x2 counts ``[[tn, fp], [fn, tp]]`` (rows: truth, columns: prediction).

    Examples
    --------
    >>> confusion([0, 1, 1], [0.9, 0.8, 0.1]).tolist()
    [[0, 1], [1, 1]]
    """
    y = np.asarray(y_true).astype(np.int64)
    pred = (np.asarray(proba, dtype=np.float64) > threshold).astype(np.int64)
    out = np.zeros((2, 2), dtype=np.int64)
    np.add.at(out, (y, pred), 1)
    return out


def per_pair_metrics(frame: pd.DataFrame, y_true, proba, threshold: float = 0.5) -> pd.DataFrame:
    """:func:`binary_metrics` for every (node, workload) pair of ``frame`` (same row order).

    Examples
    --------
    >>> f = pd.DataFrame({"node": ["a", "a", "b"], "workload": ["W", "W", "W"]})
    >>> per_pair_metrics(f, [0, 1, 1], [0.2, 0.9, 0.1])[["node", "accuracy"]].to_dict("list")
    {'node': ['a', 'b'], 'accuracy': [1.0, 0.0]}
    """
    y = np.asarray(y_true)
    p = np.asarray(proba, dtype=np.float64)
    rows = []
    groups = frame.reset_index(drop=True).groupby(["node", "workload"], sort=True).indices
    for (node, wl), idx in groups.items():
        rows.append({"node": node, "workload": wl, **binary_metrics(y[idx], p[idx], threshold)})
    return pd.DataFrame(rows)


def holm(p_values, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down adjustment: adjusted p-values and which are significant at ``alpha``
    (family-wise error rate). NaN p-values stay NaN and are never significant.

    Examples
    --------
    >>> adj, sig = holm([0.01, 0.04, 0.03, float("nan")])
    >>> adj.round(2).tolist()[:3], sig.tolist()
    ([0.03, 0.06, 0.06], [True, False, False, False])
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m:
        order = ok[np.argsort(p[ok], kind="stable")]
        adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
        out[order] = adj
    return out, np.isfinite(out) & (out < alpha)
