"""The event core: one loop over a heap of (time, seq) events; all state on the simulator.

Jobs arrive, their stages' tasks wait, the placement policy puts waiting tasks on free slots,
attempts run for a duration solved analytically at launch from the node's contention path
(``sim_bridge._cluster``) and the tasks sharing the node, and re-solved whenever that node's
tenants change (``sim_bridge.world``); the speculation policy copies, restarts and kills
attempts. A task completes with its first finished attempt; its other attempts are killed at
that instant.

An end solve under co-located demand is deferred (``EV_SOLVE``, see
``AttemptPhysics._defer``): with many slots per node most solves are superseded by the next
change of the node's tenants, and a deferred one keeps the heap sequence number it would have
had, so the events and the trace are the same bit for bit. A streaming run solves only within
the contention paths drawn so far: a solve whose work is not done by their end stops there
(``EV_CHECK``) and goes on when the clock gets there (``AttemptPhysics._go_on``), to the same
float, so its paths follow the clock and not the farthest end ever solved, and it gives the
in-memory run's events bit for bit.

The loop alone lives here (:class:`Simulator`: ``run``, ``_loop``, the heap, the stop checks);
its parts are mixins of it that hold no state of their own: the constructor's setup
(:class:`~sim_bridge._sim_setup.SimulatorSetup`, its base), job arrivals
(:class:`~sim_bridge._sim_arrivals.JobArrivals`), policy actions
(:class:`~sim_bridge._sim_actions.PolicyActions`), the attempt lifecycle
(:class:`~sim_bridge._sim_lifecycle.AttemptLifecycle`) and the attempt physics
(:class:`~sim_bridge.world.AttemptPhysics`).
"""

from __future__ import annotations

import time
from typing import Any

from sim_bridge._closed_events import pass_over_stale
from sim_bridge._gc import gc_paused
from sim_bridge._jobs import Attempt, Job, Task
from sim_bridge._path_holds import scan_holds
from sim_bridge._progress_bar import advance_bar
from sim_bridge._sim_actions import PolicyActions
from sim_bridge._sim_arrivals import JobArrivals
from sim_bridge._sim_lifecycle import AttemptLifecycle
from sim_bridge._sim_setup import SimulatorSetup
from sim_bridge._states import (
    A_FINISHED,
    A_KILLED,
    A_RUNNING,
    EV_ARRIVAL,
    EV_CHECK,
    EV_FINISH,
    EV_SOLVE,
    EV_TICK,
)
from sim_bridge._view import FreeSlots, SimView
from sim_bridge.policies.base import PolicyError
from sim_bridge.world._attempts import AttemptPhysics

__all__ = ["Attempt", "FreeSlots", "Job", "SimView", "SimulationStopped", "Simulator", "Task"]

_OUTCOME = {A_FINISHED: "finished", A_KILLED: "killed"}
_CHECK_EVERY = 1024  # events between checks of the wall-clock limit and the sweeps
#: simulated seconds between two scans of the live attempts for the oldest step they may
#: read (:meth:`Simulator._hold_paths`); a hold older than it could be only keeps more
_HOLD_EVERY_S = 600.0
#: an attempt that may read its node's levels from longer ago than this pins that node
#: (``Cluster.hold``'s ``nodes``: its levels are kept aside, 32 bytes a step) instead of
#: holding the whole cluster's (32 bytes a step per node: 1 MB a step on 33,000 nodes)
_PIN_AFTER_S = 1800.0


class SimulationStopped(RuntimeError):
    """A run stopped before its end: ``max_events``, ``max_wall_seconds`` or a stop request
    (SIGINT/SIGTERM during a streaming run). ``reason`` says which.

    Examples
    --------
    >>> SimulationStopped("max_wall_seconds=1.0", "stopped").reason
    'max_wall_seconds=1.0'
    """

    def __init__(self, reason: str, message: str | None = None):
        super().__init__(message or f"simulation stopped: {reason}")
        self.reason = reason


class Simulator(SimulatorSetup, JobArrivals, PolicyActions, AttemptLifecycle, AttemptPhysics):
    """The discrete-event engine. Use :func:`sim_bridge.simulate` rather than this directly.

    Parameters
    ----------
    cluster : Cluster
    workloads : list[Workload]
    speculation : SpeculationPolicy
    placement : PlacementPolicy
    seed : int
    duration_dist : frozen scipy distribution, optional
        If given, an attempt's duration is ``work * (1 - start_fraction) * X`` with ``X`` an
        independent draw from it (nodes, contention and noise are then ignored).
    noise : bool
        Residual noise on attempt durations (:func:`sim_bridge.world.residual_noise`: a small
        body and a rare Pareto tail of the workload's ``tail_alpha``; off: the duration follows
        the node's state only).
    skew : (float, float)
        Lognormal sigma of a task's input within its stage, maps and reduces
        (:func:`sim_bridge.world.input_skew`); ``(0, 0)`` turns data skew off.
    record_truth : bool
        Keep each attempt's hidden truth (nominal work, noise, launch slowdown, the median
        node's slowdown) for the trace's ``truth_*`` columns.
    interference : float
        Self-inflicted contention (:mod:`sim_bridge.world._interference`): the load a node
        full of one workload's tasks puts on that workload's dominant resource. Every running
        attempt adds its demand to its co-tenants' levels, and their end times are re-solved
        whenever a node's tenants change. 0 turns it off.
    tail_pressure : float in [0, 1)
        How much the contention pressure at launch (0..1, see ``Cluster.pressure``) lowers the
        tail exponent of the noise: ``alpha * (1 - tail_pressure * pressure)`` (0 by default:
        the residual noise is independent of the node; node state acts through the rate).
    deadline_factor : float
        A job without an explicit deadline gets ``submit + factor * critical path``.
    keep_history : bool
        Keep every job (``jobs``) and attempt (``attempts``) and their launch records to the
        end of the run (the in-memory tables are built from them). False: memory follows the
        jobs alive -- a finished job, all its attempts closed, is passed to ``on_job_done``
        (each closed attempt's launch record in its job's ``_recs``, the attempt shrunk to
        what is still read: :func:`sim_bridge._jobs.shed_closed`) and the engine forgets it.
    on_job_done : callable, optional
        ``on_job_done(job)`` when a job finishes (required with ``keep_history=False``).
    max_wall_seconds : float, optional
        Stop (:class:`SimulationStopped`) once the loop has run this long (checked every
        1,024 events).
    """

    # ----------------------------------------------------------------- heap
    def _push(self, t: float, kind: int, obj: Any) -> None:
        self._seq += 1
        self._heap.push(t, self._seq, kind, obj)

    def request_stop(self, reason: str) -> None:
        """Ask the loop to stop (safe from a signal handler: it only sets a flag; the loop
        raises :class:`SimulationStopped` after the event it is in, or at the next check of
        a solve that goes on past the paths drawn, whichever comes first)."""
        self.stop_reason = reason

    # ----------------------------------------------------------------- main loop
    def run(self, progress_bar=None) -> None:
        """Run until every job is done."""
        wall0, cpu0 = time.perf_counter(), time.process_time()
        # the engine's objects form reference cycles (job <-> task <-> attempt) that live to
        # the end of the run: generational GC passes over them would cost O(objects) again
        # and again, so collection waits until the run is over
        try:
            with gc_paused():
                self._loop(progress_bar)
        finally:
            self.wall_seconds = time.perf_counter() - wall0
            #: CPU seconds of the loop (process time: robust to a loaded machine)
            self.cpu_seconds = time.process_time() - cpu0

    def _loop(self, progress_bar) -> None:
        heap = self._heap
        pop_live = heap.pop_live
        spec_pol = self.speculation
        interval = spec_pol.interval
        n_jobs = len(self._specs)
        finished_before = 0
        arrivals = self._arrival_times
        n_arr = len(arrivals)
        ai = 0
        max_events = self.max_events
        next_check = self.events + _CHECK_EVERY
        # a streamed run holding the paths by its live attempts also scans them when the
        # clock moved _HOLD_EVERY_S since the last scan: a drain has few events a day
        hold_by_clock = self._bounded and self._hold_live
        wall_limit = (
            None if self.max_wall_seconds is None else time.perf_counter() + self.max_wall_seconds
        )
        obj: Any  # an arrival's index, an attempt, a wake's (policy, tag) or None: see kind
        pass_over_stale(heap, self._speed)  # what the compiled heap's pop_live passes over
        while True:  # (the next arrival first when due no later than the heap's first event)
            e = pop_live(arrivals[ai], True) if ai < n_arr else pop_live(0.0, False)
            if e is not None:
                t, _seq, kind, obj = e
            elif ai < n_arr:
                t, kind, obj = arrivals[ai], EV_ARRIVAL, ai
                ai += 1
            else:
                break
            if kind == EV_FINISH:
                if obj.state != A_RUNNING or obj._end != t or obj._ckpt is not None:
                    continue  # killed meanwhile: a stale event
                self.now = t
                self.events += 1
                self._finish(obj)
                if self._hook_finished:
                    self._apply(spec_pol.on_attempt_finished(self.view, obj), spec_pol)
            elif kind == EV_ARRIVAL:
                self.now = t
                self.events += 1
                self._n_arrivals_left -= 1
                job = self._arrive(obj)
                if interval is not None and not self._tick_scheduled:
                    self._tick_scheduled = True
                    self._push(t + interval, EV_TICK, None)
                if self._hook_arrival:
                    self._apply(spec_pol.on_job_arrival(self.view, job), spec_pol)
            elif kind == EV_SOLVE:
                self._solve_deferred(obj, _seq)
                continue  # not an event of the model
            elif kind == EV_CHECK:  # obj: (attempt, where its solve stopped)
                att, stop = obj
                if att.state == A_RUNNING and att._ckpt is stop:
                    # a solve going on for days has no event between its checks: stop
                    # requests, the wall limit and the hold are seen at them too (the hold:
                    # the blocks behind go before the next is drawn)
                    if self.stop_reason is not None:
                        raise SimulationStopped(self.stop_reason)
                    if wall_limit is not None and time.perf_counter() > wall_limit:
                        raise SimulationStopped(f"max_wall_seconds={self.max_wall_seconds}")
                    if hold_by_clock and t - self._held_at >= _HOLD_EVERY_S:
                        self._hold_paths(t)
                    self._go_on(att, stop, _seq)
                continue  # nothing the model sees changed: no event, no placement pass
            elif kind == EV_TICK:
                self.now = t
                self.events += 1
                if self._active:
                    self._apply(spec_pol.on_tick(self.view), spec_pol)
                    self._push(t + interval, EV_TICK, None)  # type: ignore[operator]  # not None
                else:
                    self._tick_scheduled = False
            else:  # EV_WAKE
                self.now = t
                self.events += 1
                self._n_wakes -= 1
                policy, tag = obj
                self._apply(policy.on_wake(self.view, tag), policy)
            if self._n_free and self._n_waiting:
                self._apply(self.placement.assign(self.view, self._free_proxy), self.placement)
            if not self._n_running and self._n_waiting:
                self._check_stuck()
            if self.stop_reason is not None:  # asked during this event (a drain has few)
                raise SimulationStopped(self.stop_reason)
            if self.events >= next_check:
                next_check = self.events + _CHECK_EVERY
                if self._bounded:
                    self._hold_paths()
                self._upkeep()  # a streaming run's done tasks and rows
                if progress_bar is not None:
                    live = len(self._active)
                    n = self.n_arrived - live
                    finished_before = advance_bar(progress_bar, n, finished_before, self.now, live)
                if wall_limit is not None and time.perf_counter() > wall_limit:
                    raise SimulationStopped(f"max_wall_seconds={self.max_wall_seconds}")
            elif hold_by_clock and self.now - self._held_at >= _HOLD_EVERY_S:
                self._hold_paths()
            if max_events is not None and self.events >= max_events:
                raise SimulationStopped(
                    f"max_events={max_events}",
                    f"simulation stopped after max_events={self.max_events} events",
                )
        self._drop_q.clear()  # its jobs are done: nothing to drop
        if progress_bar is not None:
            advance_bar(progress_bar, n_jobs, finished_before, self.now, len(self._active))
        if self._active:
            raise PolicyError(
                f"simulation ended with {len(self._active)} unfinished jobs: placement "
                f"{self.placement.name!r} / speculation {self.speculation.name!r} "
                "left tasks waiting"
            )

    def _hold_paths(self, now: float | None = None) -> None:
        """Tell the cluster the oldest time the jobs alive may still read (streaming runs),
        at the clock or at ``now``, a later time no read precedes (an ``EV_CHECK``'s).

        By default the bound is the live attempts' (``_hold_live``: the trace sink computes
        the counters from the levels each launch recorded): where each may still read the
        levels from, and the profiles' rates and sums from now (``Cluster.hold``'s
        ``rates_from``); an attempt that may read from more than ``_PIN_AFTER_S`` ago pins
        its node instead (:mod:`sim_bridge._path_holds`, which says why); a killed attempt's
        progress is the value booked when it closed (:meth:`_close`). That scan runs once
        per ``_HOLD_EVERY_S`` simulated seconds; a hold older than it could be only keeps
        more. Else every read of a live job is at or after the oldest live job's submission.
        """
        active = self._active
        now = self.now if now is None else now
        if not self._hold_live:
            self.cluster.hold("engine", next(iter(active.values())).submit_time if active else now)
            return
        if now - self._held_at < _HOLD_EVERY_S:
            return
        self._held_at = now
        t, pins = scan_holds(active.values(), now, self.cluster.dt, _PIN_AFTER_S)
        self.cluster.hold("engine", t, rates_from=now, nodes=pins)

    def _check_stuck(self) -> None:
        if self._n_arrivals_left or self._n_wakes or self._n_running:
            return
        raise PolicyError(
            f"placement {self.placement.name!r} left {self._n_waiting} tasks waiting on "
            f"{self._n_free} free slots at t={self.now:.3f} with nothing left to happen "
            "(return a Wake to be called again)"
        )
