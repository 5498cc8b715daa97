"""PNG figures of the training and evaluation results (matplotlib, Agg backend)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

#: Statistics :func:`plot_jct_difference` draws, in order (compare's Table 3 names).
JCT_STATISTICS: tuple[str, ...] = ("50p", "75p", "90p", "95p", "99p", "Average")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)))


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | os.PathLike[str]) -> Path:
    """Save ``fig`` as PNG atomically (temporary file, then rename) and close it."""
    from mtl._atomic import atomic_path  # imported when used: mtl loads sklearn

    path = Path(path)
    try:
        with atomic_path(path, suffix=".png") as tmp:
            fig.savefig(tmp, dpi=110, bbox_inches="tight")
    finally:
        _figure().close(fig)
    return path


def plot_confusion(cm: np.ndarray, path: str | os.PathLike[str], title: str) -> Path:
    """A 2x2 confusion matrix (rows truth, columns prediction) with counts, as PNG."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(3.6, 3.2))
    ax.imshow(cm, cmap="Blues")
    for (i, j), v in np.ndenumerate(cm):
        ax.text(j, i, str(int(v)), ha="center", va="center", fontsize=12)
    ax.set_xticks([0, 1], ["normal", "straggler"])
    ax.set_yticks([0, 1], ["normal", "straggler"])
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title(title, fontsize=10)
    return save_figure(fig, path)


def plot_metric_by_fraction(
    table: pd.DataFrame,
    path: str | os.PathLike[str],
    title: str,
    metric: str = "accuracy",
) -> Path:
    """One line per ``model`` of ``metric`` (in %) against ``fraction`` (a share, in %).

    Every model has its own marker and line style, so equal lines stay visible; a model named
    ``majority`` (always "not a straggler") and the table's ``majority_accuracy`` /
    ``positive_rate`` column are drawn as the grey dashed baseline; the legend sits outside
    the axes.
    """
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    models = [m for m in dict.fromkeys(table["model"]) if str(m) != "majority"]
    for i, model in enumerate(models):
        g = table[table["model"] == model].sort_values("fraction")
        ax.plot(
            100 * g["fraction"],
            100 * g[metric],
            marker=_MARKERS[i % len(_MARKERS)],
            ls=_LINES[i % len(_LINES)],
            ms=7 - 0.6 * (i % 4),  # later markers smaller: an equal point shows both
            mfc="none" if i % 2 else None,
            color=f"C{i}",
            label=str(model),
        )
    ticks = sorted(set((100 * table["fraction"]).round(6)))
    base_col = {"accuracy": "majority_accuracy", "pr_auc": "positive_rate"}.get(metric)
    what = "majority class" if metric == "accuracy" else "positive rate"
    if (table["model"].astype(str) == "majority").any():
        g = table[table["model"].astype(str) == "majority"].sort_values("fraction")
        ax.plot(
            100 * g["fraction"],
            100 * g[metric],
            color="0.35",
            ls="--",
            lw=1.2,
            label=f"{what} (always 'not a straggler')" if metric == "accuracy" else "majority",
        )
    elif base_col and base_col in table and table[base_col].notna().any():
        base = float(table[base_col].dropna().iloc[0])  # the same test rows at every fraction
        ax.axhline(100 * base, color="0.35", ls="--", lw=1.2, label=f"{what} ({100 * base:.1f}%)")
    elif metric in ("roc_auc", "balanced_accuracy"):
        ax.axhline(50.0, color="0.35", ls="--", lw=1.2, label="chance (50%)")
    ax.set_xscale("log")
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("training data per (node, workload) pair [%]")
    ax.set_ylabel(f"{metric.replace('_', ' ')} [%]")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return save_figure(fig, path)


def plot_heldout(table: pd.DataFrame, path: str | os.PathLike[str], title: str) -> Path:
    """Accuracy (%) of each model on each held-out pair (Table 2), as grouped bars, with each
    pair's majority-class accuracy as a black tick over its group (when the table has it)."""
    plt = _figure()
    wide = table.pivot(index="pair", columns="model", values="accuracy")
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(wide) + 2), 4))
    x = np.arange(len(wide))
    width = 0.8 / max(1, wide.shape[1])
    hatches = ("", "//", "..", "xx", "\\\\", "++")
    for i, col in enumerate(wide.columns):
        ax.bar(
            x + i * width, 100 * wide[col], width, label=str(col), hatch=hatches[i % len(hatches)]
        )
    if "majority_accuracy" in table:
        major = table.groupby("pair")["majority_accuracy"].first().reindex(wide.index)
        ax.hlines(
            100 * major,
            x - width / 2,
            x + 0.8 - width / 2,
            colors="black",
            linestyles="--",
            lw=1.2,
            label="majority class",
        )
    ax.set_xticks(x + 0.4 - width / 2, wide.index, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("accuracy on the held-out pair [%]")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return save_figure(fig, path)


def _per_seed_long(table) -> pd.DataFrame:
    """``(workload, predictor, statistic, value)`` rows, one per seed, from compare's Table 3.

    Accepts Table 3 records/frames with a ``per_seed`` list per cell (compare's
    ``summary.json``), or a tidy frame with one ``value`` per seed already.
    """
    frame = pd.DataFrame(table)
    if "value" in frame:
        return frame
    if "per_seed" not in frame:
        raise ValueError(
            f"the JCT table needs a 'per_seed' or a 'value' column, got {list(frame.columns)}"
        )
    rows = []
    for rec in frame.to_dict("records"):
        vals = rec["per_seed"]
        if isinstance(vals, str):  # compare's CSV writes the list as 'a;b;c'
            vals = [float(v) for v in vals.replace(";", " ").replace(",", " ").split()]
        for v in vals if isinstance(vals, (list, tuple, np.ndarray)) else [vals]:
            rows.append(
                {**{k: rec.get(k) for k in ("workload", "predictor", "statistic")}, "value": v}
            )
    return pd.DataFrame(rows)


def jct_difference_table(
    table,
    *,
    workload: str | None = "ALL",
    statistics: tuple[str, ...] = JCT_STATISTICS,
    level: float = 0.95,
) -> pd.DataFrame:
    """Mean and Student-t interval over seeds of each policy's JCT improvement (%) per
    statistic: what :func:`plot_jct_difference` draws.

    Returns
    -------
    DataFrame
        ``predictor, statistic, n, mean, ci_low, ci_high`` (NaN bounds with one seed), in
        ``statistics`` order.

    Examples
    --------
    >>> rows = [{"workload": "ALL", "predictor": "mtl", "statistic": "99p",
    ...          "per_seed": [1.0, 2.0, 3.0]}]
    >>> t = jct_difference_table(rows)
    >>> t[["n", "mean"]].values.tolist(), round(float(t["ci_low"].iloc[0]), 3)
    ([[3.0, 2.0]], -0.484)
    """
    from pipelines._headline import t_interval

    long = _per_seed_long(table)
    if workload is not None and "workload" in long and long["workload"].notna().any():
        if workload not in set(long["workload"]):
            raise ValueError(
                f"workload {workload!r} is not in the table; it has {sorted(set(long['workload']))}"
            )
        long = long[long["workload"] == workload]
    stats_present = [s for s in statistics if s in set(long["statistic"])]
    if not stats_present:
        raise ValueError(f"none of the statistics {list(statistics)} is in the table")
    rows = []
    for pred in dict.fromkeys(long["predictor"]):
        part = long[long["predictor"] == pred]
        for stat in stats_present:
            v = part.loc[part["statistic"] == stat, "value"].astype(float).to_numpy()
            v = v[np.isfinite(v)]
            ci = t_interval(v, level)
            rows.append(
                {
                    "predictor": pred,
                    "statistic": stat,
                    "n": len(v),
                    "mean": float(v.mean()) if len(v) else np.nan,
                    "ci_low": ci[0] if ci else np.nan,
                    "ci_high": ci[1] if ci else np.nan,
                }
            )
    return pd.DataFrame(rows)


def plot_jct_difference(
    table,
    path: str | os.PathLike[str],
    *,
    workload: str | None = "ALL",
    statistics: tuple[str, ...] = JCT_STATISTICS,
    labels: dict[str, str] | None = None,
    level: float = 0.95,
    title: str | None = None,
) -> Path:
    """JCT improvement over speculation alone by percentile, one marker and line per policy,
    with Student-t intervals over seeds; in % (positive = faster), like Tables 3-4.

    Parameters
    ----------
    table : DataFrame or list of dict
        Compare's Table 3: ``workload``, ``predictor``, ``statistic`` and either ``per_seed``
        (the per-seed % improvements, as ``summary.json["table3"]`` holds them) or one row per
        seed with ``value``.
    path : path
        The PNG to write.
    workload : str or None
        The workload group to draw (compare's pooled group is ``ALL``); ``None``: the frame
        holds one group already.
    statistics : tuple of str
        The x positions, in order (missing ones are left out).
    labels : dict, optional
        Predictor -> legend label (compare's ``summary["policies"]``).
    level : float
        Interval coverage; a single seed draws the point without an interval.
    title : str, optional

    Examples
    --------
    >>> import tempfile, pathlib
    >>> rows = [{"workload": "ALL", "predictor": p, "statistic": s, "per_seed": [1.0, 3.0]}
    ...         for p in ("mtl", "oracle") for s in ("50p", "99p", "Average")]
    >>> plot_jct_difference(rows, pathlib.Path(tempfile.mkdtemp()) / "d.png").suffix
    '.png'
    """
    summary = jct_difference_table(table, workload=workload, statistics=statistics, level=level)
    stats_present = list(dict.fromkeys(summary["statistic"]))
    preds = list(dict.fromkeys(summary["predictor"]))
    labels = labels or {}
    plt = _figure()
    fig, ax = plt.subplots(figsize=(7.2, 4.0))
    x = np.arange(len(stats_present), dtype=float)
    width = 0.7 / max(1, len(preds))
    n_seeds = int(summary["n"].max())
    for i, pred in enumerate(preds):
        part = summary[summary["predictor"] == pred].set_index("statistic").loc[stats_present]
        means = part["mean"].to_numpy()
        lo = np.nan_to_num(means - part["ci_low"].to_numpy())
        hi = np.nan_to_num(part["ci_high"].to_numpy() - means)
        xs = x - 0.35 + width * (i + 0.5)
        means_a, lo_a, hi_a = np.array(means), np.array(lo), np.array(hi)
        is_mean = np.array([s == "Average" for s in stats_present])
        style = {
            "marker": _MARKERS[i % len(_MARKERS)],
            "lw": 1.2,
            "ms": 6,
            "capsize": 3,
            "color": f"C{i}",
        }
        # percentiles are joined by a line; the mean is another kind of figure, not joined
        ax.errorbar(
            xs[~is_mean],
            means_a[~is_mean],
            yerr=[lo_a[~is_mean], hi_a[~is_mean]],
            ls=_LINES[i % len(_LINES)],
            label=labels.get(pred, str(pred)),
            **style,
        )
        if is_mean.any():
            ax.errorbar(
                xs[is_mean],
                means_a[is_mean],
                yerr=[lo_a[is_mean], hi_a[is_mean]],
                ls="none",
                **style,
            )
    if "Average" in stats_present and len(stats_present) > 1:
        ax.axvline(stats_present.index("Average") - 0.5, color="0.6", lw=0.8, ls=":")
    ax.axhline(0.0, color="0.2", lw=1.0, label="speculation alone (0)")
    ax.set_xticks(x, ["mean" if s == "Average" else s for s in stats_present])
    ax.set_xlabel("JCT statistic")
    ax.set_ylabel("JCT improvement over speculation [%]\n(positive = faster)")
    ci_txt = f"{level:.0%} t-interval over {n_seeds} seeds" if n_seeds > 1 else "one seed"
    ax.set_title(title or f"JCT against speculation alone, {workload or ''} ({ci_txt})", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return save_figure(fig, path)
