"""Closed forms, numerical integrals, estimators and optimisers from the seed papers.

Pure functions, no simulator needed: single-fork replication (seed 002), Xu & Lau's SCA /
SDA / ESE analysis (seeds 000 and 001) and the deadline-aware PoCD analysis of Shed /
Shed+ and Dolly's clone count (seed 003). See ``NOTES.md`` beside this file for the source
equation of every function and the places where a garbled formula was re-derived.
"""

from ._bootstrap import BootstrapEstimate, bootstrap_single_fork
from ._policy_choice import SingleForkChoice, choose_single_fork_policy
from ._single_fork import (
    keep_or_kill,
    pareto_single_fork,
    shifted_exp_single_fork,
    single_fork_analytic,
)

__all__ = [
    "BootstrapEstimate",
    "SingleForkChoice",
    "bootstrap_single_fork",
    "choose_single_fork_policy",
    "keep_or_kill",
    "pareto_single_fork",
    "shifted_exp_single_fork",
    "single_fork_analytic",
]
