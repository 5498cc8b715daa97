"""Check the seed's qualitative claims on Table 1 and Table 2 and say them in plain words.

Examples
--------
>>> verdict_lines(2, {"claim_f0nl_ahead_of_f0t_on_most_pairs": None})[0][:58]
"Claim 'f0nl beats f0t on an unseen pair in most runs': can"
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines._evaluate_pivots import _pct
from pipelines._evaluate_tables import MULTI_TASK, SINGLE_BLOCK, TABLE1_MODELS

__all__ = ["table1_claims", "table2_claims", "verdict_lines"]


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
