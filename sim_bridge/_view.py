"""The view policies read: the clock, slots, jobs, attempts' progress, node counters.

:class:`SimView` is a read-only window on a running :class:`~sim_bridge._engine.Simulator`
(it reads the engine's state; it never changes the model). It is re-exported from
``sim_bridge._engine`` and ``sim_bridge``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import numpy as np

from sim_bridge._cluster import _CHUNK_MIN, COUNTER_NAMES
from sim_bridge._fair_order import FairOrder
from sim_bridge._jobs import profile_of
from sim_bridge._states import A_FINISHED, A_RUNNING

if TYPE_CHECKING:
    from sim_bridge._engine import Attempt, Job, Simulator

try:  # the progress loop in C (built by pip install; optional)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._progress_core import progress_list as _progress_c
except ImportError:  # pragma: no cover - an install without a C compiler
    _progress_c = None

__all__ = ["PROGRESS_IN_C", "FreeSlots", "SimView"]

PROGRESS_IN_C = True
"""Read :meth:`SimView.progress_many` through the compiled loop when it is built; False: the
Python loop (:meth:`SimView._progress_list_py`), its reference. The values are the same bit
for bit (``tests/test_progress_core.py``)."""

FreeSlots = Mapping[int, int]
"""Read-only mapping node -> number of free slots (only nodes with a free slot appear), in
least-recently-freed order."""


class SimView:
    """What policies may read: the clock, slots, jobs, attempts' progress, node counters.

    Progress is what a task tracker reports: the fraction of the task's input processed so
    far, computed analytically from the attempt's rate path (a copy launched with
    ``start_fraction`` starts at that fraction).
    """

    __slots__ = ("_sim", "_cache_t", "_cache")

    def __init__(self, sim: Simulator):
        self._sim = sim
        self._cache_t = -1.0
        self._cache: dict[int, np.ndarray] = {}

    # -- clock and slots
    @property
    def now(self) -> float:
        """The simulated clock (s)."""
        return self._sim.now

    @property
    def n_nodes(self) -> int:
        return self._sim.cluster.n_nodes

    @property
    def slots_per_node(self) -> int:
        return self._sim.cluster.slots

    @property
    def total_slots(self) -> int:
        return self._sim.cluster.n_nodes * self._sim.cluster.slots

    @property
    def free(self) -> FreeSlots:
        """node -> free slots (nodes with at least one), least recently freed first."""
        return self._sim._free_proxy

    @property
    def free_slot_count(self) -> int:
        return self._sim._n_free

    @property
    def running_count(self) -> int:
        """Attempts running in the whole cluster."""
        return self._sim._n_running

    @property
    def copies_running(self) -> int:
        """Live attempts that are copies (attempt index >= 1) in the whole cluster."""
        return self._sim._n_copies

    def node_running(self, node: int) -> int:
        """Attempts running on ``node``."""
        return self._sim._node_running[node]

    def node_attempts(self, node: int) -> list[Attempt]:
        """Attempts running on ``node`` (launch order)."""
        return list(self._sim._node_live[node].values())

    # -- jobs
    def active_jobs(self) -> Iterator[Job]:
        """Jobs that arrived and are not finished, in arrival order."""
        return iter(self._sim._active.values())

    def waiting_jobs(self):
        """Active jobs with at least one waiting task, in arrival order (a live view: iterate
        it within the hook, do not keep it)."""
        sim = self._sim
        if sim._waiting_dirty:
            sim._waiting = dict(sorted(sim._waiting.items()))
            sim._waiting_dirty = False
        return sim._waiting.values()

    def fair_waiting_jobs(self) -> Iterator[Job]:
        """The jobs of :meth:`waiting_jobs` with the fewest running attempts first, ties by
        arrival: the Fair Scheduler's order as the pass begins, drawn lazily (kept by the
        engine, ``sim_bridge._fair_order.FairOrder``: a pass that looks at k jobs costs
        O(k log J), not O(J)). Iterate it within the hook, do not keep it: the next call ends
        it."""
        sim = self._sim
        order = sim._fair_order
        if order is None:
            order = sim._fair_order = FairOrder(sim._waiting)
        return order.ascending(sim._waiting)

    def waiting_count(self) -> int:
        """Number of waiting tasks in the cluster."""
        return self._sim._n_waiting

    def running_attempts(self) -> Iterator[Attempt]:
        """Every live attempt, job by job in arrival order."""
        for job in self._sim._active.values():
            yield from job.running.values()  # type: ignore[attr-defined]  # set in Job.__init__

    # -- progress
    def progress(self, attempt: Attempt) -> float:
        """Fraction of the task done by ``attempt`` now (its ``start_fraction`` included)."""
        if attempt.state == A_FINISHED:
            return 1.0
        sim = self._sim
        t = attempt.end_time  # set once the attempt is over
        if attempt.state == A_RUNNING or t is None:
            t = sim.now
        sf = attempt.start_fraction
        prog = attempt._prog
        if attempt._work <= 0.0:  # duration override: linear progress
            span = attempt._end - attempt.launch_time
            frac = 1.0 if span <= 0 else (t - attempt.launch_time) / span
        elif attempt.state != A_RUNNING and prog is not None and prog[0] == t:
            # work done at its end, read then (a killed attempt of a streamed run books it
            # when it closes): what _work_done(attempt, t) gives from that read
            frac = prog[1] / attempt._work
        else:
            frac = sim._work_done(attempt, t) / attempt._work
        return sf + (1.0 - sf) * min(max(frac, 0.0), 1.0)

    def progress_many(self, attempts) -> np.ndarray:
        """:meth:`progress` of several running attempts at once (vectorised per profile).

        An attempt under co-located demand whose last read (``_prog``) lies in the step it
        is still in is read inline: its work done grows by the memoised step rate times the
        time since that read, exactly what ``Cluster.work_with`` adds on that path (the same
        float operations, the same ``_prog`` update), without the three calls per attempt a
        speculation scan would make for each of the cluster's live attempts.

        Examples
        --------
        A scan reading every live attempt twice, in one call and one by one:

        >>> import sim_bridge
        >>> from sim_bridge.policies.base import SpeculationPolicy
        >>> class Watch(SpeculationPolicy):
        ...     name, interval, same = "watch", 7.0, []
        ...     def on_tick(self, view):
        ...         live = list(view.running_attempts())
        ...         many = view.progress_many(live).tolist()
        ...         self.same.append(many == [view.progress(a) for a in live])
        ...         return []
        >>> jobs = [sim_bridge.JobSpec(f"j{i}", 5.0 * i, [40.0] * 6, [30.0]) for i in range(4)]
        >>> res = sim_bridge.simulate(jobs, Watch(), nodes=2, slots=4, engine="python")
        >>> len(Watch.same) > 5 and all(Watch.same)
        True
        """
        return np.array(self._progress_list(attempts), dtype=float)

    def _scan_clock(self) -> tuple[float, dict, int, bool]:
        """The clock of a progress read: ``now``, the cache of ``cum_at_nodes`` per profile
        at ``now`` (reset when the clock moved), the step of ``now``, and whether a read in
        the memoised step may be done inline: the step of ``now`` inside the paths
        (``work_with`` would extend them otherwise) on a non-ideal cluster (``work_with``'s
        ideal branch differs)."""
        now = self._sim.now
        if self._cache_t != now:
            self._cache_t = now
            self._cache = {}
        cluster = self._sim.cluster
        k_now = int(now // cluster.dt)
        return now, self._cache, k_now, not cluster.ideal and k_now < cluster.horizon_steps

    def _progress_list(self, attempts) -> list[float]:
        """:meth:`progress_many` as a list of floats: the compiled loop
        (``sim_bridge._progress_core``) when built, else :meth:`_progress_list_py`."""
        args = self._progress_args()
        if args is None:
            return self._progress_list_py(attempts)
        if type(attempts) is not list:
            attempts = list(attempts)
        return _progress_c(attempts, *args)

    def _progress_args(self) -> tuple | None:
        """What the compiled progress loop reads at the clock, after the attempts (the
        arguments of ``sim_bridge._progress_core.progress_list`` and ``late_scan``), or None
        when the loop is not built or :data:`PROGRESS_IN_C` is off."""
        if _progress_c is None or not PROGRESS_IN_C:
            return None
        sim = self._sim
        cluster = sim.cluster
        now, cache, k_now, inline = self._scan_clock()
        return (
            now,
            self.progress,
            sim._work_done,
            cluster,
            cache,
            inline,
            cluster.dt,
            k_now,
            cluster._trates,
            _CHUNK_MIN,
        )

    def _progress_list_py(self, attempts) -> list[float]:
        """:meth:`progress_many` as a list of floats (its loop in Python: the reference of
        the compiled one).

        The clamp to [0, 1] is written as comparisons, which give what
        ``min(max(frac, 0.0), 1.0)`` gives for every float (``-0.0`` and NaN pass through
        both), and the step test of an inline read is done once per distinct last-read time
        (most attempts were last read by the same scan, at the same instant).
        """
        sim = self._sim
        cluster = sim.cluster
        dt = cluster.dt
        now, cache, k_now, inline = self._scan_clock()
        work_done = sim._work_done
        running = A_RUNNING
        # the last distinct last-read time seen: is it in the step of now, and now - it
        seen_t0: float | None = None
        seen_ok = False
        seen_gap = 0.0
        out: list[float] = []
        append = out.append
        for a in attempts:
            if a.state != running:
                append(self.progress(a))
                continue
            work = a._work
            dem = a._dem
            if work <= 0.0:
                span = a._end - a.launch_time
                frac = 1.0 if span <= 0 else (now - a.launch_time) / span
            elif dem is not None:
                prog = a._prog
                memo = a._step_rate
                if inline and prog is not None and memo is not None and memo[0] == k_now:
                    t0 = prog[0]
                    if t0 != seen_t0:
                        seen_t0 = t0
                        seen_ok = t0 <= now and int(t0 // dt) == k_now
                        seen_gap = now - t0
                    if seen_ok and memo[1] is dem and a._seg_t <= t0:
                        # Cluster.work_with's loop for one step: 0.0 + rate * (t1 - t0)
                        done = prog[1] + (0.0 + memo[2] * seen_gap if t0 < now else 0.0)
                        a._prog = (now, done)
                        frac = done / work
                    else:
                        frac = work_done(a, now) / work
                else:
                    frac = work_done(a, now) / work
            else:
                pid = profile_of(a)
                cum = cache.get(pid)
                if cum is None:
                    cum = cache[pid] = cluster.cum_at_nodes(pid, now)
                frac = (a._seg_done + cum[a.node] - a._c0) / work
            if frac < 0.0:
                frac = 0.0
            elif frac > 1.0:
                frac = 1.0
            sf = a.start_fraction
            append(sf + (1.0 - sf) * frac)
        return out

    def progress_rate(self, attempt: Attempt) -> float:
        """Progress per second since launch (0 at the launch instant)."""
        el = self._sim.now - attempt.launch_time
        if el <= 0:
            return 0.0
        return (self.progress(attempt) - attempt.start_fraction) / el

    def elapsed(self, attempt: Attempt) -> float:
        """Seconds the attempt has run (until now, or until it ended)."""
        end = attempt.end_time  # set once the attempt is over
        if attempt.state == A_RUNNING or end is None:
            end = self._sim.now
        return end - attempt.launch_time

    # -- counters
    def node_counters(self, node: int) -> dict[str, float]:
        """The node's sysstat-like counters now (the same readings a launch would record)."""
        return dict(zip(COUNTER_NAMES, self.node_counter_values(node), strict=True))

    def node_counter_values(self, node: int) -> list[float]:
        """:meth:`node_counters` as a list in :attr:`counter_names` order (no mapping built:
        the cheapest read, for a policy that reads many nodes one by one)."""
        sim = self._sim
        if not (isinstance(node, (int, np.integer)) and 0 <= node < sim.cluster.n_nodes):
            raise ValueError(f"node must be in [0, {sim.cluster.n_nodes}), got {node!r}")
        sim._load_touch(node)
        l1, l5, l15 = sim._load
        return sim.cluster.counter_values_now(
            int(node),
            sim.now,
            sim._node_running[node],
            l1[node],
            l5[node],
            l15[node],
            sim._node_demand(node),
        )

    def node_counters_many(self, nodes) -> dict[str, np.ndarray]:
        """Counters of several nodes now, in one vectorised read (a monitoring sweep).

        Returns one array per counter name, in the order of ``nodes``; row ``i`` equals
        ``node_counters(nodes[i])``.
        """
        sim = self._sim
        n = sim.cluster.n_nodes
        idx = list(nodes)
        for node in idx:
            if not (isinstance(node, (int, np.integer)) and 0 <= node < n):
                raise ValueError(f"node must be in [0, {n}), got {node!r}")
        for node in idx:
            sim._load_touch(node)
        load = sim._load
        demand = None
        if sim._tenancy:
            demand = (
                np.array([sim._node_demand(i) or (0.0, 0.0, 0.0, 0.0) for i in idx], dtype=float)
                .reshape(len(idx), 4)
                .T
            )
        return sim.cluster.counters(
            np.array(idx, dtype=np.int64),
            np.full(len(idx), sim.now),
            np.array([sim._node_running[i] for i in idx], dtype=float),
            np.array([load[0][i] for i in idx]),
            np.array([load[1][i] for i in idx]),
            np.array([load[2][i] for i in idx]),
            demand,
        )

    @property
    def counter_names(self) -> tuple[str, ...]:
        return COUNTER_NAMES
