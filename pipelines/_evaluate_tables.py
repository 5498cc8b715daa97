"""Table 1 and Table 2 as tables of fits (:func:`table1`, :func:`table2`) and their models.

Table 1: every model trained on the first fractions of every (node, workload) pair's rows
(:func:`pipelines.fraction_split`), tested on the same later rows, with a majority-class row
per fraction. Table 2: f0nl against f0t on held-out pairs
(:func:`pipelines.leave_pair_out_splits`). One row per fit (:func:`fit_and_score`).

Examples
--------
>>> TABLE2_MODELS, set(MULTI_TASK + SINGLE_BLOCK) == set(TABLE1_MODELS[1:])
(('f0nl', 'f0t'), True)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines._evaluate_fits import _run, anomaly_flags, fit_and_score
from pipelines._metrics import binary_metrics, metric_standard_errors
from pipelines._splits import fraction_split, leave_pair_out_splits

__all__ = ["MULTI_TASK", "SINGLE_BLOCK", "TABLE1_MODELS", "TABLE2_MODELS", "table1", "table2"]

#: Models of Table 1, in the seed's column order.
TABLE1_MODELS: tuple[str, ...] = ("wrangler", "f0", "fn", "fl", "f0nl", "f0t", "f0tl")
#: Models of Table 2.
TABLE2_MODELS: tuple[str, ...] = ("f0nl", "f0t")
#: Variants that model both node and workload (seed: they "consistently outperform" the rest).
MULTI_TASK: tuple[str, ...] = ("f0nl", "f0t", "f0tl")
SINGLE_BLOCK: tuple[str, ...] = ("f0", "fn", "fl")


def table1(
    frame: pd.DataFrame,
    counters: list[str],
    fractions,
    models=TABLE1_MODELS,
    grid=None,
    val_share: float = 0.25,
    test_start: float = 0.66,
    seed: int = 0,
    jobs: int = 1,
    engine=None,
) -> pd.DataFrame:
    """One row per (fraction, model): test metrics; plus a majority-class row per fraction."""
    X = frame[["node", "workload", *counters]]
    y = frame["straggler"].to_numpy(dtype=np.int64)
    anomaly = anomaly_flags(frame)
    tasks, keys = [], []
    for f in fractions:
        split = fraction_split(frame, f, val_share if grid is not None else 0.0, test_start)
        for m in models:
            tasks.append((fit_and_score, (m, X, y, split, grid, seed, anomaly)))
            keys.append(f)
    rows = [
        {"fraction": f, **r}
        for f, r in zip(keys, _run(tasks, jobs, "table 1", engine), strict=True)
    ]
    test = fraction_split(frame, fractions[0], 0.0, test_start).test
    base = binary_metrics(y[test], np.zeros(len(test)), 0.5)
    base.update(metric_standard_errors(base))
    for f in fractions:
        rows.append({"fraction": f, "model": "majority", "status": "ok", **base})
    return pd.DataFrame(rows)


def table2(
    frame: pd.DataFrame,
    counters: list[str],
    n_pairs: int = 20,
    keep: float = 0.05,
    min_rows: int = 40,
    models=TABLE2_MODELS,
    grid=None,
    val_share: float = 0.25,
    seed: int = 0,
    jobs: int = 1,
    engine=None,
) -> pd.DataFrame:
    """One row per (held-out pair, model): metrics on the pair's left-out rows."""
    X = frame[["node", "workload", *counters]]
    y = frame["straggler"].to_numpy(dtype=np.int64)
    splits = leave_pair_out_splits(
        frame, n_pairs, keep, min_rows, val_share if grid is not None else 0.0, seed
    )
    anomaly = anomaly_flags(frame)
    tasks, keys = [], []
    for s in splits:
        for m in models:
            tasks.append((fit_and_score, (m, X, y, s, grid, seed, anomaly)))
            keys.append(s)
    rows = []
    for s, r in zip(keys, _run(tasks, jobs, "table 2", engine), strict=True):
        pair = "/".join(s.info["pair"])
        rows.append({"pair": pair, "pair_rows": s.info["pair_rows"], **r})
    return pd.DataFrame(rows)
