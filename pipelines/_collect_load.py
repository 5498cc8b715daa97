"""Offered and realised load of a collect run: base work, or the attempts' run time, over
the cluster's slot-seconds (part of :mod:`pipelines._collect`)."""

from __future__ import annotations


def offered_load(workload, nodes: int, slots: int, hours: float) -> float:
    """Nominal offered load: the workload's base work over the cluster's slot-seconds.

    Base work is in nominal seconds (a task's duration on an idle, average node); contention,
    node factors and noise make real run times longer, so a nominal load near 1 already
    saturates the cluster and queueing then dominates job completion times.

    Examples
    --------
    >>> from sim_bridge import JobSpec, Workload
    >>> w = Workload("X", [JobSpec("a", 0.0, [1800.0, 1800.0])])
    >>> offered_load(w, nodes=1, slots=2, hours=0.5)
    1.0
    """
    work = sum(float(sum(j.map_work)) + float(sum(j.reduce_work)) for j in workload.jobs)
    return work / (nodes * slots * hours * 3600.0)


def realised_load(tasks, nodes: int, slots: int, hours: float, groups=None) -> dict:
    """Realised load: the run time of every attempt over the cluster's slot-seconds.

    Where :func:`offered_load` counts base work (an idle, average node, no noise), this
    counts what the attempts really ran in a simulation: contention, slow nodes, noise and
    copies included. A realised load above 1 means the window's work needs more slot time
    than the window has, so the queue grows and queueing dominates job completion times.

    Parameters
    ----------
    tasks : DataFrame
        A simulation's attempt table (``duration`` and ``job_id`` or ``workload``).
    nodes, slots : int
    hours : float
        The arrival window the work was submitted in.
    groups : mapping job_id -> key, optional
        Sum per key (default: per ``workload`` column).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"workload": ["A", "A", "B"], "duration": [1800.0, 1800.0, 360.0]})
    >>> realised_load(t, nodes=1, slots=2, hours=0.5)
    {'A': 1.0, 'B': 0.1}
    """
    key = tasks["workload"] if groups is None else tasks["job_id"].map(groups)
    per = tasks["duration"].groupby(key.to_numpy(), sort=True).sum()
    capacity = nodes * slots * hours * 3600.0
    return {k: float(v) / capacity for k, v in per.items()}


def realised_by_request(tasks, workloads, loaded, nodes, slots, hours) -> dict[str, float]:
    """:func:`realised_load` per requested workload name (a workload that fell back to the
    synthetic one keeps its requested name; one with no attempt gets 0)."""
    owner = {j.job_id: req for req, w in zip(workloads, loaded, strict=True) for j in w.jobs}
    got = realised_load(tasks, nodes, slots, hours, groups=owner)
    return {req: got.get(req, 0.0) for req in workloads}
