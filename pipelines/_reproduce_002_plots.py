"""Seed 002's figures: Figs. 3/5, Figs. 4/6 and the empirical trade-off (part of
:mod:`pipelines._reproduce_002`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipelines._reproduce import save_figure
from pipelines._reproduce_002_studies import DISTRIBUTIONS


# ----------------------------------------------------------------------------- plots
def plot_vs_n(df: pd.DataFrame, path: Path) -> None:
    from pipelines._plots import _figure

    plt = _figure()
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    for i, d in enumerate(DISTRIBUTIONS):
        for j, p in enumerate(sorted(df.p.unique())):
            ax = axes[i, j]
            sub = df[(df.dist == d) & (df.p == p)]
            for (r, k), g in sub.groupby(["r", "keep"], sort=False):
                lab = f"r={r} {'keep' if k else 'kill'}"
                line = ax.plot(g.n, g.analysis_latency, "-", label=f"{lab} (analysis)")[0]
                ax.errorbar(
                    g.n,
                    g.sim_latency,
                    yerr=2 * g.sim_latency_se,
                    fmt="o",
                    color=line.get_color(),
                    ms=4,
                    capsize=2,
                )
            ax.set_title(f"{d}, p = {p}")
            ax.set_xlabel("n")
            ax.set_ylabel("E[T]")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("Seed 002 Figs. 3/5: engine (points, +-2 SE) vs Theorems 2/3 (lines)")
    save_figure(fig, path)


def plot_vs_p(df: pd.DataFrame, path: Path) -> None:
    from pipelines._plots import _figure

    plt = _figure()
    fig, axes = plt.subplots(2, 3, figsize=(14, 8), layout="constrained")
    # the paper's symbols: E[T] the job's latency, E[C] its cost (task-time)
    symbol = {"latency": "E[T]", "cost": "E[C]"}
    for i, d in enumerate(DISTRIBUTIONS):
        sub = df[df.dist == d]
        base = sub[sub.p == 0.0].iloc[0]
        rest = sub[sub.p > 0]
        for (r, k), g in rest.groupby(["r", "keep"], sort=False):
            lab = f"r={r} {'keep' if k else 'kill'}"
            for ax, key in ((axes[i, 0], "latency"), (axes[i, 1], "cost")):
                line = ax.plot(g.p, g[f"analysis_{key}"], "-", label=lab)[0]
                ax.errorbar(
                    g.p,
                    g[f"sim_{key}"],
                    yerr=2 * g[f"sim_{key}_se"],
                    fmt="o",
                    color=line.get_color(),
                    ms=3,
                    capsize=2,
                )
            axes[i, 2].plot(g.sim_cost, g.sim_latency, "o-", ms=3, label=lab)
        for ax, key in ((axes[i, 0], "latency"), (axes[i, 1], "cost")):
            ax.plot([0.0], [base[f"sim_{key}"]], "ks", label="baseline p=0")
            ax.set_xlabel("p (fork when a (1-p) share of tasks is done)")
            ax.set_ylabel(f"{symbol[key]} ({key})")
            ax.set_title(f"{d}: {symbol[key]} vs p", fontsize=10)
        axes[i, 2].plot([base.sim_cost], [base.sim_latency], "ks", label="baseline")
        axes[i, 2].set_xlabel("E[C] (cost)")
        axes[i, 2].set_ylabel("E[T] (latency)")
        axes[i, 2].set_title(f"{d}: trade-off (engine)", fontsize=10)
    axes[0, 2].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.suptitle(f"Seed 002 Figs. 4/6 (n = {df.n.iloc[0]}): engine (points) vs analysis (lines)")
    save_figure(fig, path)


def plot_empirical(sample, grid: pd.DataFrame, chosen: pd.DataFrame, path: Path) -> None:
    from pipelines._plots import _figure

    plt = _figure()
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(12, 4.5))
    a0.hist(sample, bins=60, density=True, color="0.5")
    a0.set_xlabel("task time (s)")
    a0.set_title("empirical sample (engine node model, no speculation)")
    base = grid.iloc[0]
    for (r, k), g in grid.iloc[1:].groupby(["r", "keep"], sort=False):
        if r == 0 or r > 3:
            continue
        a1.plot(g.cost, g.latency, ".-", ms=3, label=f"r={r} {'keep' if k else 'kill'}")
    a1.plot([base.cost], [base.latency], "ks", label="baseline")
    a1.errorbar(
        chosen.engine_cost,
        chosen.engine_latency,
        yerr=2 * chosen.engine_latency_se,
        fmt="r*",
        ms=10,
        label="chosen, re-measured on the engine",
    )
    a1.set_xlabel("E[C]")
    a1.set_ylabel("E[T]")
    a1.set_title("Algorithm 1 trade-off (bootstrap), p in grid")
    a1.legend(fontsize=7)
    save_figure(fig, path)
