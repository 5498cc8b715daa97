# ---
# jupytext:
#   text_representation:
#     extension: .py
#     format_name: percent
# ---

# %% [markdown]
# # Seed 001 — Xu & Lau: ESE's threshold sigma for one large job
#
# One job of 10,000 tasks on 100 machines (scaled down in quick mode); ESE backs up a task
# when its remaining time exceeds `sigma E[x]`. The paper finds `sigma ~ 1.6` best for both
# Pareto(2) and exponential task times; the approximate analysis (eq. 25 of 001 / eqs. 30-33
# of 000) is `sim_bridge.theory.ese_expected_resource`. Same code as
# `straggler reproduce 001`. `STRAGGLER_QUICK=1` shrinks the sizes.

# %%
import os
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from pipelines import ReproduceConfig, reproduce
from sim_bridge.theory import ese_expected_resource, ese_sigma_star

QUICK = os.environ.get("STRAGGLER_QUICK", "0") not in ("", "0")
OUT = Path(os.environ.get("STRAGGLER_NOTEBOOK_OUT", "notebooks/out")) / "seed_001"
OUT.mkdir(parents=True, exist_ok=True)
print("quick mode" if QUICK else "full mode", "->", OUT)

# %% [markdown]
# ## The analysis: expected resource of one task vs sigma

# %%
sig = np.linspace(0.6, 4.0, 8 if QUICK else 35)
curves = pd.DataFrame(
    {
        "sigma": sig,
        "Exp(1)": [ese_expected_resource(s, stats.expon()) for s in sig],
        "Pareto(2), mean 1": [
            ese_expected_resource(s, stats.pareto(b=2.0, scale=0.5)) for s in sig
        ],
    }
)
print("sigma* Exp(1):", ese_sigma_star(stats.expon()))
curves.round(4)

# %% [markdown]
# ## Engine: resource and flowtime vs sigma (Figs. 3-5)

# %%
summary = reproduce(
    ReproduceConfig("001", str(OUT), quick=QUICK, seed=0, progress=False), overwrite=True
)
pd.read_csv(OUT / "comparison.csv")

# %%
from IPython.display import Image, display  # noqa: E402

display(Image(filename=str(OUT / "fig3_4_5_sigma_sweep.png")))
pd.read_csv(OUT / "sigma_sweep.csv")
