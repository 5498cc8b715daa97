"""Classification metrics at a decision threshold, overall and per (node, workload) pair."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Metric names :func:`binary_metrics` returns (besides the counts).
METRICS: tuple[str, ...] = (
    "accuracy",
    "balanced_accuracy",
    "precision",
    "recall",
    "f1",
    "roc_auc",
    "pr_auc",
    "tpr",
    "fpr",
)

#: Metrics a grid can be chosen by that a majority-class answer cannot flatter:
#: ROC-AUC (baseline 0.5), PR-AUC (baseline: the positive rate), balanced accuracy (0.5).
SELECTION_METRICS: tuple[str, ...] = ("roc_auc", "pr_auc", "balanced_accuracy")

#: The chance level of each metric a selection can use (``"positive_rate"``: the share of
#: positives of the rows scored).
BASELINES: dict[str, str] = {
    "roc_auc": "0.5 (a score that ranks at random)",
    "pr_auc": "the positive rate (a constant score)",
    "balanced_accuracy": "0.5 (always the same answer)",
    "accuracy": "the majority-class share (always answering 'not a straggler')",
}

#: Rules :func:`choose_threshold` knows.
THRESHOLD_RULES: tuple[str, ...] = ("balanced_accuracy", "f1", "grid")


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
    """Accuracy, balanced accuracy, precision, recall, F1, ROC-AUC, PR-AUC (average
    precision), TPR and FPR when ``proba > threshold``; the two AUCs do not depend on the
    threshold. Every result carries its baselines: ``majority_accuracy`` (the accuracy of
    always answering the majority class) and ``positive_rate`` (the PR-AUC of a constant
    score); ROC-AUC's and balanced accuracy's baseline is 0.5.

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
        The :data:`METRICS` plus ``rows``, ``positives``, ``predicted_positives``,
        ``positive_rate`` and ``majority_accuracy``.

    Examples
    --------
    >>> m = binary_metrics([0, 0, 1, 1], [0.1, 0.6, 0.7, 0.9], threshold=0.5)
    >>> m["accuracy"], m["precision"], m["recall"], m["roc_auc"]
    (0.75, 0.6666666666666666, 1.0, 1.0)
    >>> m["balanced_accuracy"], m["majority_accuracy"], m["positive_rate"]
    (0.75, 0.5, 0.5)
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
    pos = int(y.sum())
    tnr = ratio(tn, tn + fp)
    balanced = (recall + tnr) / 2 if (tp + fn) and (tn + fp) else float("nan")
    return {
        "accuracy": ratio(tp + tn, n),
        "balanced_accuracy": balanced,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "roc_auc": _roc_auc(y, p),
        "pr_auc": _pr_auc(y, p),
        "tpr": recall,
        "fpr": ratio(fp, fp + tn),
        "rows": n,
        "positives": pos,
        "predicted_positives": tp + fp,
        "positive_rate": ratio(pos, n),
        "majority_accuracy": ratio(max(pos, n - pos), n),
    }


def metric_standard_errors(metrics: dict[str, float]) -> dict[str, float]:
    """Standard errors of accuracy, ROC-AUC and PR-AUC, in closed form, from a
    :func:`binary_metrics` result (its ``rows`` and ``positives``).

    * accuracy: the binomial ``sqrt(a (1 - a) / n)``;
    * ROC-AUC: Hanley & McNeil (1982, Radiology 143:29, eq. 2), with
      ``Q1 = A / (2 - A)`` and ``Q2 = 2 A^2 / (1 + A)``;
    * PR-AUC (average precision): the delta method on the precision of the ``n_pos``
      positives, ``sqrt(AP (1 - AP) / n_pos)``, the standard error behind Boyd, Eng & Page's
      (2013, ECML PKDD) logit interval.

    All three treat the test rows as independent draws, so on rows that share a job they are
    lower bounds; they are what a reader needs to tell a 1-point difference from noise.
    Undefined inputs give NaN.

    Examples
    --------
    >>> se = metric_standard_errors({"accuracy": 0.8, "roc_auc": 0.5, "pr_auc": 0.2,
    ...                              "rows": 100, "positives": 20})
    >>> round(se["accuracy_se"], 4), round(se["pr_auc_se"], 4)
    (0.04, 0.0894)
    """
    n = float(metrics.get("rows", 0) or 0)
    pos = float(metrics.get("positives", 0) or 0)
    neg = n - pos

    def finite(v) -> float:
        try:
            v = float(v)
        except (TypeError, ValueError):
            return float("nan")
        return v if np.isfinite(v) else float("nan")

    acc, auc, ap = (finite(metrics.get(k)) for k in ("accuracy", "roc_auc", "pr_auc"))
    out = {"accuracy_se": float("nan"), "roc_auc_se": float("nan"), "pr_auc_se": float("nan")}
    if n > 0 and acc == acc:
        out["accuracy_se"] = float(np.sqrt(acc * (1 - acc) / n))
    if pos > 0 and neg > 0 and auc == auc:
        q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
        var = (auc * (1 - auc) + (pos - 1) * (q1 - auc**2) + (neg - 1) * (q2 - auc**2)) / (
            pos * neg
        )
        out["roc_auc_se"] = float(np.sqrt(max(var, 0.0)))
    if pos > 0 and ap == ap:
        out["pr_auc_se"] = float(np.sqrt(ap * (1 - ap) / pos))
    return out


def choose_threshold(y_true, proba, rule: str = "balanced_accuracy") -> float:
    """The decision threshold that maximises ``rule`` on (validation) rows.

    The candidates are the midpoints between consecutive distinct probabilities (and the
    points just outside their range), so every distinct split of the rows is tried once; ties
    go to the threshold nearest 0.5. The result is clipped into ``[0.001, 0.999]`` (a
    probability threshold must lie strictly inside (0, 1)).

    Parameters
    ----------
    y_true : array-like of 0/1
    proba : array-like of float
        Probability of the positive class.
    rule : {"balanced_accuracy", "f1"}
        What to maximise (``predict positive when proba > threshold``).

    Examples
    --------
    >>> choose_threshold([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4])
    0.25
    >>> choose_threshold([0, 1, 0, 1], [0.25, 0.5, 0.625, 0.75], rule="f1")
    0.375
    """
    if rule not in ("balanced_accuracy", "f1"):
        raise ValueError(f"rule must be 'balanced_accuracy' or 'f1', got {rule!r}")
    y = np.asarray(y_true).astype(np.int64)
    p = np.asarray(proba, dtype=np.float64)
    if y.shape != p.shape or y.size == 0:
        raise ValueError(f"y_true and proba must be non-empty and alike: {y.shape} vs {p.shape}")
    u, inv = np.unique(p, return_inverse=True)
    cands = np.r_[u[0] - 1e-9, (u[:-1] + u[1:]) / 2, u[-1]]
    # candidate i predicts positive for the rows with p >= u[i]: counts by reverse cumsum, so
    # every split is scored in O(n log n) (the loop over binary_metrics was O(n^2))
    pos_at = np.bincount(inv, weights=y, minlength=len(u)).astype(np.int64)
    neg_at = np.bincount(inv, minlength=len(u)).astype(np.int64) - pos_at
    tp = np.r_[np.cumsum(pos_at[::-1])[::-1], 0]
    fp = np.r_[np.cumsum(neg_at[::-1])[::-1], 0]
    n_pos, n_neg = int(pos_at.sum()), int(neg_at.sum())
    fn = n_pos - tp
    with np.errstate(divide="ignore", invalid="ignore"):
        if rule == "balanced_accuracy":
            if n_pos == 0 or n_neg == 0:
                return 0.5
            v = (tp / n_pos + (n_neg - fp) / n_neg) / 2
        else:
            den = 2 * tp + fp + fn
            v = np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), np.nan)
    ok = np.isfinite(v)
    if not ok.any():
        return 0.5
    top = ok & (v == np.max(v[ok]))
    dist = np.where(top, np.abs(cands - 0.5), np.inf)
    best = float(cands[int(np.argmin(dist))])  # ties: the nearest 0.5, then the lowest
    return float(np.clip(best, 0.001, 0.999))


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


def fdr_bh(p_values, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini-Hochberg false-discovery-rate adjustment: adjusted p-values (q-values) and
    which are discoveries at ``alpha``; NaN p-values stay NaN and are never significant.

    A thin wrapper of :func:`scipy.stats.false_discovery_control` (``method="bh"``) that,
    like :func:`holm`, leaves NaNs out of the family.

    Examples
    --------
    >>> adj, sig = fdr_bh([0.01, 0.04, 0.03, float("nan")])
    >>> adj.round(2).tolist()[:3], sig.tolist()
    ([0.03, 0.04, 0.04], [True, True, True, False])
    """
    from scipy.stats import false_discovery_control

    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = false_discovery_control(p[ok], method="bh")
    return out, np.isfinite(out) & (out < alpha)
