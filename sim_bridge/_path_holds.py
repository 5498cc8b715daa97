"""Where the live attempts of a streamed run may still read the contention paths from.

A streamed run's engine tells its cluster, every few simulated minutes, the oldest time its
live attempts may still read the background levels (``Cluster.hold``), so that older steps
can go (:meth:`sim_bridge._engine.Simulator._hold_paths`). :func:`levels_read_from` is where
one attempt may read from; :func:`scan_holds` turns a scan of the live attempts into the
cluster's hold and the nodes it pins.

An attempt under co-located demand integrates its work step by step over its node's levels:

- its progress reads go on from its last read in the segment (``_prog``: every read, in
  Python or C, goes on from there when it lies in the segment), else from the segment's
  start (``_seg_t``: its launch, or where its work done was last booked);
- a deferred end solve (``_solve``) starts where it was deferred;
- a solve that stopped at the end of the paths (``_ckpt``, an ``EV_CHECK``) goes on with its
  chunk of steps, whose first step may lie before the stop.

An attempt without co-located demand reads its profile's rates and running sums at the
clock only (held apart: ``Cluster.hold``'s ``rates_from``). A few attempts run for hours under
unchanged demand; holding every node's levels from their segments' starts kept hours of the
whole cluster's paths (1 MB a step on 33,000 nodes). An attempt that may read from longer ago
than ``pin_after`` seconds pins its own node instead (``Cluster.hold``'s ``nodes``: that
node's levels are kept aside, 32 bytes a step).

Examples
--------
>>> from sim_bridge._jobs import Attempt, Job, Task
>>> job = Job()
>>> job.job_id, job.uid, job.finish_time = "j", 0, None
>>> task = Task(0, job, 0, 0, "map", 10.0, 0.5)
>>> a = Attempt(0, task, 0, node=4, launch_time=100.0, start_fraction=0.0)
>>> a._dem = (0.1, 0.0, 0.0, 0.0)
>>> levels_read_from(a, 60.0)
100.0
>>> a._prog = (400.0, 3.0)  # read at 400 s: the next reads go on from there
>>> levels_read_from(a, 60.0)
400.0
>>> job.running = {0: a}
>>> scan_holds([job], now=4000.0, dt=60.0, pin_after=1800.0)  # read from 400 s: pinned
(4000.0, {4: 400.0})
>>> scan_holds([job], now=4000.0, dt=60.0, pin_after=7200.0)
(400.0, {})
"""

from __future__ import annotations

from collections.abc import Iterable

from sim_bridge._jobs import Attempt, Job

__all__ = ["levels_read_from", "scan_holds"]


def levels_read_from(att: Attempt, dt: float) -> float:
    """The oldest time whose levels the running attempt ``att`` (under co-located demand)
    may still read: its last progress read in its segment, else the segment's start, or
    earlier where a pending solve starts (see the module doc)."""
    s = att._seg_t
    prog = att._prog
    if prog is not None and prog[0] > s:  # every read goes on from there
        s = prog[0]
    pend = att._solve
    if pend is not None and pend[1] < s:
        s = pend[1]
    stop = att._ckpt
    if stop is not None and len(stop.state) == 3 and stop.state[0] * dt < s:
        s = stop.state[0] * dt  # the first step of the chunk it goes on with
    return s


def scan_holds(
    jobs: Iterable[Job], now: float, dt: float, pin_after: float
) -> tuple[float, dict[int, float]]:
    """The cluster's hold for the live attempts of ``jobs`` at ``now``: the oldest time any
    of them may read from, except those reading from more than ``pin_after`` seconds ago,
    which pin their node (``{node: time}``) instead."""
    t = now
    cut = now - pin_after
    pins: dict[int, float] = {}
    for job in jobs:
        for a in job.running.values():
            if a._dem is None:
                continue
            s = levels_read_from(a, dt)
            if s >= t:
                continue
            if s < cut:
                node = a.node
                if s < pins.get(node, now):
                    pins[node] = s
            else:
                t = s
    return t, pins
