"""The facts measured on one no-speculation trace: straggler share, how slow stragglers are,
the share due to the node, and the counters' held-out ROC-AUC.

Each measurement is a small pure function of the simulation's tasks table;
:func:`trace_facts` measures all four on one workload.

Examples
--------
>>> import numpy as np
>>> round(straggler_share(np.array([0.0, 1.0, np.nan, 0.0])), 3)
0.333
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines._fidelity_bands import FactResult, _point
from pipelines._metrics import _roc_auc
from sim_bridge.trace import DEFAULT_BETA, DEFAULT_MIN_TASKS, counter_columns

__all__ = [
    "NOT_MEASURED_TRUTH",
    "TRUTH_COLUMNS",
    "counters_auc",
    "median_node_share",
    "roc_auc",
    "stage_medians",
    "straggler_ratios",
    "straggler_share",
    "time_split",
    "trace_facts",
]

#: The columns ``simulate(..., record_truth=True)`` adds to the tasks table.
TRUTH_COLUMNS: tuple[str, ...] = (
    "truth_work",
    "truth_noise",
    "truth_slowdown_launch",
    "truth_slowdown_median",
)
NOT_MEASURED_TRUTH = "not measured (the simulator does not record truth)"


def stage_medians(
    tasks: pd.DataFrame, beta: float = DEFAULT_BETA, min_tasks: int = DEFAULT_MIN_TASKS
) -> np.ndarray:
    """Per attempt: the median run time of its stage (job, phase), via the simulator's rule.

    The stage median of :func:`sim_bridge.straggler_thresholds` (finished originals, at
    least ``min_tasks`` of them; NaN otherwise), with the stage as the grouping key.

    Examples
    --------
    >>> t = pd.DataFrame({"job_id": ["a"] * 6, "phase": ["map"] * 3 + ["reduce"] * 3,
    ...                   "attempt": [0] * 6, "duration": [1.0, 2.0, 9.0, 5.0, 6.0, 7.0]})
    >>> stage_medians(t).tolist()
    [2.0, 2.0, 2.0, 6.0, 6.0, 6.0]
    """
    from sim_bridge import straggler_thresholds

    stage = tasks["job_id"].astype(str) + "\x1f" + tasks["phase"].astype(str)
    outcome = tasks["outcome"] if "outcome" in tasks.columns else None
    median, _label = straggler_thresholds(
        stage, tasks["attempt"], outcome, tasks["duration"], beta, min_tasks
    )
    return median


def straggler_share(label: np.ndarray) -> float:
    """Share of stragglers among the labelled attempts (NaN labels left out).

    Examples
    --------
    >>> straggler_share(np.array([1.0, 0.0, 0.0, 0.0, np.nan]))
    0.25
    """
    lab = np.asarray(label, dtype=float)
    lab = lab[~np.isnan(lab)]
    return float(lab.mean()) if lab.size else float("nan")


def straggler_ratios(duration, median, label) -> np.ndarray:
    """Duration over stage median of each straggler (label 1, finite median).

    Examples
    --------
    >>> straggler_ratios([30.0, 10.0, 50.0], [10.0, 10.0, np.nan], [1.0, 0.0, 1.0]).tolist()
    [3.0]
    """
    dur = np.asarray(duration, dtype=float)
    med = np.asarray(median, dtype=float)
    keep = (np.asarray(label, dtype=float) == 1.0) & np.isfinite(med) & (med > 0)
    return dur[keep] / med[keep]


def median_node_share(tasks: pd.DataFrame, label, median, beta: float = DEFAULT_BETA) -> float:
    """Share of stragglers that would not straggle on the median node at that instant.

    A straggler (label 1) would not straggle on the median node when its nominal work times
    the median slowdown over all nodes at its launch (``truth_work * truth_slowdown_median``)
    stays within ``beta`` x its stage median. NaN without stragglers or truth columns.

    Examples
    --------
    >>> t = pd.DataFrame({"truth_work": [10.0, 10.0, 40.0],
    ...                   "truth_slowdown_median": [1.0, 1.0, 1.0]})
    >>> median_node_share(t, [1.0, 1.0, 1.0], [10.0, 10.0, 10.0])
    0.6666666666666666
    """
    if not {"truth_work", "truth_slowdown_median"} <= set(tasks.columns):
        return float("nan")
    med = np.asarray(median, dtype=float)
    nominal = tasks["truth_work"].to_numpy(float) * tasks["truth_slowdown_median"].to_numpy(float)
    strag = (np.asarray(label, dtype=float) == 1.0) & np.isfinite(med) & np.isfinite(nominal)
    if not strag.any():
        return float("nan")
    return float(np.mean(nominal[strag] <= beta * med[strag]))


def roc_auc(y, score) -> float:
    """ROC-AUC of ``score`` for binary ``y`` (ties count one half; NaN with one class), the
    project's one implementation (:mod:`pipelines._metrics`).

    Examples
    --------
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    return _roc_auc(np.asarray(y).astype(np.int64), np.asarray(score, dtype=float))


def time_split(launch_time, train_fraction: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks of the first ``train_fraction`` of rows by launch time, and the rest.

    Examples
    --------
    >>> tr, te = time_split([5.0, 1.0, 3.0, 2.0, 4.0], 0.6)
    >>> tr.tolist(), te.tolist()
    ([False, True, True, True, False], [True, False, False, False, True])
    """
    t = np.asarray(launch_time, dtype=float)
    order = np.argsort(t, kind="stable")
    train = np.zeros(t.size, dtype=bool)
    train[order[: int(round(train_fraction * t.size))]] = True
    return train, ~train


def counters_auc(
    tasks: pd.DataFrame, label, train_fraction: float = 0.6, seed: int = 0
) -> dict[str, float]:
    """Held-out ROC-AUC of the counters alone, and of the true node state, on later rows.

    A standardized logistic regression on the ``c_*`` columns is trained on the labelled
    rows of the first ``train_fraction`` of the trace by launch time and scored on the rest.
    ``truth_auc`` ranks the same held-out rows by ``truth_slowdown_launch`` (the node's true
    slowdown at launch); ``truth_full_auc`` by ``truth_slowdown_launch * truth_work`` over
    the stage median is not computed here (the median is the label's own input).

    Returns
    -------
    dict
        ``counters_auc``, ``truth_auc`` (NaN without truth columns), ``n_train``,
        ``n_test``, ``n_counters``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=400)
    >>> t = pd.DataFrame({"launch_time": np.arange(400.0), "c_x": x,
    ...                   "truth_slowdown_launch": x})
    >>> r = counters_auc(t, (x + rng.normal(size=400) > 1).astype(float))
    >>> r["counters_auc"] > 0.7, r["n_test"]
    (True, 160)
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    lab = np.asarray(label, dtype=float)
    rows = ~np.isnan(lab)
    sub = tasks.loc[rows]
    y = lab[rows]
    cols = counter_columns(tasks)
    train, test = time_split(sub["launch_time"], train_fraction)
    out = {
        "counters_auc": float("nan"),
        "truth_auc": float("nan"),
        "n_train": int(train.sum()),
        "n_test": int(test.sum()),
        "n_counters": len(cols),
    }
    if cols and np.unique(y[train]).size == 2:
        x = sub[cols].to_numpy(float)
        x = np.where(np.isfinite(x), x, 0.0)
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        model.fit(x[train], y[train])
        out["counters_auc"] = roc_auc(y[test], model.predict_proba(x[test])[:, 1])
    if "truth_slowdown_launch" in sub.columns:
        out["truth_auc"] = roc_auc(y[test], sub["truth_slowdown_launch"].to_numpy(float)[test])
    return out


def trace_facts(tasks: pd.DataFrame, workload: str, beta: float) -> tuple[list[FactResult], dict]:
    """The four single-run facts of one no-speculation trace, and the data of its plot."""
    import sim_bridge

    label = sim_bridge.label_stragglers(tasks, beta).to_numpy(float)
    median = stage_medians(tasks, beta)
    share = straggler_share(label)
    ratios = straggler_ratios(tasks["duration"], median, label)
    p90 = float(np.quantile(ratios, 0.9)) if ratios.size else float("nan")
    has_truth = set(TRUTH_COLUMNS) <= set(tasks.columns)
    out = [
        _point("straggler_share", workload, share, n_labelled=int((~np.isnan(label)).sum())),
        _point(
            "p90_ratio",
            workload,
            p90,
            n_stragglers=int(ratios.size),
            # > 0 when the label is not the stage rule (sim_bridge.label_stragglers by job)
            below_stage_threshold=float(np.mean(ratios <= beta)) if ratios.size else 0.0,
        ),
    ]
    if has_truth:
        out.append(_point("median_node_share", workload, median_node_share(tasks, label, median)))
    else:
        out.append(FactResult("median_node_share", workload, None, note=NOT_MEASURED_TRUTH))
    auc = counters_auc(tasks, label)
    res = _point("counters_auc", workload, auc["counters_auc"], **auc)
    if not has_truth:  # half the fact: the band alone is reported, the verdict left open
        res.extra["band_only_pass"] = res.passed
        res.passed = None
        res.note = "true-state AUC " + NOT_MEASURED_TRUTH
    elif res.passed is not None:
        res.passed = res.passed and auc["counters_auc"] < auc["truth_auc"]
    return out + [res], {"ratios": ratios}
