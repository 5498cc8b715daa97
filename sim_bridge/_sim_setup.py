"""The simulator's state, set up before the first event (the constructor of
:class:`sim_bridge._engine.Simulator`).

:class:`SimulatorSetup` is the base class whose ``__init__`` checks the parameters and lays
out everything the loop and its parts read and write: the slots and nodes, the jobs alive
and waiting, the heap, the policies' hooks, and the streams of every original attempt's draws
(work, input skew, residual noise: :class:`~sim_bridge._task_draws.TaskDraws`, drawn job by
job as jobs arrive) so that the originals see the same draws whatever the policy (common
random numbers). The parameters are documented on :class:`~sim_bridge._engine.Simulator`.

Examples
--------
>>> from sim_bridge import Cluster, JobSpec, Workload, get_policy
>>> from sim_bridge._engine import Simulator
>>> w = Workload("SYN", [JobSpec("j0", 0.0, [10.0, 20.0], [5.0])])
>>> sim = Simulator(Cluster(2, 1, seed=0), [w], get_policy("none"), get_policy("fifo"),
...                 skew=(0.0, 0.0))
>>> isinstance(sim, SimulatorSetup), sim.now, sim._n_free, sim._n_arrivals_left
(True, 0.0, 2, 1)
>>> sim._draws.whole()[1].tolist(), sim._draws.task_start.tolist()  # no skew: the specs' work
([10.0, 20.0, 5.0], [0])
"""

from __future__ import annotations

import math
from array import array
from itertools import repeat
from operator import attrgetter, itemgetter
from types import MappingProxyType
from typing import Any

import numpy as np

from sim_bridge._cluster import Cluster
from sim_bridge._event_heap import new_event_heap
from sim_bridge._fair_order import FairOrder
from sim_bridge._jobs import Attempt, Job
from sim_bridge._record_spill import RecordSpill
from sim_bridge._row_maps import RowMaps
from sim_bridge._task_draws import TaskDraws
from sim_bridge._task_list import DropQueue
from sim_bridge._view import SimView
from sim_bridge._workloads import JobSpec, Workload
from sim_bridge.policies.base import PlacementPolicy, SpeculationPolicy
from sim_bridge.world._attempts import LOAD_TAUS
from sim_bridge.world._interference import TENANT_LOAD
from sim_bridge.world._skew import SKEW_SIGMA

__all__ = ["SimulatorSetup"]


class SimulatorSetup:
    """The constructor of :class:`~sim_bridge._engine.Simulator` (its base class): checks the
    parameters and sets up all the simulator's state; the loop and its parts (the mixins of
    ``sim_bridge._sim_*`` and :class:`~sim_bridge.world.AttemptPhysics`) hold none."""

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
        #: a solve whose work is not done by their end goes on there, to the same float), so
        #: the paths grow with the clock and not with the farthest end time ever solved
        self._bounded = not self.keep_history
        if self._bounded:  # nothing of the paths may go before the loop says so
            cluster.hold("engine", 0.0)
        #: streaming runs: done tasks whose one attempt finished, to drop from their job's
        #: storage once nothing else holds them (:class:`sim_bridge._task_list.DropQueue`)
        self._drop_q = DropQueue()
        self._n_upkeeps = 0  # the periodic upkeeps so far (AttemptLifecycle._upkeep)
        #: streaming runs: where the live jobs' launch records past a small buffer go (set
        #: by ``simulate`` with its trace sink's)
        self._spill: RecordSpill | None = None
        #: streaming runs: where the big live jobs' done-task rows are mapped (set by
        #: ``simulate`` with its trace sink's; :class:`sim_bridge._row_maps.RowMaps`)
        self._rows: RowMaps | None = None
        #: the simulated time of the last scan of the live attempts' oldest read
        self._held_at = -math.inf
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
        #: co-tenants' demands, one tuple a value (:mod:`sim_bridge.world._shared_demands`)
        self._dem_pool: dict[tuple[float, ...], tuple[float, ...]] = {}
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
        self._heap = new_event_heap()
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
        # the waiting jobs in the fair order, made at the first pass that asks for it
        # (SimView.fair_waiting_jobs) and kept from then on (sim_bridge._fair_order)
        self._fair_order: FairOrder[Job] | None = None
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
        # every original attempt's draws (common random numbers: the originals see the same
        # draws whatever the policy), handed to each job when it arrives; copies draw from
        # the job's rng
        self._draws = TaskDraws(
            specs, self.seed, duration_dist=duration_dist, noise=self.noise, skew=self.skew
        )
        # arrivals are already sorted: the loop merges them with the heap (at equal times an
        # arrival comes first), which keeps the heap small
        self._arrival_times = submit.tolist()
        self._n_arrivals_left = len(specs)
