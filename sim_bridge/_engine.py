"""The event core: one loop over a heap of (time, seq) events; all state on the simulator.

Jobs arrive, their stages' tasks wait, the placement policy puts waiting tasks on free slots,
attempts run for a duration solved analytically at launch from the node's contention path
(``sim_bridge._cluster``) and the tasks sharing the node, and re-solved whenever that node's
tenants change (``sim_bridge.world``); the speculation policy copies, restarts and kills
attempts. A task completes with its first finished attempt; its other attempts are killed at
that instant.

In-memory runs defer an end solve under co-located demand (``EV_SOLVE``, see
``AttemptPhysics._defer``): with many slots per node most solves are superseded by the next
change of the node's tenants, and a deferred one keeps the heap sequence number it would have
had, so the events and the trace are the same bit for bit. Streaming runs solve at once: their
checkpoint test reads the contention paths' horizon, which a solve can extend.
"""

from __future__ import annotations

import heapq
import math
import time
from array import array
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from types import MappingProxyType
from typing import Any

import numpy as np

from sim_bridge._cluster import Cluster
from sim_bridge._gc import gc_paused
from sim_bridge._jobs import NO_LIVE, Attempt, Job, Task, shed_closed
from sim_bridge._states import (
    A_FINISHED,
    A_KILLED,
    A_RUNNING,
    BLOCKED,
    DONE,
    EV_ARRIVAL,
    EV_CHECK,
    EV_FINISH,
    EV_SOLVE,
    EV_TICK,
    EV_WAKE,
    RUNNING,
    WAITING,
)
from sim_bridge._view import FreeSlots, SimView
from sim_bridge._workloads import JobSpec, Workload
from sim_bridge.policies.base import (
    Kill,
    Launch,
    PlacementPolicy,
    PolicyError,
    SpeculationPolicy,
    Wake,
)
from sim_bridge.world._attempts import LOAD_TAUS, AttemptPhysics, decay_loads
from sim_bridge.world._interference import TENANT_LOAD
from sim_bridge.world._noise import residual_noise
from sim_bridge.world._skew import SKEW_SIGMA, input_skew

__all__ = ["Attempt", "FreeSlots", "Job", "SimView", "SimulationStopped", "Simulator", "Task"]

_OUTCOME = {A_FINISHED: "finished", A_KILLED: "killed"}
_CHECK_EVERY = 1024  # events between checks of the stop request and the wall-clock limit


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


class Simulator(AttemptPhysics):
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

    def __init__(
        self,
        cluster: Cluster,
        workloads: list[Workload],
        speculation: SpeculationPolicy,
        placement: PlacementPolicy,
        *,
        seed: int = 0,
        duration_dist: Any = None,
        noise: bool = True,
        interference: float = TENANT_LOAD,
        tail_pressure: float = 0.0,
        deadline_factor: float = 3.0,
        max_events: int | None = None,
        skew: tuple[float, float] = SKEW_SIGMA,
        record_truth: bool = False,
        keep_history: bool = True,
        on_job_done: Any = None,
        max_wall_seconds: float | None = None,
    ):
        self.cluster = cluster
        #: keep every job and attempt to the end (``jobs``, ``attempts``, the per-attempt
        #: launch records); False: a finished job is handed to ``on_job_done`` and dropped
        self.keep_history = bool(keep_history)
        #: solve end times only within the contention paths computed so far (streaming runs:
        #: an attempt that cannot end before them gets a checkpoint there), so the paths grow
        #: with the clock and not with the farthest end time ever solved
        self._bounded = not self.keep_history
        if self._bounded:  # nothing of the paths may go before the loop says so
            cluster.hold("engine", 0.0)
        if not self.keep_history and on_job_done is None:
            raise ValueError("keep_history=False needs an on_job_done callback")
        self._on_job_done = on_job_done
        #: jobs arrived so far (the next job's uid)
        self.n_arrived = 0
        self.speculation = speculation
        self.placement = placement
        self.seed = int(seed)
        self.duration_dist = duration_dist
        self.noise = bool(noise)
        self.interference = float(interference)
        #: co-located tasks slow each other (re-solved end times); off on an ideal cluster
        self._tenancy = self.interference > 0 and not cluster.ideal and duration_dist is None
        self._pid_demand: dict[int, tuple[float, ...]] = {}
        self.tail_pressure = float(tail_pressure)
        self.skew = tuple(float(v) for v in skew)
        if len(self.skew) != 2 or not all(math.isfinite(v) and v >= 0 for v in self.skew):
            raise ValueError(f"parameter skew must be two sigmas >= 0, got {skew!r}")
        self.record_truth = bool(record_truth)
        #: per attempt (uid order) when record_truth: work, noise, launch and median slowdown
        self._truth = array("d")
        self._median_cache: dict = {}
        self.deadline_factor = float(deadline_factor)
        self.max_events = max_events
        if max_wall_seconds is not None and not (
            isinstance(max_wall_seconds, (int, float)) and max_wall_seconds > 0
        ):
            raise ValueError(f"parameter max_wall_seconds must be > 0, got {max_wall_seconds!r}")
        self.max_wall_seconds = max_wall_seconds
        #: set by :meth:`request_stop`; the loop stops at its next check (every 1,024 events)
        self.stop_reason: str | None = None
        self.now = 0.0
        self.events = 0
        self._heap: list = []
        self._seq = 0
        # slots and nodes
        n, s = cluster.n_nodes, cluster.slots
        self._free: dict[int, int] = {i: s for i in range(n)}
        self._free_proxy = MappingProxyType(self._free)
        self._n_free = n * s
        self._n_running = 0
        self._n_copies = 0
        self._node_running = [0] * n
        self._node_live: list[dict[int, Attempt]] = [{} for _ in range(n)]
        self._load = [[0.0] * n for _ in LOAD_TAUS]
        self._load_t = [0.0] * n
        # jobs
        self._active: dict[int, Job] = {}
        self._waiting: dict[int, Job] = {}
        self._waiting_dirty = False
        self._n_waiting = 0
        self._n_arrivals_left = 0
        self._n_wakes = 0
        self._tick_scheduled = False
        self._attempt_uid = 0
        self._task_uid = 0
        self.jobs: list[Job] = []
        self.attempts: list[Attempt] = []
        # per attempt (uid order): running count and load averages of its node at launch
        self._rstates = array("d")
        # per attempt (uid order), with co-located contention on: the demand of the node's
        # other tenants at launch (what its counters at launch show)
        self._dstates = array("d")
        self.view = SimView(self)
        self._just_launched: list[Attempt] = []
        self._hook_launched = (
            type(speculation).on_attempt_launched is not SpeculationPolicy.on_attempt_launched
        )
        self._hook_finished = (
            type(speculation).on_attempt_finished is not SpeculationPolicy.on_attempt_finished
        )
        self._hook_arrival = (
            type(speculation).on_job_arrival is not SpeculationPolicy.on_job_arrival
        )
        specs: list[tuple[JobSpec, Workload]] = []
        for w in workloads:
            specs.extend(zip(w.jobs, repeat(w)))
        submit = np.fromiter(map(attrgetter("submit_time"), map(itemgetter(0), specs)), float)
        if submit.size > 1 and np.any(submit[1:] < submit[:-1]):
            # stable: workload order breaks ties
            order = np.argsort(submit, kind="stable")
            specs = [specs[i] for i in order.tolist()]
            submit = submit[order]
        self._specs = specs
        self._pid_cache: dict = {}
        self._tail = cluster.tail.tolist()
        self._speed = cluster.speed.tolist()
        # every original attempt's draw, in one vectorised call (common random numbers: the
        # originals see the same draws whatever the policy); copies draw from the job's rng
        self._n_map = np.fromiter(
            map(len, map(attrgetter("map_work"), map(itemgetter(0), specs))), np.int64, len(specs)
        )
        self._n_red = np.fromiter(
            map(len, map(attrgetter("reduce_work"), map(itemgetter(0), specs))),
            np.int64,
            len(specs),
        )
        sizes = self._n_map + self._n_red
        total = int(sizes.sum())
        #: first task (draw) index of each job
        self._task_start = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        base_rng = np.random.default_rng([self.seed, 8])
        if duration_dist is not None:
            u_all = np.asarray(duration_dist.rvs(size=total, random_state=base_rng), float)
            u_all = u_all.reshape(-1)
            if u_all.size != total or not np.all(np.isfinite(u_all)) or np.any(u_all < 0):
                raise ValueError("duration_dist drew a negative or non-finite duration")
        else:
            u_all = base_rng.random(total)
        self._u_array = u_all  # the compiled loop reads the array; the Python loop a list
        # each task's base work times its input skew (data skew within the stage), and the
        # originals' residual noise multipliers, drawn up front for both loops
        stages = chain.from_iterable(
            map(attrgetter("map_work", "reduce_work"), map(itemgetter(0), specs))
        )
        base_work = np.fromiter(chain.from_iterable(map(np.ndarray.tolist, stages)), float, total)
        stage = np.zeros(total, np.int64)
        if total:
            red_start = self._task_start + self._n_map
            mark = np.zeros(total + 1, np.int64)
            np.add.at(mark, red_start, 1)
            np.add.at(mark, self._task_start + sizes, -1)
            stage = np.cumsum(mark)[:total]
        if duration_dist is None and any(self.skew):
            skew_f = input_skew(np.random.default_rng([self.seed, 10]), stage, self.skew)
            self._work_array = base_work * skew_f
        else:
            self._work_array = base_work
        if duration_dist is None and self.noise:
            job_alpha = [w.tail_alpha for _spec, w in specs]
            self._m_array = residual_noise(u_all, np.repeat(np.array(job_alpha, float), sizes))
        else:
            self._m_array = np.ones(total)
        # arrivals are already sorted: the loop merges them with the heap (at equal times an
        # arrival comes first), which keeps the heap small
        self._arrival_times = submit.tolist()
        self._n_arrivals_left = len(specs)

    # ----------------------------------------------------------------- heap
    def _push(self, t: float, kind: int, obj: Any) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, obj))

    def request_stop(self, reason: str) -> None:
        """Ask the loop to stop at its next check (safe from a signal handler: it only sets a
        flag; the loop raises :class:`SimulationStopped` between two events)."""
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
        pop = heapq.heappop
        spec_pol = self.speculation
        interval = spec_pol.interval
        n_jobs = len(self._specs)
        finished_before = 0
        arrivals = self._arrival_times
        n_arr = len(arrivals)
        ai = 0
        max_events = self.max_events
        next_check = self.events + _CHECK_EVERY
        wall_limit = (
            None if self.max_wall_seconds is None else time.perf_counter() + self.max_wall_seconds
        )
        obj: Any  # an arrival's index, an attempt, a wake's (policy, tag) or None: see kind
        while True:
            if ai < n_arr and (not heap or arrivals[ai] <= heap[0][0]):
                t, kind, obj = arrivals[ai], EV_ARRIVAL, ai
                ai += 1
            elif heap:
                t, _seq, kind, obj = pop(heap)
            else:
                break
            if kind == EV_FINISH:
                if obj.state != A_RUNNING or obj._end != t or obj._ckpt:
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
            elif kind == EV_CHECK:
                if obj.state == A_RUNNING and obj._end == t and obj._ckpt:
                    self.now = t
                    self._advance(obj, t)
                    self._resolve(obj, t, obj._dem)
                continue  # nothing the model sees changed: no event, no placement pass
            elif kind == EV_TICK:
                self.now = t
                self.events += 1
                if self._active:
                    self._apply(spec_pol.on_tick(self.view), spec_pol)
                    self._push(t + interval, EV_TICK, None)
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
            if self.events >= next_check:
                next_check = self.events + _CHECK_EVERY
                if self._bounded:
                    self._hold_paths()
                if progress_bar is not None:
                    n_fin = self.n_arrived - len(self._active)
                    progress_bar.update(n_fin - finished_before)
                    finished_before = n_fin
                if self.stop_reason is not None:
                    raise SimulationStopped(self.stop_reason)
                if wall_limit is not None and time.perf_counter() > wall_limit:
                    raise SimulationStopped(f"max_wall_seconds={self.max_wall_seconds}")
            if max_events is not None and self.events >= max_events:
                raise SimulationStopped(
                    f"max_events={max_events}",
                    f"simulation stopped after max_events={self.max_events} events",
                )
        if progress_bar is not None:
            progress_bar.update(n_jobs - finished_before)
        if self._active:
            raise PolicyError(
                f"simulation ended with {len(self._active)} unfinished jobs: placement "
                f"{self.placement.name!r} / speculation {self.speculation.name!r} "
                "left tasks waiting"
            )

    def _hold_paths(self) -> None:
        """Tell the cluster the oldest time the jobs alive may still read (streaming runs):
        every read of a live job (its attempts' progress, the counters at their launches)
        is at or after the oldest live job's submission, so older path steps can go."""
        active = self._active
        self.cluster.hold("engine", next(iter(active.values())).submit_time if active else self.now)

    def _check_stuck(self) -> None:
        if self._n_arrivals_left or self._n_wakes or self._n_running:
            return
        raise PolicyError(
            f"placement {self.placement.name!r} left {self._n_waiting} tasks waiting on "
            f"{self._n_free} free slots at t={self.now:.3f} with nothing left to happen "
            "(return a Wake to be called again)"
        )

    # ----------------------------------------------------------------- arrivals
    def _arrive(self, i: int) -> Job:
        spec, w = self._specs[i]
        job = Job()
        uid = job.uid = self.n_arrived
        self.n_arrived = uid + 1
        job.spec = spec
        job.job_id = spec.job_id
        job.workload = spec.workload
        submit = job.submit_time = spec.submit_time
        if spec.deadline is not None:
            job.deadline = float(spec.deadline)
        else:
            job.deadline = submit + self.deadline_factor * spec._critical_path
        job._rng = None
        # i + 1: SeedSequence ignores trailing zero words, [s, 9, 0] would equal [s, 9]
        job._seed = (self.seed, 9, i + 1)
        job.alpha = w.tail_alpha
        key = (id(w), spec.phases)
        pids = self._pid_cache.get(key)
        if pids is None:
            cl = self.cluster
            pids = self._pid_cache[key] = (
                cl.profile_id(w.profile(spec.phases[0])),
                cl.profile_id(w.profile(spec.phases[1])),
            )
        job.pids = pids
        # the job's slice of the pre-drawn per-task arrays, as Python floats (they index
        # faster than a NumPy array; only the jobs alive hold them)
        off = int(self._task_start[i])
        end = off + spec.n_tasks
        u0 = self._u_array[off:end].tolist()
        wk = self._work_array[off:end].tolist()
        job._m = self._m_array[off:end].tolist()
        n_m = len(spec.map_work)
        tuid = self._task_uid
        ph0 = spec.phases[0]
        first = [Task(tuid + k, job, k, 0, ph0, wk[k], u0[k]) for k in range(n_m)]
        for t in first:
            t.state = WAITING
        if spec.reduce_work.size:
            n_r = len(spec.reduce_work)
            ph1 = spec.phases[1]
            second = [
                Task(tuid + n_m + k, job, n_m + k, 1, ph1, wk[n_m + k], u0[n_m + k])
                for k in range(n_r)
            ]
            job.tasks = first + second
        else:
            n_r = 0
            second = []
            job.tasks = first
        self._task_uid = tuid + n_m + n_r
        job.stages = [first, second]
        job.stage = 0
        job.stage_left = [n_m, n_r]
        job.pending = dict(enumerate(first))  # the first stage is waiting
        job._pdel = 0
        job.running = {}
        job.n_done = 0
        job.n_tasks = n_m + n_r
        job.finish_time = None
        if self.keep_history:
            self.jobs.append(job)
        self._active[uid] = job
        self._n_waiting += n_m
        waiting = self._waiting
        if waiting and uid < next(reversed(waiting)):
            self._waiting_dirty = True
        waiting[uid] = job
        return job

    def _make_waiting(self, job: Job, tasks) -> None:
        pend = job.pending
        for t in tasks:
            t.state = WAITING
            pend[t.index] = t
        self._n_waiting += len(tasks)
        if job.uid not in self._waiting:
            if self._waiting and job.uid < next(reversed(self._waiting)):
                self._waiting_dirty = True
            self._waiting[job.uid] = job

    # ----------------------------------------------------------------- slots / loads
    def _load_touch(self, node: int) -> None:
        decay_loads(self._load, self._load_t, node, self._node_running[node], self.now)

    # ----------------------------------------------------------------- actions
    def _apply(self, actions, policy) -> None:
        if actions:
            self._apply_list(actions, policy)
        # on_attempt_launched runs once the whole list is applied, so that the view it sees
        # (free slots) is consistent; its own launches are handled the same way
        while self._just_launched:
            batch, self._just_launched = self._just_launched, []
            spec = self.speculation
            for att in batch:
                acts = spec.on_attempt_launched(self.view, att)
                if acts:
                    self._apply_list(acts, spec)

    def _apply_list(self, actions, policy) -> None:
        for act in actions:
            if type(act) is Launch:
                self._launch(act, policy)
            elif type(act) is Kill:
                a = act.attempt
                if not isinstance(a, Attempt) or a.state != A_RUNNING:
                    raise PolicyError(
                        f"policy {policy.name!r}: {act!r} at t={self.now:.3f}: "
                        "the attempt is not running"
                    )
                self._kill(a)
                task = a.task
                if not task.live and task.state != DONE:
                    self._requeue(task)
            elif type(act) is Wake:
                at = act.at
                if not (isinstance(at, (int, float)) and math.isfinite(at) and at >= self.now):
                    raise PolicyError(
                        f"policy {policy.name!r}: {act!r} at t={self.now:.3f}: "
                        "the wake-up time must be finite and not in the past"
                    )
                self._n_wakes += 1
                self._push(float(at), EV_WAKE, (policy, act.tag))
            else:
                raise PolicyError(
                    f"policy {policy.name!r} returned {act!r}, which is not a Launch, Kill or Wake"
                )

    def _requeue(self, task: Task) -> None:
        job = task.job
        task.state = WAITING
        # back to the front of the job's waiting tasks
        rest = job.pending
        job.pending = {task.index: task}
        job.pending.update(rest)
        job._pdel = 0
        self._n_waiting += 1
        if job.uid not in self._waiting:
            if self._waiting and job.uid < next(reversed(self._waiting)):
                self._waiting_dirty = True
            self._waiting[job.uid] = job

    def _pick_node(self, task: Task) -> int | None:
        busy = {a.node for a in task.live.values()}
        for node in self._free:
            if node not in busy:
                return node
        for node in self._free:
            return node
        return None

    def _launch(self, act: Launch, policy) -> None:
        task = act.task
        now = self.now
        if type(task) is not Task and not isinstance(task, Task):
            raise PolicyError(f"policy {policy.name!r}: {act!r}: task is not a Task")
        state = task.state
        job = task.job
        if state == DONE or state == BLOCKED or job.finish_time is not None:
            why = "the task is already done" if state == DONE else "its stage is not runnable yet"
            raise PolicyError(f"policy {policy.name!r}: {act!r} at t={now:.3f}: {why}")
        sf = act.start_fraction
        if sf != 0.0 or type(sf) is not float:
            if not (isinstance(sf, (int, float)) and 0.0 <= sf < 1.0):
                raise PolicyError(
                    f"policy {policy.name!r}: {act!r}: start_fraction must be in [0, 1), got {sf!r}"
                )
            sf = float(sf)
        free = self._free
        node = act.node
        if node is None:
            node = self._pick_node(task)
            if node is None:
                raise PolicyError(
                    f"policy {policy.name!r}: {act!r} at t={now:.3f}: no free slot in the cluster"
                )
        elif node not in free:
            if not isinstance(node, (int, np.integer)) or not 0 <= node < self.cluster.n_nodes:
                raise PolicyError(f"policy {policy.name!r}: {act!r}: no node {node!r}")
            raise PolicyError(
                f"policy {policy.name!r}: {act!r} at t={now:.3f}: node {node} has no free slot"
            )
        if type(node) is not int:
            node = int(node)
        if state == WAITING:
            pending = job.pending
            del pending[task.index]
            self._n_waiting -= 1
            if not pending:
                self._waiting.pop(job.uid, None)
            else:
                # a dict only compacts its deleted entries when it grows, and iterating it walks
                # over them (placement iterates it at every event): rebuild it once deletions
                # exceed 1/16 of what is left (amortised O(1) per deletion, and a walk skips at
                # most max(32, n/16) dead entries)
                pdel = job._pdel + 1
                if pdel > 32 and pdel * 16 > len(pending):
                    job.pending = dict(pending)
                    pdel = 0
                job._pdel = pdel
            task.state = RUNNING
            if task.first_launch is None:
                task.first_launch = now
        attempts = task.attempts
        index = len(attempts)
        uid = self._attempt_uid
        self._attempt_uid = uid + 1
        att = Attempt(uid, task, index, node, now, sf)
        node_running = self._node_running
        running_before = node_running[node]
        keep = self.keep_history
        end = self._solve_launch(att, task, job, node, now, sf, running_before)
        attempts.append(att)
        task.live[uid] = att
        job.running[uid] = att
        self._node_live[node][uid] = att
        node_running[node] = running_before + 1
        self._n_running += 1
        if index:
            self._n_copies += 1
        # take the slot
        c = free[node] - 1
        if c:
            free[node] = c
        else:
            del free[node]
        self._n_free -= 1
        if keep:
            self.attempts.append(att)
        self._seq += 1
        if att._solve is not None:
            att._solve = (self._seq, now, att._solve[2])
            kind = EV_SOLVE
        else:
            kind = EV_CHECK if att._ckpt else EV_FINISH
        heapq.heappush(self._heap, (end, self._seq, kind, att))
        if self._hook_launched:
            self._just_launched.append(att)

    def _close(self, att: Attempt, state: int) -> None:
        node = att.node
        now = self.now
        node_running = self._node_running
        n = node_running[node]
        decay_loads(self._load, self._load_t, node, n, now)
        att.state = state
        att.end_time = now
        task = att.task
        uid = att.uid
        del task.live[uid]
        del task.job.running[uid]
        del self._node_live[node][uid]
        if self._tenancy:
            self._advance(att, now)  # its progress at the end stays readable
            self._tenants_left(node, now)
        node_running[node] = n - 1
        self._n_running -= 1
        if att.index:
            self._n_copies -= 1
        # release the slot
        free = self._free
        c = free.get(node)
        free[node] = 1 if c is None else c + 1
        self._n_free += 1
        if not self.keep_history:  # a streaming run: keep only what a closed attempt needs
            shed_closed(att)

    def _kill(self, att: Attempt) -> None:
        self._close(att, A_KILLED)

    def _finish(self, att: Attempt) -> None:
        self._close(att, A_FINISHED)
        task = att.task
        job = task.job
        task.state = DONE
        task.finish_time = self.now
        if task.live:
            for other in list(task.live.values()):
                self._close(other, A_KILLED)
        task.live = NO_LIVE  # shared, read-only: a used dict keeps its table allocated
        job.n_done += 1
        st = task.stage
        job.stage_left[st] -= 1
        if job.stage_left[st] == 0 and st == 0 and job.stage_left[1] > 0:
            job.stage = 1
            self._make_waiting(job, job.stages[1])
        if job.n_done == job.n_tasks:
            job.finish_time = self.now
            del self._active[job.uid]
            self._waiting.pop(job.uid, None)
            if self._on_job_done is not None:
                self._on_job_done(job)
