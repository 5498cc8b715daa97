"""How loaded a cluster is: the base work that arrives (offered load) and the slot time the
attempts took (occupancy), hour by hour (used by :mod:`pipelines._simulate_sizing` and
``straggler simulate``'s summary).

The offered load counts a job in the hour it arrives, at its base work (an idle, average
node); the occupancy counts each attempt's run, copies included, in the hours it ran.
A busiest-hour occupancy near 1 means tasks waited for slots.

Examples
--------
>>> from sim_bridge import JobSpec, Workload
>>> w = Workload("X", [JobSpec("a", 0.0, [3600.0] * 4), JobSpec("b", 4000.0, [3600.0])])
>>> p = offered_load_profile([w], nodes=2, slots=1, hours=2.0)
>>> p.window, p.busiest, p.busiest_bin
(1.25, 2.0, (0.0, 3600.0))
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Length of the bins whose busiest one decides (seconds): an hour.
BIN_SECONDS = 3600.0


def job_base_work(job: Any) -> float:
    """A job's base work: the sum of its tasks' nominal seconds (maps and reduces).

    Examples
    --------
    >>> from sim_bridge import JobSpec
    >>> job_base_work(JobSpec("j", 0.0, [2.0, 3.0], [5.0]))
    10.0
    """
    return float(np.sum(job.map_work)) + float(np.sum(job.reduce_work))


@dataclass(frozen=True)
class ArrivalLoad:
    """Slot time counted by the hour its job arrived in, over a cluster's slot-seconds:
    base work (:func:`offered_load_profile`) or the attempts' run time
    (:func:`realised_by_arrival`)."""

    #: the window's slot time over its slot-seconds
    window: float
    #: the busiest bin's slot time over that bin's slot-seconds
    busiest: float
    #: start and end (seconds) of the busiest bin
    busiest_bin: tuple[float, float]
    #: the window's slot time (slot-seconds)
    amount: float


def arrival_bins(hours: float) -> tuple[float, np.ndarray]:
    """The bins of a window of ``hours``: their width (an hour, or the window when it is
    shorter) and their lengths. A part-hour at the end joins the hour before it, so that a
    few minutes' arrivals are never weighed as a busiest hour of their own.

    Examples
    --------
    >>> arrival_bins(2.5)
    (3600.0, array([3600., 5400.]))
    >>> arrival_bins(0.25)
    (900.0, array([900.]))
    """
    if isinstance(hours, bool) or not isinstance(hours, (int, float, np.floating)):
        raise ValueError(f"parameter hours must be a number > 0, got {hours!r}")
    span = float(hours) * 3600.0
    if not (span > 0 and math.isfinite(span)):
        raise ValueError(f"parameter hours must be > 0, got {hours!r}")
    width = min(BIN_SECONDS, span)
    n_bins = max(1, math.floor(span / width + 1e-9))
    lengths = np.full(n_bins, width)
    lengths[-1] = span - width * (n_bins - 1)
    return width, lengths


def window_hours(workloads: Sequence[Any], hours: float | None) -> float:
    """The window of arrivals: ``hours``, or (None: the whole trace) its last arrival's hour,
    rounded up to whole hours.

    Examples
    --------
    >>> from sim_bridge import JobSpec, Workload
    >>> w = Workload("X", [JobSpec("a", 0.0, [1.0]), JobSpec("b", 5400.0, [1.0])])
    >>> window_hours([w], None), window_hours([w], 0.5)
    (2.0, 0.5)
    """
    if hours is not None:
        return hours
    last = max((job.submit_time for w in workloads for job in w.jobs), default=0.0)
    return float(max(1, math.ceil(last / 3600.0 + 1e-12)))


def _arrival_load(amount: np.ndarray, nodes: int, slots: int, hours: float) -> ArrivalLoad:
    for name, v in (("nodes", nodes), ("slots", slots)):
        if not (isinstance(v, (int, np.integer)) and v >= 1):
            raise ValueError(f"parameter {name} must be an integer >= 1, got {v!r}")
    width, lengths = arrival_bins(hours)
    per_bin = amount / (lengths * nodes * slots)
    top = int(np.argmax(per_bin))
    return ArrivalLoad(
        window=float(amount.sum() / (lengths.sum() * nodes * slots)),
        busiest=float(per_bin[top]),
        busiest_bin=(top * width, top * width + float(lengths[top])),
        amount=float(amount.sum()),
    )


def _bin_of(submit: Any, width: float, n_bins: int) -> Any:
    """The bin a job arriving at ``submit`` counts in (arrivals past the window: the last)."""
    return np.clip(np.floor_divide(submit, width), 0, n_bins - 1).astype(np.int64)


def offered_load_profile(
    workloads: Sequence[Any], nodes: int, slots: int, hours: float
) -> ArrivalLoad:
    """The offered load of ``workloads`` (their jobs' base work, by arrival) on ``nodes`` x
    ``slots``, over the window of ``hours`` and over its busiest hour.

    A job counts in the hour it arrives in (:func:`arrival_bins`), whenever its tasks run.

    Examples
    --------
    >>> from sim_bridge import JobSpec, Workload
    >>> w = Workload("X", [JobSpec("a", 10.0, [900.0, 900.0])])
    >>> offered_load_profile([w], nodes=1, slots=1, hours=0.5).busiest
    1.0
    """
    width, lengths = arrival_bins(hours)
    jobs = [job for w in workloads for job in w.jobs]
    submit = np.fromiter((j.submit_time for j in jobs), float, len(jobs))
    work = np.fromiter(map(job_base_work, jobs), float, len(jobs))
    amount = np.bincount(_bin_of(submit, width, lengths.size), work, lengths.size)
    return _arrival_load(amount, nodes, slots, hours)


def realised_by_arrival(
    parts: Iterable[tuple[np.ndarray, np.ndarray]], nodes: int, slots: int, hours: float
) -> ArrivalLoad:
    """The realised load by arrival hour: the attempts' run time (copies included), each in
    the hour its job arrived in, from ``(submit_time, duration)`` array pairs -- the measure
    :func:`offered_load_profile` counts in base work, and ``--load`` sizes for.

    Examples
    --------
    >>> part = (np.array([0.0, 10.0, 4000.0]), np.array([1800.0, 1800.0, 900.0]))
    >>> r = realised_by_arrival([part], nodes=1, slots=1, hours=2.0)
    >>> r.window, r.busiest, r.busiest_bin
    (0.625, 1.0, (0.0, 3600.0))
    """
    width, lengths = arrival_bins(hours)
    amount = np.zeros(lengths.size)
    for submit, duration in parts:
        k = _bin_of(np.asarray(submit, dtype=float), width, lengths.size)
        amount += np.bincount(k, np.asarray(duration, dtype=float), lengths.size)
    return _arrival_load(amount, nodes, slots, hours)


def busy_before(launch: np.ndarray, end: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Slot-seconds the attempts ``[launch, end)`` ran before each of ``edges``.

    ``sum(clip(t - launch, 0, end - launch))`` for each ``t`` of ``edges``: the running count
    integrated up to ``t``, from sorted launches and ends (O(n log n)). Busy time is
    additive over attempts, so a trace read in parts sums its parts' arrays.

    Examples
    --------
    >>> busy_before(np.array([0.0, 5.0]), np.array([10.0, 7.0]), np.array([0.0, 6.0, 20.0]))
    array([ 0.,  7., 12.])
    """
    launch = np.sort(np.asarray(launch, dtype=float))
    end = np.sort(np.asarray(end, dtype=float))
    edges = np.asarray(edges, dtype=float)
    if launch.shape != end.shape:
        raise ValueError(f"launch and end differ in length: {launch.size} and {end.size}")
    cum_l = np.concatenate(([0.0], np.cumsum(launch)))
    cum_e = np.concatenate(([0.0], np.cumsum(end)))
    n_l = np.searchsorted(launch, edges, side="left")  # launched before t
    n_e = np.searchsorted(end, edges, side="left")  # ended before t
    return (n_l * edges - cum_l[n_l]) - (n_e * edges - cum_e[n_e])


@dataclass(frozen=True)
class Occupancy:
    """The attempts' slot time by hour, over a cluster's slot-seconds."""

    #: the busiest hour's share of the cluster's slot-seconds
    busiest: float
    #: start and end (seconds) of the busiest hour
    busiest_bin: tuple[float, float]
    #: every hour's share, from 0 to the last end
    hourly: list[float]


def hourly_occupancy(
    parts: Iterable[tuple[np.ndarray, np.ndarray]], nodes: int, slots: int
) -> Occupancy:
    """Each hour's busy slot-seconds over the cluster's, from ``(launch, end)`` array pairs
    (a whole table, or a streamed trace's row groups: memory is one part's), from 0 to the
    hour of the last end.

    Examples
    --------
    >>> part = (np.array([0.0, 0.0, 3600.0]), np.array([3600.0, 1800.0, 5400.0]))
    >>> occ = hourly_occupancy([part], nodes=1, slots=2)
    >>> occ.hourly, occ.busiest_bin
    ([0.75, 0.25], (0.0, 3600.0))
    """
    busy = np.zeros(2)  # at the edges 0, 1 h, ...: beyond its last, each part's is constant
    for launch, end in parts:
        launch, end = np.asarray(launch, dtype=float), np.asarray(end, dtype=float)
        if not end.size:
            continue
        n = max(1, math.ceil(float(end.max()) / BIN_SECONDS)) + 1
        if n > busy.size:
            busy = np.concatenate((busy, np.full(n - busy.size, busy[-1])))
        mine = busy_before(launch, end, np.arange(n) * BIN_SECONDS)
        busy[:n] += mine
        busy[n:] += mine[-1]
    edges = np.arange(busy.size) * BIN_SECONDS
    share = np.diff(busy) / (BIN_SECONDS * nodes * slots)
    top = int(np.argmax(share))
    return Occupancy(
        busiest=float(share[top]),
        busiest_bin=(float(edges[top]), float(edges[top + 1])),
        hourly=[float(x) for x in share],
    )


def trace_loads(trace: Any, nodes: int, slots: int, hours: float) -> tuple[Occupancy, ArrivalLoad]:
    """The :func:`hourly_occupancy` and the :func:`realised_by_arrival` of a simulation's
    attempts: a ``tasks`` table, or the path of a streamed trace, read one row group at a
    time (its ``submit_time``, ``launch_time``, ``end_time`` and ``duration``).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"submit_time": [0.0, 0.0], "launch_time": [0.0, 600.0],
    ...                   "end_time": [1800.0, 2400.0], "duration": [1800.0, 1800.0]})
    >>> occ, real = trace_loads(t, nodes=1, slots=1, hours=1.0)
    >>> occ.busiest, real.busiest
    (1.0, 1.0)
    """

    def pairs(a: str, b: str) -> Iterable[tuple[np.ndarray, np.ndarray]]:
        if not isinstance(trace, (str, bytes)) and not hasattr(trace, "__fspath__"):
            yield trace[a].to_numpy(), trace[b].to_numpy()
            return
        import pyarrow.parquet as pq

        f = pq.ParquetFile(trace)
        for i in range(f.num_row_groups):  # one row group in memory at a time
            g = f.read_row_group(i, columns=[a, b])
            yield g.column(0).to_numpy(), g.column(1).to_numpy()

    occ = hourly_occupancy(pairs("launch_time", "end_time"), nodes, slots)
    return occ, realised_by_arrival(pairs("submit_time", "duration"), nodes, slots, hours)
