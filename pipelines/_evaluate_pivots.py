"""Format Table 1 and Table 2 for people: pivots of display strings and their Markdown.

:func:`table1_pivot` and :func:`table2_pivot` are the one formatting of each table (written
to ``tableN.md`` and to ``summary.json``, rendered by the report); :func:`pivot_markdown`
turns a pivot into Markdown.

Examples
--------
>>> _pct(0.8071), _pct_se(0.8071, 0.003), _auc(0.5), _auc(float("nan"))
('80.7%', '80.7%±0.3', '0.500', '-')
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines._evaluate_tables import TABLE1_MODELS, TABLE2_MODELS

__all__ = ["pivot_markdown", "table1_markdown", "table1_pivot", "table2_markdown", "table2_pivot"]


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
