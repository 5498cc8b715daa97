"""Experiments of the seed papers run on the event engine (``straggler reproduce`` uses them).

* :func:`single_job`: one job of ``n`` i.i.d. tasks under ``pi_keep`` / ``pi_kill``
  (seed 002, eq. 4 cost), measured on the engine itself.
* :func:`xu_lau_jobs`, :func:`run_cluster`, :func:`sigma_sweep`: the multi-job and single-job
  settings of seeds 000 / 001 (Pareto task times, one slot per machine).
* :func:`deadline_jobs`, :func:`pocd_experiment`: seed 003's PoCD comparison of Shed+, Shed,
  Dolly, Hopper and Hadoop speculation.
"""

from sim_bridge.experiments._deadline import POCD_POLICIES, deadline_jobs, pocd_experiment
from sim_bridge.experiments._single_job import EmpiricalDistribution, run_seeds, single_job
from sim_bridge.experiments._xu_lau import (
    SlotHold,
    pareto_unit_mean,
    run_cluster,
    sigma_sweep,
    xu_lau_jobs,
)

__all__ = [
    "POCD_POLICIES",
    "EmpiricalDistribution",
    "SlotHold",
    "deadline_jobs",
    "pareto_unit_mean",
    "pocd_experiment",
    "run_cluster",
    "run_seeds",
    "sigma_sweep",
    "single_job",
    "xu_lau_jobs",
]
