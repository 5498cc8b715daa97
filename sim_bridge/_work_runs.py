"""A stage's base work held as runs of equal values: what a :class:`~sim_bridge.JobSpec`
stores, so a workload's jobs cost memory by their distinct values, not by their tasks.

A replayed trace gives most of a stage's tasks one base work: SWIM's replay splits a job's
input into 64 MB blocks (every map but the last does the same work, every reduce the same),
and each Alibaba 2017 task's instances share its create and end times. Held as one float a
task, the FB-2010 day's 48,874 jobs took 131 MB before its first event (16.4M maps; measured
with ``tracemalloc`` on 2026-11-29), memory that grows with the tasks ever run, not with the
tasks alive. :func:`pack_work` keeps a stage as ``(values, counts)`` when that is at most a
quarter of its tasks, and :func:`unpack_work` gives the array back, bit for bit (runs are
found on the floats' bits, so ``-0.0`` and every NaN payload stay as they were).

Examples
--------
>>> import numpy as np
>>> w = np.array([21.3] * 99 + [4.5])
>>> packed = pack_work(w)
>>> packed[0].tolist(), packed[1].tolist()
([21.3, 4.5], [99, 1])
>>> bool(np.array_equal(unpack_work(packed), w)), work_size(packed)
(True, 100)
>>> pack_work(np.array([1.0, 2.0])).tolist()  # short or varied: kept as it is
[1.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "PACK_MIN_TASKS",
    "PackedWork",
    "pack_work",
    "unpack_work",
    "work_property",
    "work_size",
    "work_values",
]

#: stages with fewer tasks are kept as arrays (an array of 64 floats is 512 bytes, about what
#: the two arrays of its runs cost in object headers)
PACK_MIN_TASKS = 64

#: a stage's work: the array itself, or its runs ``(values, counts)``
PackedWork = np.ndarray | tuple[np.ndarray, np.ndarray]


def pack_work(w: np.ndarray) -> PackedWork:
    """``w`` (1-d float64) as runs ``(values, counts)`` when it has at least
    :data:`PACK_MIN_TASKS` items and at most a quarter as many runs; else ``w`` itself.

    Runs are maximal stretches of items with the same bits."""
    n = w.shape[0]
    if n < PACK_MIN_TASKS:
        return w
    bits = np.ascontiguousarray(w).view(np.uint64)
    starts = np.flatnonzero(bits[1:] != bits[:-1]) + 1
    if 4 * (starts.size + 1) > n:
        return w
    first = np.concatenate((np.zeros(1, np.intp), starts))
    counts = np.diff(np.append(first, n)).astype(np.int64)
    return w[first], counts


def unpack_work(p: PackedWork) -> np.ndarray:
    """The array :func:`pack_work` was given (a new, read-only array for runs; the same
    array otherwise)."""
    if isinstance(p, tuple):
        out = np.repeat(p[0], p[1])
        out.flags.writeable = False
        return out
    return p


def work_size(p: PackedWork) -> int:
    """How many tasks ``p`` holds, without unpacking it."""
    if isinstance(p, tuple):
        return int(p[1].sum())
    return int(p.shape[0])


def work_values(p: PackedWork) -> np.ndarray:
    """The values of ``p`` in their order, one per run (the array itself when unpacked):
    what its minimum, maximum and first bad value are read from."""
    return p[0] if isinstance(p, tuple) else p


def work_property(name: str) -> property:
    """The property that stands for a stage's dataclass field ``name`` (``JobSpec``'s
    ``map_work`` and ``reduce_work``, set on the class after ``@dataclass`` took the fields).
    Its setter (the generated ``__init__`` and ``dataclasses.replace`` go through it) stores
    the value as a 1-d float array under ``"_" + name`` in the instance's ``__dict__``,
    packed by :func:`pack_work`; its getter gives :func:`unpack_work` of it.

    Examples
    --------
    >>> class Stage:
    ...     work = work_property("work")
    >>> s = Stage()
    >>> s.work = [2.0] * 100
    >>> s.work.shape, s.work.flags.writeable, s.__dict__["_work"][1].tolist()
    ((100,), False, [100])
    """
    key = "_" + name

    def get(self: object) -> np.ndarray:
        return unpack_work(self.__dict__[key])

    def put(self: object, value: Sequence[float] | np.ndarray) -> None:
        self.__dict__[key] = pack_work(np.asarray(value, dtype=float).ravel())

    stage = name.removesuffix("_work")
    return property(get, put, doc=f"Base work of each task of the {stage} stage (s).")
