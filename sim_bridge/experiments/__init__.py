"""Experiments of the seed papers run on the event engine (``straggler reproduce`` uses them).

* :func:`single_job`: one job of ``n`` i.i.d. tasks under ``pi_keep`` / ``pi_kill``
  (seed 002, eq. 4 cost), measured on the engine itself.
"""

from sim_bridge.experiments._single_job import EmpiricalDistribution, run_seeds, single_job

__all__ = ["EmpiricalDistribution", "run_seeds", "single_job"]
