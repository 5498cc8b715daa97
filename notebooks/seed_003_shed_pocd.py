# ---
# jupytext:
#   text_representation:
#     extension: .py
#     format_name: percent
# ---

# %% [markdown]
# # Seed 003 — Shed / Shed+: deadline-aware speculation (PoCD) on our engine
#
# Shed+ (Algorithm 1) re-optimises extra attempts for stragglers every `theta` seconds or
# once a new job progressed `xi`, greedily raising the lowest PoCD, and starts new attempts
# from the straggler's byte offset. Compared with Shed, Dolly, Hopper and Hadoop speculation
# on the same arrivals (Figs. 4 and 6). Same code as `straggler reproduce 003`.
# `STRAGGLER_QUICK=1` shrinks the sizes.

# %%
import os
from pathlib import Path

import pandas as pd

from pipelines import ReproduceConfig, reproduce
from sim_bridge.theory import dolly_clone_count, pocd_new_job

QUICK = os.environ.get("STRAGGLER_QUICK", "0") not in ("", "0")
OUT = Path(os.environ.get("STRAGGLER_NOTEBOOK_OUT", "notebooks/out")) / "seed_003"
OUT.mkdir(parents=True, exist_ok=True)
print("quick mode" if QUICK else "full mode", "->", OUT)

# %% [markdown]
# ## Theorem 1: PoCD of a new 10-task job vs extra attempts (deadline 300 s, t_min 120 s)

# %%
pd.DataFrame(
    {
        "r": range(6),
        "PoCD (beta=1.5)": [pocd_new_job(10, 300.0, 120.0, 1.5, r) for r in range(6)],
        "Dolly clones c for p=r/10": [dolly_clone_count(max(0.05, r / 10), 10) for r in range(6)],
    }
)

# %% [markdown]
# ## PoCD on the engine

# %%
summary = reproduce(
    ReproduceConfig("003", str(OUT), quick=QUICK, seed=0, progress=False), overwrite=True
)
pd.read_csv(OUT / "comparison.csv")

# %%
from IPython.display import Image, display  # noqa: E402

display(Image(filename=str(OUT / "fig4_fig6_pocd.png")))
pd.read_csv(OUT / "fig6_pocd_by_load.csv")
