"""Fit one model on one split and score its test rows (:func:`fit_and_score`), and run many fits.

Each fit picks its grid point by validation accuracy on the split's validation part
(:func:`pipelines._selection.select_point`), refits on all training rows and reports the test
metrics with their standard errors; :func:`anomaly_flags` marks the rows of a real trace
that ran on a node with an injected anomaly. The fits of a table run one by one, in local
processes (joblib) or on Dask (:mod:`pipelines._sweep`).

Examples
--------
>>> import pandas as pd
>>> anomaly_flags(pd.DataFrame({"anomaly_type": ["none", "mem_1"]})).tolist()
[False, True]
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from pipelines._estimators import make_estimator
from pipelines._grid import variant_grid
from pipelines._metrics import binary_metrics, metric_standard_errors
from pipelines._selection import select_point
from pipelines._splits import Split

__all__ = ["anomaly_flags", "fit_and_score"]


def _space(model: str, grid: dict[str, list[float]] | None) -> dict[str, list[float]]:
    from mtl import VARIANTS

    if grid is None:
        return {"threshold": [0.5]}
    if model == "wrangler":
        return {"threshold": list(grid.get("threshold", [0.5]))}
    return variant_grid(grid, VARIANTS[model])


def fit_and_score(
    model: str,
    X: pd.DataFrame,
    y: np.ndarray,
    split: Split,
    grid: dict[str, list[float]] | None,
    seed: int,
    anomaly: np.ndarray | None = None,
) -> dict:
    """Fit ``model`` on ``split`` (choosing grid values on its validation part), score the test.

    ``anomaly`` (optional, one bool per row of ``X``) marks rows known to have run on a
    degraded node, e.g. FlowBench's throttled executors. It is never shown to the model: the
    result's ``anomaly_roc_auc`` is how well the predicted probability separates those test
    rows from the rest.

    Returns
    -------
    dict
        Metrics on the test rows with their closed-form standard errors
        (:func:`pipelines._metrics.metric_standard_errors`), the chosen point, fit seconds,
        row counts, and for Wrangler the pairs/rows of the test set without a per-pair model
        and the accuracy on the rest.
    """
    train, test = split.train, split.test
    row = {"model": model, "train_rows": len(train), "test_rows": len(test)}
    if len(train) == 0 or len(np.unique(y[train])) < 2:
        return {**row, "status": "no training data" if len(train) == 0 else "one class"}
    space = _space(model, grid)
    point = {k: v[0] for k, v in space.items()}
    if grid is not None and len(split.val) and len(np.unique(y[split.fit])) == 2:
        point = _select(model, X, y, split, space, seed)
    t0 = time.perf_counter()
    est = make_estimator(model, point, seed).fit(X.iloc[train], y[train])
    row["fit_seconds"] = time.perf_counter() - t0
    proba = est.predict_proba(X.iloc[test])[:, 1]
    thr = float(point.get("threshold", 0.5))
    row.update(binary_metrics(y[test], proba, thr))
    row.update(metric_standard_errors(row))
    if anomaly is not None:
        a = np.asarray(anomaly, dtype=bool)[test]
        row["anomaly_rows"] = int(a.sum())
        row["anomaly_roc_auc"] = binary_metrics(a, proba)["roc_auc"]
    row["params"] = point
    row["status"] = "ok"
    if model == "wrangler":
        status = np.asarray(est.pair_status(X.iloc[test]))
        lacking = status != "model"
        pairs = X.iloc[test][["node", "workload"]].astype(str).agg("/".join, axis=1).to_numpy()
        row["insufficient_rows"] = int(lacking.sum())
        row["insufficient_pairs"] = len(set(pairs[lacking].tolist()))
        row["test_pairs"] = len(set(pairs.tolist()))
        row["insufficient_training_pairs"] = len(est.insufficient_pairs_)
        sup = ~lacking
        row["supported_accuracy"] = (
            binary_metrics(y[test][sup], proba[sup], thr)["accuracy"] if sup.any() else np.nan
        )
    return row


def anomaly_flags(frame: pd.DataFrame) -> np.ndarray | None:
    """One bool per row: did it run on a node with an injected anomaly? ``None`` when the
    trace does not say (simulated traces). FlowBench's ``anomaly_type`` is set on the jobs of
    throttled executors only (:mod:`pipelines.flowbench`); training never reads it.

    Examples
    --------
    >>> anomaly_flags(pd.DataFrame({"anomaly_type": [None, "cpu_2"]})).tolist()
    [False, True]
    >>> anomaly_flags(pd.DataFrame({"node": ["n0"]})) is None
    True
    """
    if "anomaly_type" not in frame.columns:
        return None
    col = frame["anomaly_type"]
    flags = col.notna() & (col.astype(str).str.strip().str.lower() != "none")
    return flags.to_numpy(dtype=bool)


def _select(model, X, y, split, space, seed) -> dict[str, float]:
    """Best grid point by validation accuracy (ties: first in grid order): Table 1 reports
    accuracy, so the paper's protocol selects by it."""
    return select_point(
        model, X, y, split.fit, split.val, space, seed=seed, metric="accuracy"
    ).point


def _run(tasks, jobs: int, desc: str, engine=None) -> list[dict]:
    from tqdm.auto import tqdm

    if engine is not None and engine.uses_dask:
        from pipelines._sweep import SweepTask, run_sweep

        sweep = [SweepTask(f"fit={i}", fn, a) for i, (fn, a) in enumerate(tasks)]
        return list(run_sweep(sweep, engine, desc=desc, unit="fit").values())
    if jobs == 1:
        return [fn(*a) for fn, a in tqdm(tasks, desc=desc, unit="fit")]
    from joblib import Parallel, delayed

    out = Parallel(n_jobs=jobs, backend="loky", return_as="generator")(
        delayed(fn)(*a) for fn, a in tasks
    )
    return list(tqdm(out, total=len(tasks), desc=desc, unit="fit"))
