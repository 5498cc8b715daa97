"""The files of ``straggler compare``: Tables 3 and 4 as CSV and Markdown (with the
headroom table and the verdict) and their plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipelines._compare_config import LABELS, CompareConfig
from pipelines._compare_stats import STATISTICS, predictor_names
from pipelines._io import atomic_write_text
from pipelines._plots import plot_jct_difference, save_figure


def _cell(row) -> str:
    if not np.isfinite(row["mean"]):
        return "n/a"
    mark = "**" if row.get("significant_fdr", False) else "*" if row["significant"] else ""
    if row["n"] > 1:
        return f"{row['mean']:.2f}% ± {row['std']:.2f}{mark}"
    return f"{row['mean']:.2f}%"


def _markdown(table3: pd.DataFrame, table4: pd.DataFrame, cfg: CompareConfig, headroom=None) -> str:
    groups = list(dict.fromkeys(table3["workload"]))
    names = predictor_names(table3)
    head = ["statistic"] + [f"{w} {LABELS[p]}" for w in groups for p in names]
    lines = [
        f"# Table 3: improvement in job completion time over speculation ({cfg.speculation})",
        "",
        f"Mean ± std over {cfg.seeds} seed(s); `*`: significant (two-sided one-sample t-test "
        "of the per-seed improvements against 0, 5%, uncorrected); `**`: still significant "
        "after Holm's correction over every cell of Tables 3 and 4. Positive: faster than "
        f"speculation alone. Predictor placement mode: {cfg.mode}.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    idx = table3.set_index(["workload", "predictor", "statistic"])
    for stat in STATISTICS:
        cells = [_cell(idx.loc[(w, p, stat)]) for w in groups for p in names]
        lines.append(f"| {stat} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "# Table 4: reduction in total task-seconds over speculation",
        "",
        "| workload | " + " | ".join(LABELS[p] for p in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    idx4 = table4.set_index(["workload", "predictor"])
    for w in groups:
        lines.append(f"| {w} | " + " | ".join(_cell(idx4.loc[(w, p)]) for p in names) + " |")
    if headroom is not None and len(headroom):
        hn = list(dict.fromkeys(headroom["predictor"]))
        lines += [
            "",
            "# Headroom captured: share of the oracle's mean-JCT gain over speculation alone",
            "",
            "Pooled over seeds (sum of gains / sum of the oracle's gains); 1 = as good as the "
            "oracle, 0 = no better than speculation alone, < 0 = worse.",
            "",
            "| workload | " + " | ".join(LABELS[p] for p in hn) + " |",
            "|---|" + "---|" * len(hn),
        ]
        hidx = headroom.set_index(["workload", "predictor"])["pooled"]
        for w in dict.fromkeys(headroom["workload"]):
            lines.append(f"| {w} | " + " | ".join(f"{hidx[(w, p)]:.2f}" for p in hn) + " |")
    return "\n".join(lines) + "\n"


def _csv(frame: pd.DataFrame) -> str:
    f = frame.copy()
    f["per_seed"] = f["per_seed"].map(lambda v: ";".join(f"{x:.6g}" for x in v))
    return f.to_csv(index=False)


def write_outputs(
    out, table3, table4, jct_samples, groups, cfg, verdict, headroom=None
) -> dict[str, str]:
    md = _markdown(table3, table4, cfg, headroom) + f"\nVerdict: {verdict}.\n"
    files = {
        "table3_csv": atomic_write_text(out / "table3.csv", _csv(table3)),
        "table4_csv": atomic_write_text(out / "table4.csv", _csv(table4)),
        "tables_md": atomic_write_text(out / "tables.md", md),
        "jct_difference_png": plot_jct_difference(
            table3,
            out / "jct_difference.png",
            labels=LABELS,
            title=f"JCT gain over {cfg.speculation} alone, all workloads "
            f"({cfg.seeds} seed{'s' if cfg.seeds > 1 else ''}, 95% t-intervals)",
        ),
        "jct_cdf_png": _plot_cdfs(jct_samples, groups, out / "jct_cdf.png", cfg),
        "table3_png": _plot_table3(table3, groups, out / "table3.png", cfg),
        "table4_png": _plot_table4(table4, groups, out / "table4.png", cfg),
    }
    return {k: str(v) for k, v in files.items()}


def _plot_cdfs(jct_samples, groups, path: Path, cfg) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.4), squeeze=False)
    for ax, w in zip(axes[0], groups, strict=True):
        for pol in dict.fromkeys(p for _w, p in jct_samples):
            parts = jct_samples.get((w, pol))
            if not parts:
                continue
            x = np.sort(np.concatenate(parts))
            if not x.size:
                continue
            ax.plot(x, np.arange(1, x.size + 1) / x.size, label=LABELS[pol])
        ax.set_xscale("log")
        ax.set_title(f"{w} (all {cfg.seeds} seeds pooled)")
        ax.set_xlabel("job completion time (s)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("CDF")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.suptitle(
        f"Job completion time: speculation ({cfg.speculation}) alone vs + predictor", y=1.04
    )
    return save_figure(fig, path)


def _plot_table3(table3, groups, path: Path, cfg) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stats = list(STATISTICS)
    fig, axes = plt.subplots(len(groups), 1, figsize=(9, 2.6 * len(groups)), squeeze=False)
    x = np.arange(len(stats))
    names = predictor_names(table3)
    width = 0.8 / len(names)
    for ax, w in zip(axes[:, 0], groups, strict=True):
        for i, pred in enumerate(names):
            sub = table3[(table3["workload"] == w) & (table3["predictor"] == pred)]
            sub = sub.set_index("statistic").loc[stats]
            _range_bars(ax, x + (i - (len(names) - 1) / 2) * width, sub, width, 2, LABELS[pred])
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xticks(x, stats)
        ax.set_ylabel("% improvement")
        ax.set_title(f"{w}: JCT improvement over {cfg.speculation} (bars: min-max over seeds)")
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)


def _range_bars(ax, x, sub: pd.DataFrame, width: float, capsize: int, label: str) -> None:
    """Bars at the seeds' mean with min-max error bars (missing cells drawn as 0)."""
    lo = (sub["mean"] - sub["min"]).clip(lower=0).fillna(0)
    hi = (sub["max"] - sub["mean"]).clip(lower=0).fillna(0)
    ax.bar(x, sub["mean"].fillna(0), width, yerr=[lo, hi], capsize=capsize, label=label)


def _plot_table4(table4, groups, path: Path, cfg) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(groups), 3.4))
    x = np.arange(len(groups))
    names = predictor_names(table4)
    width = 0.8 / len(names)
    for i, pred in enumerate(names):
        sub = table4[table4["predictor"] == pred].set_index("workload").loc[groups]
        _range_bars(ax, x + (i - (len(names) - 1) / 2) * width, sub, width, 3, LABELS[pred])
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x, groups)
    ax.set_ylabel("% reduction in task-seconds")
    ax.set_title(f"Task-seconds vs {cfg.speculation} (min-max over {cfg.seeds} seeds)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, path)
