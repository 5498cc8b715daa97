"""``straggler evaluate``: our versions of the seed's Table 1 and Table 2 (seed 004, §4.2-4.3).

Table 1: accuracy (with precision and recall alongside) of Wrangler's per-pair SVMs and the
six MTL variants f0, fn, fl, f0nl, f0t, f0tl, trained on the first 1..66% of every (node,
workload) pair's rows and tested on the same later rows (:func:`pipelines.fraction_split`).
Wrangler gets no model for a pair with too few rows or a single class; those pairs are
counted ("insufficient data") and predicted with WranglerSVC's documented fallback, and the
accuracy on the supported pairs alone is reported as well. A majority-class row (always
"not a straggler") shows what accuracy means on the data.

Table 2: f0nl against f0t on pairs whose later 95% of rows are left out of training
(:func:`pipelines.leave_pair_out_splits`), tested on those rows.

Hyper-parameters come from a grid (``straggler evaluate`` uses the shipped ``small`` one unless
told otherwise; with ``grid=None`` the estimators' defaults, regularisers 1 and threshold 0.5):
every model and fraction picks its regularisers and threshold by validation
accuracy on the latest ``val_share`` of each pair's training rows and is refitted on all of
them. Fits run in ``jobs`` processes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines._estimators import make_estimator
from pipelines._grid import variant_grid
from pipelines._metrics import binary_metrics, metric_standard_errors
from pipelines._selection import select_point
from pipelines._splits import Split, fraction_split, leave_pair_out_splits

if TYPE_CHECKING:
    from pipelines._evaluate_config import EvaluateConfig
    from pipelines._sweep import Engine

#: Models of Table 1, in the seed's column order.
TABLE1_MODELS: tuple[str, ...] = ("wrangler", "f0", "fn", "fl", "f0nl", "f0t", "f0tl")
#: Models of Table 2.
TABLE2_MODELS: tuple[str, ...] = ("f0nl", "f0t")
#: Variants that model both node and workload (seed: they "consistently outperform" the rest).
MULTI_TASK: tuple[str, ...] = ("f0nl", "f0t", "f0tl")
SINGLE_BLOCK: tuple[str, ...] = ("f0", "fn", "fl")


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


def _int(v) -> int:
    return 0 if v is None or v != v else int(v)


def _pct(v) -> str:
    return "-" if v is None or v != v else f"{100 * v:.1f}%"


def _auc(v, se=None) -> str:
    """A threshold-free score with three decimals ('-' when undefined), ``±se`` when given."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "-"
    if not np.isfinite(v):
        return "-"
    try:
        se = float(se)
    except (TypeError, ValueError):
        return f"{v:.3f}"
    return f"{v:.3f}±{se:.3f}" if np.isfinite(se) else f"{v:.3f}"


def _pct_se(v, se) -> str:
    """A share in % with its standard error in points, e.g. ``80.7%±0.3``."""
    head = _pct(v)
    try:
        se = float(se)
    except (TypeError, ValueError):
        return head
    return f"{head}±{100 * se:.1f}" if head != "-" and np.isfinite(se) else head


def pivot_markdown(pivot: dict) -> str:
    """A pivot of :func:`table1_pivot`/:func:`table2_pivot` as a Markdown table (its note,
    when there is one, below it after a blank line).

    Examples
    --------
    >>> print(pivot_markdown({"columns": ["a", "b"], "rows": [["1", "2"]], "note": ""}), end="")
    | a | b |
    |---|---|
    | 1 | 2 |
    """
    cols = pivot["columns"]
    lines = ["| " + " | ".join(cols) + " |", "|---|" + "---|" * (len(cols) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in pivot["rows"]]
    if pivot.get("note"):
        lines += ["", pivot["note"]]
    return "\n".join(lines) + "\n"


def table1_markdown(t: pd.DataFrame) -> str:
    """:func:`table1_pivot` as Markdown (what ``table1.md`` holds above its verdicts)."""
    return pivot_markdown(table1_pivot(t))


def table1_pivot(t: pd.DataFrame) -> dict:
    """Rows: training %, columns: models; cells ``accuracy (precision/recall)`` and the two
    threshold-free scores ``ROC-AUC / PR-AUC``; the majority row's PR-AUC is the positive
    share (what a score that knows nothing gets).

    Returns
    -------
    dict
        ``columns`` (header cells), ``rows`` (lists of display strings) and ``note``: the one
        formatting of Table 1, written to ``table1.md`` and ``summary.json`` (``pivot``), from
        which the report renders it.
    """
    models = [m for m in [*TABLE1_MODELS, "majority"] if m in set(t["model"])]
    columns = ["% training data", *models]
    rows: list[list[str]] = []
    for f, g in t.groupby("fraction", sort=True):
        cells = []
        by = {r["model"]: r for r in g.to_dict("records")}
        for m in models:
            r = by[m]
            if r.get("status") != "ok":
                cells.append(f"insufficient data ({r.get('status')})")
                continue
            cell = (
                f"{_pct_se(r['accuracy'], r.get('accuracy_se'))} "
                f"({_pct(r['precision'])}/{_pct(r['recall'])}); "
                f"AUC {_auc(r.get('roc_auc'), r.get('roc_auc_se'))}/"
                f"{_auc(r.get('pr_auc'), r.get('pr_auc_se'))}"
            )
            lacking = _int(r.get("insufficient_pairs"))
            if m == "wrangler" and lacking:
                n_pairs = int(r["test_pairs"])
                head = "Insufficient data" if lacking == n_pairs else "insufficient data"
                sup = r.get("supported_accuracy")
                cell = f"{head}: {lacking}/{n_pairs} pairs; fallback gives {cell}" + (
                    f", supported pairs {_pct(sup)}" if sup == sup and lacking < n_pairs else ""
                )
            if m == "majority":
                cell = (
                    f"{_pct_se(r['accuracy'], r.get('accuracy_se'))}; "
                    f"AUC {_auc(r['roc_auc'])}/{_auc(r['pr_auc'])}"
                )
            cells.append(cell)
        rows.append([f"{100 * f:g}", *cells])
    if "anomaly_roc_auc" in t.columns and t["anomaly_roc_auc"].notna().any():
        rows.append(
            [
                "anomaly ROC-AUC (largest %)",
                *(
                    _auc(_largest(t, m, "anomaly_roc_auc")) if m != "majority" else "0.5"
                    for m in models
                ),
            ]
        )
    note = (
        "Cells: accuracy (precision/recall) on the test rows ('-': undefined, e.g. no predicted "
        "straggler). Wrangler has no model for a pair with too few rows or one class "
        "('insufficient data'); it predicts those with its global fallback, and 'supported "
        "pairs' is its accuracy on the others. 'majority' always predicts 'not a straggler'. "
        "AUC: ROC-AUC/PR-AUC (average precision) of the predicted probability, threshold-free; "
        "a score that knows nothing gets 0.5 and the straggler share. '±': closed-form "
        "standard errors (binomial; Hanley-McNeil; delta method for average precision) "
        "that treat test rows as independent, so lower bounds."
        + (
            " Anomaly ROC-AUC: how well the predicted straggler probability separates the "
            "test rows that ran on a node with an injected anomaly (e.g. FlowBench's throttled "
            "executors) from the rest, at the largest training share; the model never sees "
            "the anomaly column."
            if "anomaly_roc_auc" in t.columns
            else ""
        )
    )
    return {"columns": columns, "rows": rows, "note": note}


def _largest(t: pd.DataFrame, model: str, col: str):
    """``col`` of ``model``'s row at the largest training fraction (NaN when absent)."""
    rows = t[(t["model"] == model) & (t["status"] == "ok")]
    if rows.empty or col not in rows:
        return float("nan")
    return rows.sort_values("fraction")[col].iloc[-1]


def table2_markdown(t: pd.DataFrame) -> str:
    """:func:`table2_pivot` as Markdown (what ``table2.md`` holds above its verdicts)."""
    return pivot_markdown(table2_pivot(t))


def table2_pivot(t: pd.DataFrame) -> dict:
    """One row per held-out pair: accuracy (precision/recall) of each model; then the means
    over pairs (± SE), the majority class on the same rows and the mean ROC-AUC. Returned as
    :func:`table1_pivot` returns Table 1 (``columns``, ``rows``, ``note``)."""
    models = [m for m in TABLE2_MODELS if m in set(t["model"])]
    columns = ["held-out pair", "rows", *models]
    rows: list[list[str]] = []
    for pair, g in t.groupby("pair", sort=False):
        by = {r["model"]: r for r in g.to_dict("records")}
        cells = []
        for m in models:
            r = by.get(m, {})
            cells.append(
                f"{_pct(r.get('accuracy'))} ({_pct(r.get('precision'))}/{_pct(r.get('recall'))})"
                if r.get("status") == "ok"
                else str(r.get("status"))
            )
        rows.append([str(pair), str(int(g["pair_rows"].iloc[0])), *cells])
    ok = t[t["status"] == "ok"]
    if len(ok):

        def mean_se(col: str, m: str) -> str:
            v = ok.loc[ok["model"] == m, col].astype(float).dropna()
            if v.empty:
                return "-"
            se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else float("nan")
            return f"{100 * v.mean():.1f}%" + (f"±{100 * se:.1f}" if se == se else "")

        rows.append(["mean over pairs (±SE)", "", *(mean_se("accuracy", m) for m in models)])
        if "majority_accuracy" in ok.columns:
            rows.append(
                [
                    "majority class, same rows",
                    "",
                    *(mean_se("majority_accuracy", m) for m in models),
                ]
            )
        if "roc_auc" in ok.columns:
            rows.append(
                [
                    "mean ROC-AUC (pairs with both classes)",
                    "",
                    *(
                        _auc(ok.loc[ok["model"] == m, "roc_auc"].astype(float).mean())
                        for m in models
                    ),
                ]
            )
    return {"columns": columns, "rows": rows, "note": ""}


def table1_claims(t: pd.DataFrame, small: float = 0.05) -> dict:
    """Check the seed's two Table 1 claims on our numbers; plain-language verdicts."""
    ok = t[t["status"] == "ok"]
    acc = ok.pivot_table(index="fraction", columns="model", values="accuracy")
    out: dict = {}
    maj = acc.get("majority")
    small_f = [f for f in acc.index if f <= small + 1e-12]
    verdicts = []
    lack = ok[ok["model"] == "wrangler"].set_index("fraction")
    out["wrangler_insufficient_for_all_pairs_at"] = [
        float(f)
        for f, r in lack.iterrows()
        if r.get("test_pairs") and r.get("insufficient_pairs") == r.get("test_pairs")
    ]
    for f in small_f:
        w = acc.loc[f].get("wrangler", np.nan)
        mtl = [m for m in TABLE1_MODELS[1:] if m in acc.columns]
        wins = [m for m in mtl if acc.loc[f, m] > w] if w == w else mtl
        verdicts.append(len(wins) == len(mtl))
        out[f"fraction_{f:g}_mtl_ahead_of_wrangler"] = wins
    out["claim_mtl_ahead_of_wrangler_at_small_fractions"] = bool(verdicts) and all(verdicts)
    multi = [m for m in MULTI_TASK if m in acc.columns]
    single = [m for m in SINGLE_BLOCK if m in acc.columns]
    if multi and single:
        holds = (acc[multi].min(axis=1) > acc[single].max(axis=1)).to_numpy()
        out["claim_multi_task_ahead_of_single_block"] = bool(holds.all())
        out["fractions_where_multi_task_ahead"] = [
            float(f) for f, h in zip(acc.index, holds, strict=True) if h
        ]
    if maj is not None:
        mrow = ok[ok["model"] == "majority"].iloc[0]
        a, n = float(mrow["accuracy"]), int(mrow["rows"])
        out["accuracy_standard_error"] = {"se": float(np.sqrt(a * (1 - a) / n)), "rows": n}
        best = acc.drop(columns=["majority"]).max(axis=1)
        out["best_minus_majority_accuracy"] = {f"{f:g}": float(v) for f, v in (best - maj).items()}
    return out


def table2_claims(t: pd.DataFrame) -> dict:
    """Does f0nl beat f0t on most held-out pairs?"""
    ok = t[t["status"] == "ok"]
    acc = ok.pivot_table(index="pair", columns="model", values="accuracy")
    if not {"f0nl", "f0t"} <= set(acc.columns):
        return {"claim_f0nl_ahead_of_f0t_on_most_pairs": None}
    diff = (acc["f0nl"] - acc["f0t"]).dropna()
    auc = ok.pivot_table(index="pair", columns="model", values="roc_auc")
    auc_diff = (auc["f0nl"] - auc["f0t"]).dropna() if {"f0nl", "f0t"} <= set(auc) else auc
    return {
        "roc_auc_pairs": len(auc_diff),
        "roc_auc_f0nl_wins": int((auc_diff > 0).sum()) if len(auc_diff) else 0,
        "mean_roc_auc_f0nl": float(auc["f0nl"].mean()) if "f0nl" in auc else float("nan"),
        "mean_roc_auc_f0t": float(auc["f0t"].mean()) if "f0t" in auc else float("nan"),
        "pairs": len(diff),
        "f0nl_wins": int((diff > 0).sum()),
        "ties": int((diff == 0).sum()),
        "f0t_wins": int((diff < 0).sum()),
        "mean_accuracy_f0nl": float(acc["f0nl"].mean()),
        "mean_accuracy_f0t": float(acc["f0t"].mean()),
        "claim_f0nl_ahead_of_f0t_on_most_pairs": bool((diff > 0).sum() > len(diff) / 2),
    }


def verdict_lines(table: int, claims: dict) -> list[str]:
    """Plain sentences saying which of the paper's qualitative claims hold here."""
    yes = {True: "HOLDS", False: "DOES NOT HOLD", None: "cannot be checked"}
    if table == 1:
        lines = [
            "Claim 'all MTL variants beat Wrangler at small training fractions (<= 5%)': "
            + yes[claims.get("claim_mtl_ahead_of_wrangler_at_small_fractions")],
            "Claim 'f0nl, f0t, f0tl beat f0, fn, fl': "
            + yes[claims.get("claim_multi_task_ahead_of_single_block")]
            + f" (fractions where it holds: {claims.get('fractions_where_multi_task_ahead')})",
        ]
        if claims.get("wrangler_insufficient_for_all_pairs_at"):
            lines.append(
                "Wrangler has no per-pair model at all (insufficient data) at fractions "
                f"{claims['wrangler_insufficient_for_all_pairs_at']}, as in the paper's 1-5% rows."
            )
        gap = claims.get("best_minus_majority_accuracy") or {}
        if gap:
            best = max(gap.values())
            lines.append(
                "Best model minus always predicting 'not a straggler', in accuracy points: "
                + ", ".join(f"{100 * v:+.1f} at {100 * float(f):g}%" for f, v in gap.items())
                + (
                    "; below 5 points the counters carry little usable signal on this trace."
                    if best < 0.05
                    else "."
                )
            )
        se = claims.get("accuracy_standard_error")
        if se:
            lines.append(
                f"Binomial standard error of one accuracy here: +-{100 * se['se']:.1f} points "
                f"({se['rows']} test rows); smaller differences are not evidence either way."
            )
        return lines
    c = claims
    return [
        "Claim 'f0nl beats f0t on an unseen pair in most runs': "
        + yes[c.get("claim_f0nl_ahead_of_f0t_on_most_pairs")]
        + f" (f0nl wins {c.get('f0nl_wins')}, f0t wins {c.get('f0t_wins')}, "
        f"ties {c.get('ties')} of {c.get('pairs')} pairs; mean accuracy "
        f"{_pct(c.get('mean_accuracy_f0nl'))} vs {_pct(c.get('mean_accuracy_f0t'))})",
        f"Threshold-free, by ROC-AUC: f0nl ahead on {c.get('roc_auc_f0nl_wins')} of "
        f"{c.get('roc_auc_pairs')} pairs (mean {c.get('mean_roc_auc_f0nl', float('nan')):.3f} "
        f"vs {c.get('mean_roc_auc_f0t', float('nan')):.3f}).",
    ]


def _trace_source(traces: str) -> str:
    """Where the trace came from (its ``summary.json`` ``source``: ``flowbench`` for real
    runs), ``simulator`` when the summary does not say."""
    import json

    p = Path(traces)
    path = p / "summary.json" if p.is_dir() else p.parent / "summary.json"
    try:
        return str(json.loads(path.read_text()).get("source") or "simulator")
    except (OSError, ValueError):
        return "simulator"


def check_config(cfg: EvaluateConfig) -> None:
    """Refuse settings no table can run with, before any file is read or written.

    Raises
    ------
    ValueError
        ``table`` not 1 or 2, ``jobs`` not a positive integer, or ``models`` naming a model
        the table does not have (the message names the flag and the bad value).

    Examples
    --------
    >>> from pipelines._evaluate_config import EvaluateConfig
    >>> check_config(EvaluateConfig(traces="t", table=2, out="o", models=("f0t",)))
    >>> check_config(EvaluateConfig(traces="t", table=2, out="o", models=("fn",)))
    Traceback (most recent call last):
    ...
    ValueError: --models: ['fn'] not in Table 2's ['f0nl', 'f0t']
    """
    if cfg.table not in (1, 2):
        raise ValueError(f"--table must be 1 or 2, got {cfg.table!r}")
    if not (isinstance(cfg.jobs, int) and cfg.jobs >= 1):
        raise ValueError(f"--jobs must be a positive integer, got {cfg.jobs!r}")
    if cfg.models:
        allowed = TABLE1_MODELS if cfg.table == 1 else TABLE2_MODELS
        bad = [m for m in cfg.models if m not in allowed]
        if bad:
            raise ValueError(f"--models: {bad} not in Table {cfg.table}'s {list(allowed)}")


def run_evaluate(cfg: EvaluateConfig, engine: Engine | None = None) -> dict:
    """Compute Table 1 or 2 on the trace ``cfg.traces``; write CSV, Markdown, PNG and
    ``summary.json`` into ``cfg.out``.

    ``cfg.on_single_class`` is :func:`pipelines._dataset.check_classes`'s: ``"drop"`` removes
    workloads whose rows are all one class (listed in the summary's ``data``).
    ``cfg.min_rows`` is the least number of labelled rows a (node, workload) pair needs to be
    held out in Table 2. ``engine`` (:class:`pipelines._sweep.Engine`) sends the fits to
    Dask instead of ``cfg.jobs`` local processes; the fits are seeded by ``cfg.seed``, so the
    table is the same.

    Returns
    -------
    dict
        ``markdown`` (the table), ``verdicts`` (the paper's claims, one line each) and
        ``summary`` (what ``summary.json`` holds).

    Raises
    ------
    ValueError
        Settings :func:`check_config` refuses, or a Table 1 fraction outside (0, 0.66].
    """
    from pipelines._dataset import check_classes, label_stragglers, load_trace, trace_hash
    from pipelines._grid import load_grid
    from pipelines._io import atomic_write_text, write_summary
    from pipelines._plots import plot_heldout, plot_metric_by_fraction
    from pipelines._splits import TABLE1_FRACTIONS

    check_config(cfg)
    traces, table, grid, seed, jobs = cfg.traces, cfg.table, cfg.grid, cfg.seed, cfg.jobs
    t0 = time.perf_counter()
    labelled = check_classes(
        label_stragglers(load_trace(traces), cfg.beta, cfg.min_tasks),
        on_single_class=cfg.on_single_class,
    )
    frame, counters = labelled.frame, labelled.counters
    g = None if grid in (None, "none") else load_grid(grid)
    outp = Path(cfg.out)
    outp.mkdir(parents=True, exist_ok=True)
    summary = {
        "command": "evaluate",
        "table": table,
        "traces": str(traces),
        "trace_source": _trace_source(traces),
        "data": labelled.summary(),
        "data_hash": trace_hash(frame[["node", "workload", *counters, "straggler"]]),
        "grid": grid or "none",
        "seed": seed,
    }
    if table == 1:
        fr = tuple(cfg.fractions or TABLE1_FRACTIONS)
        for f in fr:
            if not 0 < f <= 0.66:
                raise ValueError(
                    f"--fractions: {f!r} is not in (0, 0.66] (give percentages such as "
                    "1,5,66 or fractions such as 0.01,0.05,0.66)"
                )
        res = table1(
            frame,
            counters,
            fr,
            cfg.models or TABLE1_MODELS,
            g,
            seed=seed,
            jobs=jobs,
            engine=engine,
        )
        pivot = table1_pivot(res)
        claims = table1_claims(res)
        plot_metric_by_fraction(
            res[res["status"] == "ok"], outp / "table1.png", "Table 1: accuracy by training data"
        )
        summary["fractions"] = list(fr)
    else:
        res = table2(
            frame,
            counters,
            cfg.pairs,
            models=cfg.models or TABLE2_MODELS,
            grid=g,
            seed=seed,
            jobs=jobs,
            engine=engine,
            min_rows=cfg.min_rows,
        )
        pivot = table2_pivot(res)
        claims = table2_claims(res)
        plot_heldout(res[res["status"] == "ok"], outp / "table2.png", "Table 2: held-out pairs")
    res = res.assign(params=res.get("params", pd.Series(dtype=object)).astype(str))
    name = f"table{table}"
    atomic_write_text(outp / f"{name}.csv", res.to_csv(index=False))
    lines = verdict_lines(table, claims)
    md = pivot_markdown(pivot)
    summary["pivot"] = pivot
    atomic_write_text(outp / f"{name}.md", md + "\n" + "\n".join(f"- {s}" for s in lines) + "\n")
    summary["claims"] = claims
    summary["verdicts"] = lines
    summary["results"] = res.drop(columns=["params"]).to_dict("records")
    summary["wall_seconds"] = time.perf_counter() - t0
    write_summary(outp, summary)
    return {"markdown": md, "verdicts": lines, "summary": summary}
