"""Seeds 000 and 001's figures and tables: resource and flowtime vs ``sigma``, the
cluster studies' CDFs and summary table (part of :mod:`pipelines._reproduce_xu_lau`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipelines._reproduce import save_figure


# ----------------------------------------------------------------------------- plots
def plot_sigma(summaries: list[pd.DataFrame], path: Path, title: str) -> None:
    from pipelines._plots import _figure

    plt = _figure()
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(12, 4.5))
    for s in summaries:
        d = s[s.sigma.notna()]
        base = s[s.sigma.isna()].iloc[0]
        lab = d.dist.iloc[0]
        line = a0.errorbar(
            d.sigma, d.resource, yerr=2 * d.resource_se, fmt="o-", ms=3, label=f"ESE {lab}"
        )
        col = line[0].get_color()
        a0.plot(d.sigma, d.analysis_resource, "--", color=col, label=f"analysis {lab}")
        a0.axhline(base.resource, color=col, ls=":", lw=1)
        a1.errorbar(
            d.sigma,
            d.flowtime,
            yerr=2 * d.flowtime_se,
            fmt="o-",
            ms=3,
            color=col,
            label=f"ESE {lab}",
        )
        a1.axhline(base.flowtime, color=col, ls=":", lw=1, label=f"no backup {lab}")
    a0.set_xlabel("sigma")
    a0.set_ylabel("total resource")
    a1.set_xlabel("sigma")
    a1.set_ylabel("job flowtime")
    a0.legend(fontsize=7)
    a1.legend(fontsize=7)
    fig.suptitle(title)
    save_figure(fig, path)


def plot_cdfs(df: pd.DataFrame, path: Path, title: str) -> None:
    from pipelines._plots import _figure

    plt = _figure()
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, g in df.groupby("policy", sort=False):
        for ax, key in ((a0, "flowtime"), (a1, "resource")):
            x = np.sort(g[key].to_numpy())
            ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=label)
    a0.set_xlabel("job flowtime")
    a1.set_xlabel("job resource")
    for ax in (a0, a1):
        ax.set_ylabel("CDF")
        ax.set_xscale("log")
        ax.legend(fontsize=8)
    fig.suptitle(title)
    save_figure(fig, path)


def cluster_table(df: pd.DataFrame, machines: int) -> pd.DataFrame:
    rows = []
    for (rate, label), g in df.groupby(["rate", "policy"], sort=False):
        rows.append(
            {
                "rate": rate,
                "policy": label,
                "jobs": len(g),
                "load": rate * 50.5 * 2.5 / machines,
                "mean_flowtime": g.flowtime.mean(),
                "p80_flowtime": g.flowtime.quantile(0.8),
                "p90_flowtime": g.flowtime.quantile(0.9),
                "mean_resource": g.resource.mean(),
                "p80_resource": g.resource.quantile(0.8),
                "copies_per_task": (g.attempts / g.n_tasks).mean(),
            }
        )
    return pd.DataFrame(rows)


def argmin_sigma(summary: pd.DataFrame, key: str) -> float:
    d = summary[summary.sigma.notna()]
    return float(d.sigma.iloc[int(np.argmin(d[key].to_numpy()))])
