"""Closed forms, numerical integrals, estimators and optimisers from the seed papers.

Pure functions, no simulator needed: single-fork replication (seed 002), Xu & Lau's SCA /
SDA / ESE analysis (seeds 000 and 001) and the deadline-aware PoCD analysis of Shed /
Shed+ and Dolly's clone count (seed 003). See ``NOTES.md`` beside this file for the source
equation of every function and the places where a garbled formula was re-derived.
"""

from ._bootstrap import BootstrapEstimate, bootstrap_single_fork
from ._deadline_clones import deadline_clone_cost, deadline_clone_counts, deadline_miss_terms
from ._pocd import (
    ShedJob,
    dolly_clone_count,
    dolly_job_miss_probability,
    pareto_shape_from_remaining,
    pocd_new_job,
    pocd_running_job,
    shed_plus_allocation,
    task_pocd,
)
from ._policy_choice import SingleForkChoice, choose_single_fork_policy
from ._single_fork import (
    keep_or_kill,
    pareto_single_fork,
    shifted_exp_single_fork,
    single_fork_analytic,
)
from ._speculation_sigma import (
    ese_expected_resource,
    ese_sigma_star,
    sda_expected_resource,
    sda_optimal_copies,
    sda_sigma_star,
    sda_straggler_cost,
)
from ._xu_lau import (
    cloned_task_delay,
    cloning_cutoff_load,
    cloning_cutoff_rate,
    ese_is_small_job,
    ese_small_job_clones,
    mg1_task_delay,
    sca_clone_counts,
    sca_job_value,
    sca_relaxed_solution,
)

__all__ = [
    "BootstrapEstimate",
    "ShedJob",
    "SingleForkChoice",
    "bootstrap_single_fork",
    "choose_single_fork_policy",
    "cloned_task_delay",
    "cloning_cutoff_load",
    "cloning_cutoff_rate",
    "deadline_clone_cost",
    "deadline_clone_counts",
    "deadline_miss_terms",
    "dolly_clone_count",
    "dolly_job_miss_probability",
    "ese_expected_resource",
    "ese_is_small_job",
    "ese_sigma_star",
    "ese_small_job_clones",
    "keep_or_kill",
    "mg1_task_delay",
    "pareto_shape_from_remaining",
    "pareto_single_fork",
    "pocd_new_job",
    "pocd_running_job",
    "sca_clone_counts",
    "sca_job_value",
    "sca_relaxed_solution",
    "sda_expected_resource",
    "sda_optimal_copies",
    "sda_sigma_star",
    "sda_straggler_cost",
    "shed_plus_allocation",
    "shifted_exp_single_fork",
    "single_fork_analytic",
    "task_pocd",
]
