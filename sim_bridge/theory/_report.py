"""Numbers and plots quoted in NOTES.md: ``python -m sim_bridge.theory [--out DIR]``."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
from scipy import stats

from .._atomic import atomic_write_text
from ._deadline_clones import deadline_clone_cost, deadline_clone_counts
from ._pocd import dolly_clone_count
from ._single_fork import shifted_exp_single_fork, single_fork_analytic
from ._speculation_sigma import ese_expected_resource, ese_sigma_star, sda_sigma_star
from ._xu_lau import cloning_cutoff_rate, sca_clone_counts, sca_job_value

__all__ = ["paper_comparison", "write_report"]


def paper_comparison() -> list[dict[str, object]]:
    """Rows ``{seed, quantity, paper, ours, note}`` comparing our numbers with the papers
    (about 5 s of CPU; run it through ``python -m sim_bridge.theory``)."""
    rows: list[dict[str, object]] = []

    def add(seed, quantity, paper, ours, note=""):
        rows.append(
            {"seed": seed, "quantity": quantity, "paper": paper, "ours": ours, "note": note}
        )

    par = stats.pareto(b=2.0, scale=2.0)
    base = single_fork_analytic(par, 0.0, 0, True, 400, method="integral")[0]
    add("002", "Pareto(2,2) n=400 baseline E[T]", "~70 (Fig. 6)", round(base, 2))
    for p, r, keep in [(0.1, 1, False), (0.3, 1, True)]:
        ours = shifted_exp_single_fork(1.0, 1.0, p, r, keep, 400)[1]
        paper = 2.0 + (p * (1 + r * (1 - math.exp(-1))) if keep else p * (r + 2))
        add(
            "002",
            f"ShiftedExp(1,1) E[C], p={p}, r={r}, {'keep' if keep else 'kill'}",
            round(paper, 4),
            round(ours, 4),
            "eq. 11 adds p*delta (eq. 51 error); MC agrees with ours",
        )
    for n in (400, 10**6):
        c = single_fork_analytic(par, 0.1, 1, True, n, method="closed")[0]
        i = single_fork_analytic(par, 0.1, 1, True, n, method="integral")[0]
        add(
            "002",
            f"Pareto(2,2) keep p=0.1 r=1 n={n}: Thm 3 / Thm 1 integral - 1",
            "~0",
            round(c / i - 1, 4),
            "Frechet limit drops the residual's location",
        )
    add(
        "000",
        "lambda_U, alpha=2, E[m]=50.5, E[s]=2.5, M=3000",
        "not stated",
        round(cloning_cutoff_rate(2.0, 50.5, 2.5, 3000), 2),
        "paper's light load 6, heavy 30/40 jobs/unit time",
    )
    add(
        "000",
        "SDA sigma*, alpha=2 (eq. 28)",
        "1 + sqrt(2)/2 = 1.7071",
        round(sda_sigma_star(2.0), 4),
    )
    add(
        "001",
        "ESE sigma*, exponential (eq. 25)",
        "~1.6",
        round(ese_sigma_star(stats.expon()), 4),
        "with eq. 25's last term corrected",
    )
    for a in (2.0, 3.0, 4.0, 5.0):
        add(
            "000",
            f"ESE sigma*, Pareto alpha={a:g} (eqs. 30-33)",
            "~1.7" if a == 2 else "~2.0",
            round(ese_sigma_star(stats.pareto(a)), 4),
        )
    fig1 = sca_clone_counts([10, 20, 5, 10], [1, 2, 1, 2], 2.0, 100, 8, 0.01)
    add("000", "SCA P2, Fig. 1 instance (gamma=0.01 assumed)", "plot only", fig1.tolist())
    m, mu = [1, 8], [1.65, 0.66]
    vals = [
        sum(sca_job_value(int(c), k, s, 2.0, 0.01) for c, k, s in zip(x, m, mu, strict=True))
        for x in (
            sca_clone_counts(m, mu, 2.0, 26, 3, 0.01),
            sca_clone_counts(m, mu, 2.0, 26, 3, 0.01, method="greedy"),
        )
    ]
    add(
        "000",
        "P2 exact vs greedy value, m=[1,8], mu=[1.65,0.66], N=26, r=3",
        "greedy suggested exact",
        [round(v, 4) for v in vals],
    )
    t1 = deadline_clone_counts([0.7] * 3, 2.0, 2.5, 0.1, 100, 8, method="theorem1")
    ex = deadline_clone_counts([0.7] * 3, 2.0, 2.5, 0.1, 100, 8, method="lagrangian")
    add(
        "001",
        "Theorem 1 vs integer optimum, 3 tasks mu=0.7, D=2.5, eps=0.1",
        t1.tolist(),
        ex.tolist(),
        f"cost {deadline_clone_cost(t1, [0.7] * 3, 2.0):.4f} vs "
        f"{deadline_clone_cost(ex, [0.7] * 3, 2.0):.4f}",
    )
    add(
        "003",
        "Dolly clones, p=0.5 as job-level, N=10, eps=5%",
        dolly_clone_count(0.5, 10),
        dolly_clone_count(0.5, 10, p_is="job"),
        "paper's literal formula vs per-task p",
    )
    return rows


def _plots(out: Path) -> list[str]:
    try:
        import matplotlib
    except ImportError as exc:  # the base install has no plotting library
        raise ImportError(
            "the theory report's figures need Matplotlib: pip install 'straggler-mtl[pipelines]'"
        ) from exc

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    sig = np.linspace(0.2, 6.0, 59)
    fig, ax = plt.subplots(figsize=(6, 4))
    for a in (2.0, 3.0, 4.0, 5.0):
        d = stats.pareto(a)
        ax.plot(sig, [ese_expected_resource(s, d) / d.mean() for s in sig], label=f"Pareto a={a:g}")
    ax.plot(sig, [ese_expected_resource(s, stats.expon()) for s in sig], "k--", label="Exp(1)")
    ax.set_xlabel("sigma")
    ax.set_ylabel("E[R] / E[x]")
    ax.set_title("ESE expected resource per task (seed 000 Fig. 4, seed 001 Fig. 2)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "ese_resource_vs_sigma.png", dpi=120)
    plt.close(fig)
    names.append("ese_resource_vs_sigma.png")
    ps = np.arange(5, 96) / 100
    for tag, dist in (
        ("shifted_exp_1_1", stats.expon(loc=1.0)),
        ("pareto_2_2", stats.pareto(b=2.0, scale=2.0)),
    ):
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for r, keep, style in (
            (0, False, "-"),
            (1, True, "-"),
            (2, True, "-"),
            (1, False, "--"),
            (2, False, "--"),
        ):
            closed = np.array([single_fork_analytic(dist, p, r, keep, 400) for p in ps])
            integ = np.array(
                [single_fork_analytic(dist, p, r, keep, 400, method="integral") for p in ps]
            )
            lab = f"r={r} {'keep' if keep else 'kill'}"
            for k in (0, 1):
                line = axes[k].plot(ps, closed[:, k], style, label=f"{lab} closed")[0]
                axes[k].plot(ps, integ[:, k], ":", color=line.get_color())
        for k, yl in enumerate(("E[T]", "E[C]")):
            axes[k].set_xlabel("p")
            axes[k].set_ylabel(yl)
        axes[0].set_title(
            f"{tag}, n=400: closed (solid/dashed), Thm 1 integral (dotted)", fontsize=8
        )
        axes[1].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"single_fork_{tag}.png", dpi=120)
        plt.close(fig)
        names.append(f"single_fork_{tag}.png")
    return names


def write_report(out: str | os.PathLike[str] | None = None) -> list[dict[str, object]]:
    """Print the comparison table; with ``out`` also write ``report.md``, ``summary.json``
    and the PNG plots there."""
    rows = paper_comparison()
    lines = ["| seed | quantity | paper | ours | note |", "|---|---|---|---|---|"]
    lines += [
        f"| {r['seed']} | {r['quantity']} | {r['paper']} | {r['ours']} | {r['note']} |"
        for r in rows
    ]
    table = "\n".join(lines) + "\n"
    print(table, end="")
    if out is not None:
        path = Path(out)
        path.mkdir(parents=True, exist_ok=True)
        pngs = _plots(path)
        atomic_write_text(path / "report.md", table)
        atomic_write_text(
            path / "summary.json",
            json.dumps({"rows": rows, "plots": pngs}, indent=2, default=str) + "\n",
        )
    return rows
