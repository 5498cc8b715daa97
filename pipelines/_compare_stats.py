"""The statistics of ``straggler compare``: improvements over speculation alone per seed,
their significance (t-test, Holm, Benjamini-Hochberg), the oracle headroom each predictor
captures, and the verdict that says so (Tables 3 and 4)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pipelines._compare_config import LABELS
from pipelines._metrics import fdr_bh, holm

#: Table 3's statistics: name -> percentile (None: the mean).
STATISTICS: dict[str, float | None] = {
    "Average": None,
    "50p": 50,
    "75p": 75,
    "80p": 80,
    "85p": 85,
    "90p": 90,
    "95p": 95,
    "97p": 97,
    "98p": 98,
    "99p": 99,
}


ALL = "ALL"


def improvement(base: float, other: float) -> float:
    """``100 * (base - other) / base``: positive when ``other`` is smaller (better).

    Examples
    --------
    >>> improvement(200.0, 150.0)
    25.0
    >>> improvement(100.0, 120.0)
    -20.0
    """
    if not base > 0:
        return float("nan")
    return 100.0 * (base - other) / base


def jct_statistics(jct) -> dict[str, float]:
    """Mean and Table 3's percentiles of job completion times (linear interpolation).

    Examples
    --------
    >>> s = jct_statistics(np.arange(1.0, 101.0))
    >>> s["Average"], s["50p"], s["99p"]
    (50.5, 50.5, 99.01)
    """
    x = np.asarray(jct, dtype=float)
    if x.size == 0:
        return dict.fromkeys(STATISTICS, float("nan"))
    out = {}
    for name, q in STATISTICS.items():
        out[name] = float(x.mean()) if q is None else float(np.percentile(x, q))
    return out


def significance(values, alpha: float = 0.05) -> dict[str, Any]:
    """Mean, spread and a two-sided one-sample t-test of per-seed improvements against 0.

    With one seed (or no spread) no test is possible: ``p_value`` is NaN and the result is
    not significant.

    Examples
    --------
    >>> r = significance([10.0, 12.0, 11.0])
    >>> round(r["mean"], 1), r["significant"]
    (11.0, True)
    >>> significance([5.0, -4.0, 1.0])["significant"]
    False
    """
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    n = int(v.size)
    out = {
        "n": n,
        "mean": float(v.mean()) if n else float("nan"),
        "std": float(v.std(ddof=1)) if n > 1 else float("nan"),
        "min": float(v.min()) if n else float("nan"),
        "max": float(v.max()) if n else float("nan"),
        "p_value": float("nan"),
        "significant": False,
    }
    out["ci_low"] = out["ci_high"] = float("nan")
    if n > 1 and out["std"] > 0:
        from scipy.stats import t as student_t
        from scipy.stats import ttest_1samp

        p = float(ttest_1samp(v, 0.0).pvalue)
        out["p_value"] = p
        out["significant"] = bool(p < alpha)
        half = float(student_t.ppf(1 - alpha / 2, n - 1)) * out["std"] / np.sqrt(n)
        out["ci_low"], out["ci_high"] = out["mean"] - half, out["mean"] + half
    return out


def headroom_table(runs: list[dict], groups: list[str], names: list[str]) -> pd.DataFrame:
    """Per workload and predictor: the share of the oracle's mean-JCT gain over speculation
    alone that the predictor captures (:func:`sim_bridge.headroom_captured`), per seed and
    pooled (gains summed over seeds: robust to a seed where the oracle gains little).

    Examples
    --------
    >>> m = lambda x: {"W": {"Average": x}}
    >>> runs = [{"seed_index": 0, "policy": p, "metrics": m(x)}
    ...         for p, x in (("spec", 100.0), ("mtl", 90.0), ("oracle", 80.0))]
    >>> headroom_table(runs, ["W"], ["mtl", "oracle"])["pooled"].tolist()
    [0.5]
    """
    from sim_bridge import headroom_captured

    by = {(r["seed_index"], r["policy"]): r["metrics"] for r in runs}
    seeds = sorted({r["seed_index"] for r in runs})
    rows = []
    for w in groups:
        for pred in names:
            if pred == "oracle":
                continue
            per, gain, room = [], 0.0, 0.0
            for k in seeds:
                try:
                    b = by[(k, "spec")][w]["Average"]
                    c = by[(k, pred)][w]["Average"]
                    o = by[(k, "oracle")][w]["Average"]
                except KeyError:
                    continue
                per.append(headroom_captured(b, c, o))
                gain += b - c
                room += b - o
            rows.append(
                {
                    "workload": w,
                    "predictor": pred,
                    "pooled": gain / room if room > 0 else float("nan"),
                    "per_seed": per,
                }
            )
    return pd.DataFrame(rows)


def improvement_tables(
    runs: list[dict], groups: list[str], names: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:

    base = {
        (r["seed_index"], w): m
        for r in runs
        if r["policy"] == "spec"
        for w, m in r["metrics"].items()
    }
    rows3, rows4 = [], []
    for w in groups:
        for pred in names:
            mine = {
                r["seed_index"]: r["metrics"][w]
                for r in runs
                if r["policy"] == pred and w in r["metrics"]
            }
            for stat in STATISTICS:
                vals = [
                    improvement(base[(k, w)][stat], m[stat])
                    for k, m in sorted(mine.items())
                    if (k, w) in base
                ]
                rows3.append(
                    {
                        "workload": w,
                        "predictor": pred,
                        "statistic": stat,
                        **significance(vals),
                        "per_seed": vals,
                    }
                )
            vals = [
                improvement(base[(k, w)]["task_seconds"], m["task_seconds"])
                for k, m in sorted(mine.items())
                if (k, w) in base
            ]
            rows4.append({"workload": w, "predictor": pred, **significance(vals), "per_seed": vals})
    t3, t4 = pd.DataFrame(rows3), pd.DataFrame(rows4)
    if len(t3) or len(t4):
        p_all = np.concatenate(
            [t3.get("p_value", pd.Series(dtype=float)), t4.get("p_value", pd.Series(dtype=float))]
        )
        adj, sig = holm(p_all)
        t3["p_holm"], t3["significant_holm"] = adj[: len(t3)], sig[: len(t3)]
        t4["p_holm"], t4["significant_holm"] = adj[len(t3) :], sig[len(t3) :]
        q, sig = fdr_bh(p_all)
        t3["p_fdr"], t3["significant_fdr"] = q[: len(t3)], sig[: len(t3)]
        t4["p_fdr"], t4["significant_fdr"] = q[len(t3) :], sig[len(t3) :]
    return t3, t4


def verdict_text(table3: pd.DataFrame, table4: pd.DataFrame, seeds: int) -> str:
    if seeds < 2:
        return "one seed: no spread, no significance test; the numbers may be noise"
    t = table3[table3["workload"] == ALL]
    parts = []
    for pred in predictor_names(table3):
        sub = t[t["predictor"] == pred].set_index("statistic")
        sig = sub.index[sub["significant"]].tolist()
        p99 = sub.loc["99p"]
        avg = sub.loc["Average"]
        parts.append(
            f"{LABELS[pred]}: mean JCT {avg['mean']:+.1f}% ± {avg['std']:.1f} "
            f"({'significant' if avg['significant'] else 'not significant'}), p99 "
            f"{p99['mean']:+.1f}% ± {p99['std']:.1f} "
            f"({'significant' if p99['significant'] else 'not significant'}); "
            f"significant statistics over all workloads: {', '.join(sig) or 'none'}"
        )
    n_cells = len(table3) + len(table4)
    n_sig = int(table3["significant"].sum() + table4["significant"].sum())
    return (
        f"over {seeds} seeds (t-test, 5%): "
        + "; ".join(parts)
        + f". {n_sig} of {n_cells} cells are significant uncorrected (about "
        f"{0.05 * n_cells:.0f} would be by chance alone at 5%); "
        f"{int(table3['significant_fdr'].sum() + table4['significant_fdr'].sum())} stay "
        "significant at a 5% false-discovery rate (Benjamini-Hochberg over all cells), "
        f"{int(table3['significant_holm'].sum() + table4['significant_holm'].sum())} under "
        "Holm's stricter family-wise correction"
    )


def predictor_names(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["predictor"]))
