"""PNG figures of the training and evaluation results (matplotlib, Agg backend)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | os.PathLike[str]) -> Path:
    """Save ``fig`` as PNG atomically (temporary file, then rename) and close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110, bbox_inches="tight")
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
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
    """One line per ``model`` of ``metric`` against ``fraction`` (a share, plotted in %)."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    for model, g in table.groupby("model", sort=False):
        g = g.sort_values("fraction")
        ax.plot(100 * g["fraction"], g[metric], marker="o", label=str(model))
    ax.set_xscale("log")
    ticks = sorted(set((100 * table["fraction"]).round(6)))
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    base_col = {"accuracy": "majority_accuracy", "pr_auc": "positive_rate"}.get(metric)
    if base_col and base_col in table and table[base_col].notna().any():
        base = float(table[base_col].dropna().iloc[0])  # the same test rows at every fraction
        what = "majority class" if metric == "accuracy" else "positive rate"
        ax.axhline(base, color="0.35", ls="--", lw=1.2, label=f"{what} ({base:.3f})")
    elif metric in ("roc_auc", "balanced_accuracy"):
        ax.axhline(0.5, color="0.35", ls="--", lw=1.2, label="chance (0.5)")
    ax.set_xlabel("training data per (node, workload) pair [%]")
    ax.set_ylabel(metric)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return save_figure(fig, path)


def plot_heldout(table: pd.DataFrame, path: str | os.PathLike[str], title: str) -> Path:
    """Accuracy of each model on each held-out pair (Table 2), as grouped bars."""
    plt = _figure()
    wide = table.pivot(index="pair", columns="model", values="accuracy")
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(wide) + 2), 4))
    x = np.arange(len(wide))
    width = 0.8 / max(1, wide.shape[1])
    for i, col in enumerate(wide.columns):
        ax.bar(x + i * width, wide[col], width, label=str(col))
    ax.set_xticks(x + 0.4 - width / 2, wide.index, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("accuracy on the held-out pair")
    ax.set_ylim(0, 1)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return save_figure(fig, path)
