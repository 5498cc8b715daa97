"""What the live jobs hold: a census of a running simulator's live jobs by the job's field
they hang from, and of the speculation policy's per-job state (``bench_day.py
--job-census H``).

Each object reachable from a live job's field (containers, slotted and plain objects, arrays)
is counted once, under the first field it is reached from, in the jobs' order; the walk
stops at other jobs, modules, classes and functions and at the simulator's own objects (its
cluster, policies and view), so a task's attempt is counted under ``job.tasks`` or
``job.running``, whichever comes first. A NumPy array counts its buffer when it owns it; a
``memoryview`` (a file mapping's, :mod:`sim_bridge._row_maps`) only its header: its pages are
the kernel's. A policy's per-stage run times (``policy._durs[(job uid, stage)]``) are
counted per field under ``policy._durs.<field>``. Sizes are ``sys.getsizeof`` plus the
collector's 16-byte header for tracked objects; small ints (-5 to 256) are shared and not
counted. Not counted: allocator slack and what the process holds outside the live jobs.

Examples
--------
>>> from sim_bridge._jobs import Job
>>> job = Job()
>>> job.job_id, job.uid, job.n_tasks, job.finish_time = "j", 0, 2, None
>>> job.running, job.tasks = {}, [1.5, 2.5]
>>> sim = type("Sim", (), {"_active": {0: job}})()
>>> c = job_census(sim)
>>> c["jobs"], c["tasks"], sorted(row[0] for row in c["rows"])
(1, 2, ['Job', 'job.job_id', 'job.running', 'job.tasks'])
"""

from __future__ import annotations

import types
from array import array
from collections import Counter
from typing import Any

import numpy as np
from _attempt_census import census_table, object_size

__all__ = ["format_job_census", "job_census"]

_LEAVES = (str, bytes, float, int, bool, complex, np.ndarray, memoryview, np.generic, array)


def _named_fields(o: Any) -> list[tuple[str, Any]]:
    """``(name, value)`` of ``o``'s slots that are set (a compiled attempt's fields that hold
    objects), then of its ``__dict__``."""
    out = []
    for cls in type(o).__mro__:
        for name in getattr(cls, "__slots__", getattr(cls, "OBJECT_FIELDS", ())):
            try:
                out.append((name, getattr(o, name)))
            except AttributeError:
                pass
    d = getattr(o, "__dict__", None)
    if isinstance(d, dict):
        out.extend(d.items())
    return out


def _walk(root: Any, key: str, by: Counter, count: Counter, seen: set[int], stop: tuple) -> None:
    stack = [root]
    while stack:
        o = stack.pop()
        if o is None or id(o) in seen or isinstance(o, stop):
            continue
        if type(o) is int and -5 <= o <= 256:
            continue
        seen.add(id(o))
        by[key] += object_size(o)
        count[key] += 1
        if isinstance(o, _LEAVES):
            continue
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        else:
            stack.extend(v for _, v in _named_fields(o))


def job_census(sim: Any) -> dict:
    """The bytes held by the live jobs of ``sim`` (a ``Simulator`` between events) as
    ``{"jobs": n, "tasks": n, "rows": [(what, bytes, objects), ...]}``, largest first
    (``tasks``: all the live jobs' tasks, done, running and waiting)."""
    from sim_bridge._jobs import Job

    jobs = list(sim._active.values())
    own = [getattr(sim, name, None) for name in ("cluster", "speculation", "placement", "view")]
    own_types = tuple({type(o) for o in own if o is not None})
    stop = (Job, types.ModuleType, type, types.FunctionType, *own_types)
    by: Counter = Counter()
    count: Counter = Counter()
    seen: set[int] = set()
    for job in jobs:
        by["Job"] += object_size(job)
        count["Job"] += 1
        seen.add(id(job))
        for name, value in _named_fields(job):
            if name != "spec":  # the workload's, not the run's
                _walk(value, f"job.{name}", by, count, seen, stop)
    durs = getattr(getattr(sim, "speculation", None), "_durs", None)
    if isinstance(durs, dict):
        live = {job.uid for job in jobs}
        for (uid, _stage), d in durs.items():
            if uid in live:
                for name, value in _named_fields(d):
                    _walk(value, f"policy._durs.{name}", by, count, seen, stop)
    rows = [(k, v, count[k]) for k, v in by.most_common()]
    return {"jobs": len(jobs), "tasks": sum(j.n_tasks for j in jobs), "rows": rows}


def format_job_census(c: dict) -> str:
    """The census as a table: MB, objects and bytes per live task."""
    head = f"{c['jobs']:,} live jobs of {c['tasks']:,} tasks"
    return census_table(head, c["rows"], c["tasks"], "task", 36)
