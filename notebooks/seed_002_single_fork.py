# ---
# jupytext:
#   text_representation:
#     extension: .py
#     format_name: percent
# ---

# %% [markdown]
# # Seed 002 — single-fork replication (Wang, Joshi & Wornell) on our engine
#
# `pi_keep(p, r)` / `pi_kill(p, r)`: once `(1 - p) n` tasks of a job have finished, every
# straggler gets `r` extra replicas (keep) or is killed and replaced by `r + 1` (kill).
# This notebook runs the same code as `straggler reproduce 002`: the engine's
# `single_job` against the closed forms of Theorems 2/3 (Figs. 3-6), and Algorithm 1 with
# the eq. 19/20 choice on an empirical sample (Table 1). `STRAGGLER_QUICK=1` shrinks every
# size; outputs go to `$STRAGGLER_NOTEBOOK_OUT` (default `notebooks/out/`).

# %%
import os
from pathlib import Path

import pandas as pd
from scipy import stats

from pipelines import ReproduceConfig, reproduce
from sim_bridge.experiments import single_job
from sim_bridge.theory import single_fork_analytic

QUICK = os.environ.get("STRAGGLER_QUICK", "0") not in ("", "0")
OUT = Path(os.environ.get("STRAGGLER_NOTEBOOK_OUT", "notebooks/out")) / "seed_002"
OUT.mkdir(parents=True, exist_ok=True)
print("quick mode" if QUICK else "full mode", "->", OUT)

# %% [markdown]
# ## One point by hand: engine vs Theorem 3 for Pareto(2, 2)

# %%
n, runs = (100, 10) if QUICK else (400, 300)
dist = stats.pareto(b=2.0, scale=2.0)
sim = single_job(dist, n, 0.1, 1, True, runs=runs, seed=0)
closed = single_fork_analytic(dist, 0.1, 1, True, n)
exact = single_fork_analytic(dist, 0.1, 1, True, n, method="exact")
pd.DataFrame(
    {
        "engine": [sim["latency"], sim["cost"]],
        "engine SE": [sim["latency_se"], sim["cost_se"]],
        "Theorem 3 (asymptotic)": list(closed),
        "exact finite n": list(exact),
    },
    index=["E[T]", "E[C]"],
)

# %% [markdown]
# ## The whole reproduction

# %%
summary = reproduce(
    ReproduceConfig("002", str(OUT), quick=QUICK, seed=0, progress=False), overwrite=True
)
pd.read_csv(OUT / "comparison.csv")

# %%
from IPython.display import Image, display  # noqa: E402

for name in ("fig3_5_latency_vs_n.png", "fig4_6_metrics_vs_p.png", "empirical_tradeoff.png"):
    display(Image(filename=str(OUT / name)))

# %%
pd.read_csv(OUT / "table1_chosen_policies.csv")
