# ---
# jupytext:
#   text_representation:
#     extension: .py
#     format_name: percent
# ---

# %% [markdown]
# # Seed 000 — Xu & Lau: SCA, SDA and ESE on our engine
#
# Smart Cloning (SCA, Algorithm 1: SRPT, then clone new jobs by P2 when they fit), Straggler
# Detection (SDA: copy when `t_rem > sigma E[x]` after a fraction `s` of the work) and
# Enhanced Speculative Execution (ESE, Algorithm 2: backups by remaining time, SRPT, small-job
# cloning), against Mantri. Same code as `straggler reproduce 000`. `STRAGGLER_QUICK=1`
# shrinks the sizes; outputs go to `$STRAGGLER_NOTEBOOK_OUT` (default `notebooks/out/`).

# %%
import os
from pathlib import Path

import pandas as pd

from pipelines import ReproduceConfig, reproduce
from sim_bridge.experiments import pareto_unit_mean
from sim_bridge.theory import cloning_cutoff_load, ese_sigma_star, sda_sigma_star

QUICK = os.environ.get("STRAGGLER_QUICK", "0") not in ("", "0")
OUT = Path(os.environ.get("STRAGGLER_NOTEBOOK_OUT", "notebooks/out")) / "seed_000"
OUT.mkdir(parents=True, exist_ok=True)
print("quick mode" if QUICK else "full mode", "->", OUT)

# %% [markdown]
# ## The analysis the policies use (sim_bridge.theory)

# %%
pd.Series(
    {
        "cloning cut-off load omega_U (alpha=2)": cloning_cutoff_load(2.0),
        "SDA sigma* (eq. 28, alpha=2)": sda_sigma_star(2.0),
        "ESE sigma* (eqs. 30-33, Pareto alpha=2)": ese_sigma_star(pareto_unit_mean(2.0)),
    }
)

# %% [markdown]
# ## Fig. 5 (one job, sigma sweep) and Figs. 2 / 6 (multi-job CDFs)

# %%
summary = reproduce(
    ReproduceConfig("000", str(OUT), quick=QUICK, seed=0, progress=False), overwrite=True
)
pd.read_csv(OUT / "comparison.csv")

# %%
from IPython.display import Image, display  # noqa: E402

for name in ("fig5_sigma_sweep.png", "fig2_cdfs.png", "fig6_cdfs.png"):
    display(Image(filename=str(OUT / name)))

# %%
pd.read_csv(OUT / "fig2_fig6_summary.csv")
