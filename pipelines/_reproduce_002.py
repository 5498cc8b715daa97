"""Seed 002 (Wang, Joshi & Wornell) on the engine: Figs. 3-6 and Table 1 / eqs. 19-20.

* Figs. 3 and 5: ``E[T]`` vs ``n`` from :func:`sim_bridge.experiments.single_job` (points)
  against Theorems 2 and 3 (lines), ShiftedExp(1, 1) and Pareto(2, 2), ``p`` in {0.1, 0.2}.
* Figs. 4 and 6: ``E[T]`` and ``E[C]`` vs ``p`` at ``n = 400`` for ``r = 0..2``, keep and
  kill, simulated and analysed, and the latency-cost trade-off.
* Section 4 / Table 1: on an empirical sample (task times our engine's node model produces
  for one 1,000-task job without speculation; the paper used two Google trace jobs we do
  not have), Algorithm 1 (bootstrap) traces the trade-off, eqs. 19 and 20 choose a policy,
  and the engine re-measures the chosen policies against the bootstrap's estimate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from pipelines._reproduce import Comparison, save_figure, write_table

__all__ = [
    "CONFIGS",
    "DISTRIBUTIONS",
    "empirical_sample",
    "empirical_study",
    "latency_vs_n",
    "metrics_vs_p",
    "run",
    "sizes",
]

#: name -> frozen distribution of Figs. 3-6
DISTRIBUTIONS: dict[str, Any] = {
    "ShiftedExp(1,1)": stats.expon(loc=1.0, scale=1.0),
    "Pareto(2,2)": stats.pareto(b=2.0, scale=2.0),
}
#: (r, keep) curves of Figs. 4 and 6 (r = 0 with keep is the baseline itself)
CONFIGS: tuple[tuple[int, bool], ...] = ((0, False), (1, True), (1, False), (2, True), (2, False))


def sizes(quick: bool) -> dict[str, Any]:
    """Experiment sizes (the paper's in full mode, scaled down with ``quick``).

    Examples
    --------
    >>> sizes(True)["n_grid"]
    [50, 100]
    """
    if quick:
        return {
            "n_grid": [50, 100],
            "runs_n": 8,
            "n_p": 100,
            "p_grid": [0.1, 0.4],
            "runs_p": 8,
            "n_emp": 100,
            "emp_tasks": 300,
            "n_boot": 100,
            "emp_p_grid": [0.05, 0.1, 0.2, 0.4],
            "runs_emp": 8,
        }
    return {
        "n_grid": [100, 200, 400, 600, 800, 1000],
        "runs_n": 200,
        "n_p": 400,
        "p_grid": [round(0.05 * k, 2) for k in range(1, 20)],
        "runs_p": 120,
        "n_emp": 400,
        "emp_tasks": 1000,
        "n_boot": 1000,
        "emp_p_grid": [round(0.01 * k, 2) for k in range(1, 51)],
        "runs_emp": 200,
    }


def _vs_n_point(d: str, p: float, r: int, k: bool, n: int, runs: int, seed: int) -> dict:
    """One point of Figs. 3/5 (a sweep task: its seed is part of its arguments)."""
    from sim_bridge.experiments import single_job
    from sim_bridge.theory import single_fork_analytic

    dist = DISTRIBUTIONS[d]
    sim = single_job(dist, n, p, r, k, runs=runs, seed=seed)
    lat, cost = single_fork_analytic(dist, p, r, k, n, method="closed")
    return {
        "dist": d,
        "p": p,
        "r": r,
        "keep": k,
        "n": n,
        "sim_latency": sim["latency"],
        "sim_latency_se": sim["latency_se"],
        "analysis_latency": lat,
        "sim_cost": sim["cost"],
        "sim_cost_se": sim["cost_se"],
        "analysis_cost": cost,
    }


def latency_vs_n(
    n_grid, runs: int, seed: int, progress: bool = False, ps=(0.1, 0.2)
) -> pd.DataFrame:
    """Figs. 3 and 5: simulated and analytic ``E[T]`` (and ``E[C]``) against ``n``.

    One sweep task per point (:func:`pipelines._sweep.run_sweep`: on Dask inside
    ``reproduce --workers``), seeded by its position in the grid as before."""
    from pipelines._sweep import SweepTask, run_sweep

    combos = [
        (d, p, r, k, n)
        for d in DISTRIBUTIONS
        for p in ps
        for r, k in ((1, True), (1, False), (2, True), (2, False))
        for n in n_grid
    ]
    tasks = [
        SweepTask(
            f"dist={d}/p={p}/r={r}/keep={k}/n={n}",
            _vs_n_point,
            (d, p, r, k, int(n), runs, seed + 1000 * i),
        )
        for i, (d, p, r, k, n) in enumerate(combos)
    ]
    rows = run_sweep(tasks, desc="seed 002 Figs. 3/5", unit="pt", progress=progress)
    df = pd.DataFrame(list(rows.values()))
    df["latency_rel_diff"] = (df.sim_latency - df.analysis_latency) / df.analysis_latency
    df["latency_z"] = (df.sim_latency - df.analysis_latency) / df.sim_latency_se
    return df


def _vs_p_point(d: str, p: float, r: int, k: bool, n: int, runs: int, seed: int) -> dict:
    """One point of Figs. 4/6 (a sweep task): a Figs. 3/5 point plus the exact finite-n
    analysis."""
    from sim_bridge.theory import single_fork_analytic

    row = _vs_n_point(d, p, r, k, n, runs, seed)
    row["exact_latency"], row["exact_cost"] = single_fork_analytic(
        DISTRIBUTIONS[d], p, r, k, n, method="exact"
    )
    return row


def metrics_vs_p(n: int, p_grid, runs: int, seed: int, progress: bool = False) -> pd.DataFrame:
    """Figs. 4 and 6: ``E[T]``, ``E[C]`` against ``p`` for ``r = 0..2``, keep and kill, plus
    the baseline ``p = 0`` (no replication) per distribution (one sweep task per point)."""
    from pipelines._sweep import SweepTask, run_sweep

    combos = [(d, 0.0, 0, True) for d in DISTRIBUTIONS]
    combos += [(d, p, r, k) for d in DISTRIBUTIONS for r, k in CONFIGS for p in p_grid]
    tasks = [
        SweepTask(
            f"dist={d}/p={p}/r={r}/keep={k}",
            _vs_p_point,
            (d, p, r, k, n, runs, seed + 7919 * (i + 1)),
        )
        for i, (d, p, r, k) in enumerate(combos)
    ]
    rows = run_sweep(tasks, desc="seed 002 Figs. 4/6", unit="pt", progress=progress)
    return pd.DataFrame(list(rows.values()))


def empirical_sample(n_tasks: int, seed: int) -> np.ndarray:
    """Task times of one ``n_tasks``-task job run by the engine's node model without
    speculation (SYN profile, contention, heavy-tailed noise) on 50 nodes x 2 slots: the
    stand-in for the paper's Google trace jobs (Fig. 7)."""
    from sim_bridge import JobSpec, simulate

    res = simulate(
        [JobSpec("emp", 0.0, np.full(n_tasks, 10.0))],
        "none",
        nodes=50,
        slots=2,
        seed=seed,
        record_counters=False,
        progress=False,
    )
    return res.tasks["duration"].to_numpy(dtype=float)


def empirical_study(
    sample: np.ndarray,
    n: int,
    p_grid,
    n_boot: int,
    runs: int,
    seed: int,
    lam: float = 0.1,
    progress: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Algorithm 1 over the grid, eqs. 19 / 20, and the engine's check of the choices.

    Returns the bootstrap grid and a table with one row per chosen policy (baseline,
    latency-sensitive, cost-sensitive): bootstrap and engine latency / cost.
    """
    from sim_bridge.experiments import EmpiricalDistribution, single_job
    from sim_bridge.theory import bootstrap_single_fork, choose_single_fork_policy

    def est(p, r, keep):
        return bootstrap_single_fork(sample, p, r, keep, n, n_boot=n_boot, seed=seed)

    grid_p = [p for p in p_grid if abs(p * n - round(p * n)) < 1e-6]
    lat_choice, grid = choose_single_fork_policy(
        est, "latency", p_grid=grid_p, r_max=4, progress=progress
    )
    cost_choice, _ = choose_single_fork_policy(
        est, "cost", p_grid=grid_p, r_max=4, lam=lam, n=n, progress=False
    )
    base = grid.iloc[0]
    dist = EmpiricalDistribution(sample)
    rows = []
    for i, (label, p, r, keep, blat, bcost) in enumerate(
        (
            ("baseline", 0.0, 0, True, base.latency, base.cost),
            (
                "latency-sensitive (eq. 19)",
                lat_choice.p,
                lat_choice.r,
                lat_choice.keep,
                lat_choice.latency,
                lat_choice.cost,
            ),
            (
                f"cost-sensitive (eq. 20, lambda={lam})",
                cost_choice.p,
                cost_choice.r,
                cost_choice.keep,
                cost_choice.latency,
                cost_choice.cost,
            ),
        )
    ):
        sim = single_job(dist, n, p, r, keep, runs=runs, seed=seed + 31 * (i + 1))
        rows.append(
            {
                "policy": label,
                "p": p,
                "r": r,
                "keep": keep,
                "bootstrap_latency": blat,
                "bootstrap_cost": bcost,
                "engine_latency": sim["latency"],
                "engine_latency_se": sim["latency_se"],
                "engine_cost": sim["cost"],
                "engine_cost_se": sim["cost_se"],
            }
        )
    return grid, pd.DataFrame(rows)


# ----------------------------------------------------------------------------- plots
def _plot_vs_n(df: pd.DataFrame, path: Path) -> None:
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


def _plot_vs_p(df: pd.DataFrame, path: Path) -> None:
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


def _plot_empirical(sample, grid: pd.DataFrame, chosen: pd.DataFrame, path: Path) -> None:
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


# ----------------------------------------------------------------------------- run
def run(out: Path, *, quick: bool, seed: int, progress: bool, paper: str = "002") -> dict:
    """All of seed 002 into ``out``; returns the summary dict."""
    from sim_bridge.theory import keep_or_kill

    sz = sizes(quick)
    cmp = Comparison()
    # Figs. 3 / 5
    vs_n = latency_vs_n(sz["n_grid"], sz["runs_n"], seed, progress)
    write_table(vs_n, out, "fig3_5_latency_vs_n")
    _plot_vs_n(vs_n, out / "fig3_5_latency_vs_n.png")
    big = vs_n[vs_n.n >= 100]
    for d in DISTRIBUTIONS:
        g = big[big.dist == d]
        worst = float(g.latency_rel_diff.abs().max()) if len(g) else float("nan")
        cmp.add(
            "Fig. 3" if d.startswith("Shifted") else "Fig. 5",
            f"{d}: max |sim - analysis| / analysis of E[T], n >= 100",
            worst,
            "figure only",
            "paper: simulation and analysis 'very close for n >= 100'; the analysis is "
            "asymptotic in n, so a few % gap at n = 100 shrinks with n",
        )
    # Figs. 4 / 6
    vs_p = metrics_vs_p(sz["n_p"], sz["p_grid"], sz["runs_p"], seed, progress)
    write_table(vs_p, out, "fig4_6_metrics_vs_p")
    _plot_vs_p(vs_p, out / "fig4_6_metrics_vs_p.png")
    claims: dict[str, Any] = {}
    for d in DISTRIBUTIONS:
        sub = vs_p[vs_p.dist == d]
        base = sub[sub.p == 0.0].iloc[0]
        for r in (1, 2):
            g = sub[(sub.r == r) & sub.keep & (sub.p > 0)]
            cmp.add(
                "Fig. 6" if d.startswith("Pareto") else "Fig. 4",
                f"{d}: min over p of E[T], r={r} keep (baseline {base.sim_latency:.3g})",
                float(g.sim_latency.min()),
                15.0 if d.startswith("Pareto") and sz["n_p"] == 400 else "figure only",
                "paper text: Pareto(2,2) latency 'from 70 to about 15 for r = 1 and r = 2'"
                if d.startswith("Pareto")
                else "paper: larger p gives a Theta(ln p) latency decrease",
            )
        if d.startswith("Pareto"):
            cmp.add(
                "Fig. 6",
                "Pareto(2,2): baseline E[T] (p = 0), engine",
                float(base.sim_latency),
                70.0 if sz["n_p"] == 400 else "figure only",
                "paper text: 'from 70'; exact E[max of n Pareto(2,2)] = 70.9 at n = 400",
            )
            low = sub[(sub.p > 0) & (sub.r >= 1)]
            claims["pareto_cost_below_baseline_with_replication"] = bool(
                (low.sim_cost < base.sim_cost).any()
            )
            cmp.add(
                "Fig. 6",
                "Pareto(2,2): some (p, r >= 1) lowers BOTH E[T] and E[C] below the baseline",
                bool(((low.sim_cost < base.sim_cost) & (low.sim_latency < base.sim_latency)).any()),
                True,
                "paper: 'possible to reduce latency and computing cost simultaneously'",
            )
        else:
            g = sub[(sub.r == 1) & sub.keep & (sub.p > 0)].sort_values("p")
            claims["shiftedexp_cost_increases_with_p"] = bool(np.all(np.diff(g.sim_cost) > 0))
            cmp.add(
                "Fig. 4",
                "ShiftedExp(1,1): E[C] increases with p (r=1 keep), engine",
                claims["shiftedexp_cost_increases_with_p"],
                True,
                "paper: replicating earlier increases the cost linearly",
            )
            kk = sub[(sub.r == 1) & (sub.p > 0)].pivot_table(
                index="p", columns="keep", values=["sim_latency", "sim_latency_se"]
            )
            slack = 2 * np.hypot(kk["sim_latency_se"][True], kk["sim_latency_se"][False])
            keep_better = bool((kk["sim_latency"][True] <= kk["sim_latency"][False] + slack).all())
            cmp.add(
                "Lemma 1",
                "ShiftedExp(1,1): keep <= kill (+2 SE) in E[T] for r=1 at every p (engine); "
                f"keep_or_kill(p=0.1) = {keep_or_kill(DISTRIBUTIONS[d], 0.1)}",
                keep_better,
                True,
                "paper: for ShiftedExp keeping the original is better",
            )
    # agreement of the p sweep with the exact finite-n theory, in standard errors
    z = (vs_p.sim_latency - vs_p.exact_latency) / vs_p.sim_latency_se
    zc = (vs_p.sim_cost - vs_p.exact_cost) / vs_p.sim_cost_se
    # Section 4 / Table 1
    sample = empirical_sample(sz["emp_tasks"], seed)
    grid, chosen = empirical_study(
        sample,
        sz["n_emp"],
        sz["emp_p_grid"],
        sz["n_boot"],
        sz["runs_emp"],
        seed,
        progress=progress,
    )
    write_table(grid, out, "empirical_bootstrap_grid")
    write_table(chosen, out, "table1_chosen_policies")
    _plot_empirical(sample, grid, chosen, out / "empirical_tradeoff.png")
    base = chosen.iloc[0]
    lat_row = chosen.iloc[1]
    paper_ratio = {"Job 1": 1676 / 5068, "Job 2": 463 / 1418, "Job 3": 432 / 520}
    ratio = float(lat_row.engine_latency / base.engine_latency)
    cmp.add(
        "Table 1",
        "latency-sensitive E[T] / baseline E[T] (engine, our sample)",
        ratio,
        round(paper_ratio["Job 2"], 3),
        "paper's Google trace jobs: Job 1 0.331, Job 2 0.327, Job 3 0.831; our sample is "
        "the engine's node model (different tail), so only the direction is comparable: "
        + (
            "the same here (replication cuts E[T], ratio below 1)"
            if ratio < 1
            else "it DIFFERS here (replication does not cut E[T] on our sample)"
        ),
    )
    cmp.add(
        "Table 1",
        "latency-sensitive E[C] / baseline E[C] (engine, our sample)",
        float(lat_row.engine_cost / base.engine_cost),
        round(291 / 296, 3),
        "eq. 19 keeps the cost at most the baseline's; paper Job 2: 291 / 296",
    )
    rel_boot = (chosen.engine_latency - chosen.bootstrap_latency) / chosen.bootstrap_latency
    cmp.add(
        "Algorithm 1",
        "max |engine - bootstrap| / bootstrap E[T] over the chosen policies",
        float(rel_boot.abs().max()),
        "figure only",
        "Algorithm 1 fixes the fork time at the sample quantile; the engine forks at the "
        "random (1-p)n-th finish",
    )
    cmp.write(out)
    return {
        "sizes": sz,
        "fig3_5_max_rel_diff_n_ge_100": float(big.latency_rel_diff.abs().max())
        if len(big)
        else None,
        "fig4_6_latency_z_vs_exact_max_abs": float(z.abs().max()),
        "fig4_6_cost_z_vs_exact_max_abs": float(zc.abs().max()),
        "fig4_6_latency_z_vs_exact_median_abs": float(z.abs().median()),
        "fig4_6_cost_z_vs_exact_median_abs": float(zc.abs().median()),
        "claims": claims,
        "empirical": {
            "sample_size": int(sample.size),
            "sample_mean": float(sample.mean()),
            "chosen": chosen.to_dict(orient="records"),
        },
        "comparison": cmp.frame().to_dict(orient="records"),
        "files": sorted(p.name for p in Path(out).iterdir() if not p.name.startswith(".")),
    }
