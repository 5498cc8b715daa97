"""Job arrival: a job's tasks built from its spec, and a stage's tasks put on the waiting list.

:class:`JobArrivals` is a mixin of :class:`sim_bridge._engine.Simulator` (it holds no state:
its methods read and write the simulator's, set up by
:class:`~sim_bridge._sim_setup.SimulatorSetup`). ``_arrive`` turns the ``i``-th job spec
(in submission order) into a :class:`~sim_bridge._jobs.Job` whose first stage waits, with
its slice of the pre-drawn per-task arrays; ``_make_waiting`` puts a later stage's tasks on
the waiting list once the stage before it is done.

Examples
--------
>>> from sim_bridge import Cluster, JobSpec, Workload, get_policy
>>> from sim_bridge._engine import Simulator
>>> w = Workload("SYN", [JobSpec("j0", 0.0, [10.0, 20.0], [5.0])])
>>> sim = Simulator(Cluster(2, 1, seed=0), [w], get_policy("none"), get_policy("fifo"))
>>> job = sim._arrive(0)
>>> job.job_id, job.n_tasks, sorted(job.pending), job.stage_left, sim._n_waiting
('j0', 3, [0, 1], [2, 1], 2)
"""

from __future__ import annotations

from array import array
from typing import Any

from sim_bridge import _waiting_tasks
from sim_bridge._cluster import Cluster
from sim_bridge._fair_order import FairOrder
from sim_bridge._jobs import Job, Task, task_indices
from sim_bridge._row_maps import RowMaps
from sim_bridge._states import WAITING
from sim_bridge._task_draws import TaskDraws
from sim_bridge._task_list import set_task_lists
from sim_bridge._waiting_tasks import UNBUILT, TaskMaker, WaitingTasks, built_in
from sim_bridge._workloads import JobSpec, Workload

__all__ = ["JobArrivals"]

#: give the tasks one shared 0.0 for the uniform draw of their original when nothing reads it
#: (:meth:`JobArrivals._arrive`); off, each keeps its draw (the same trace:
#: ``tests/test_unread_draws.py``)
SHARE_UNREAD_DRAWS = True


class JobArrivals:
    """The simulator's job arrivals (mixin of :class:`sim_bridge._engine.Simulator`)."""

    # the simulator's state these methods read and write (set by ``SimulatorSetup.__init__``)
    cluster: Cluster
    seed: int
    deadline_factor: float
    keep_history: bool
    duration_dist: Any
    noise: bool
    tail_pressure: float
    n_arrived: int
    jobs: list[Job]
    _specs: list[tuple[JobSpec, Workload]]
    _pid_cache: dict
    _draws: TaskDraws
    _task_uid: int
    _active: dict[int, Job]
    _waiting: dict[int, Job]
    _waiting_dirty: bool
    _fair_order: FairOrder[Job] | None
    _n_waiting: int
    _rows: RowMaps | None

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
        # the job's draws, as Python floats (they index faster than a NumPy array; only the
        # jobs alive hold them)
        # the originals' uniform draws are read at launch only by a duration distribution or
        # by tail pressure (world/_attempts.py); else their noise is ``job._m``, and the
        # tasks share one 0.0 (24 bytes less each live task)
        u_read = not SHARE_UNREAD_DRAWS or (
            self.duration_dist is not None or bool(self.noise and self.tail_pressure)
        )
        u0, wk, job._m = self._draws.job(i, u_read)
        n_m = spec.n_map
        n_r = spec.n_reduce
        # the first stage's originals read their numbers first (sim_bridge._jobs.read_noise)
        job._m_off = 0
        job._m_end = job._m_left = n_m or n_r
        tuid = self._task_uid
        n = n_m + n_r
        lazy = _waiting_tasks.LAZY_TASKS and n >= _waiting_tasks.LAZY_MIN_TASKS
        if lazy and not self.keep_history:
            # a streaming run's big job: its tasks are made when read (sim_bridge._waiting_tasks)
            job._maker = TaskMaker(tuid, array("d", wk), u0 if u_read else None)
            self._task_uid = tuid + n
            set_task_lists(job, [UNBUILT] * n, n_m)
            job.stage = 0
            job.stage_left = [n_m, n_r]
            job.pending = WaitingTasks(job.tasks, 0, n_m)  # type: ignore[assignment]
        else:
            self._tasks_now(job, tuid, n_m, n_r, wk, u0)
        job._pdel = 0
        job.running = {}  # (its deletions count from 0: Job.__init__)
        job.n_done = 0
        job.n_tasks = n
        if self._rows is not None:  # a streaming run: a big job's rows in a file mapping
            self._rows.assign(job)
        job.finish_time = None
        if self.keep_history:
            self.jobs.append(job)
        self._active[uid] = job
        self._n_waiting += n_m
        waiting = self._waiting
        if waiting and uid < next(reversed(waiting)):
            self._waiting_dirty = True
        waiting[uid] = job
        if self._fair_order is not None:
            self._fair_order.mark(job)
        return job

    def _tasks_now(
        self, job: Job, tuid: int, n_m: int, n_r: int, wk: list[float], u0: list[float]
    ) -> None:
        """Make ``job``'s tasks at its arrival (its first stage waiting), ``tasks``,
        ``stages``, ``stage``, ``stage_left`` and ``pending``."""
        spec = job.spec
        ph0 = spec.phases[0]
        idx = task_indices(n_m + n_r)  # shared index objects
        first = [Task(tuid + k, job, idx[k], 0, ph0, wk[k], u0[k]) for k in range(n_m)]
        for t in first:
            t.state = WAITING
        if n_r:
            ph1 = spec.phases[1]
            second = [
                Task(tuid + n_m + k, job, idx[n_m + k], 1, ph1, wk[n_m + k], u0[n_m + k])
                for k in range(n_r)
            ]
            tasks = first + second
        else:
            second = []
            tasks = first
        self._task_uid = tuid + n_m + n_r
        if self.keep_history:
            job.tasks = tasks
            job.stages = [first, second]
        else:  # views of one list, whose done tasks may go (sim_bridge._task_list)
            set_task_lists(job, tasks, n_m)
        job.stage = 0
        job.stage_left = [n_m, n_r]
        job.pending = dict(zip(idx, first, strict=False))  # the first stage waits (n_m items)

    def _make_waiting(self, job: Job, tasks) -> None:
        pend = job.pending
        if type(pend) is WaitingTasks:  # a big job's: its tasks not made yet stay so
            lo = tasks._lo
            for t in built_in(tasks._items, lo, lo + len(tasks)):
                t.state = WAITING
            pend.extend_run(lo, lo + len(tasks))
        else:
            for t in tasks:
                t.state = WAITING
                pend[t.index] = t
        self._n_waiting += len(tasks)
        if job.uid not in self._waiting:
            if self._waiting and job.uid < next(reversed(self._waiting)):
                self._waiting_dirty = True
            self._waiting[job.uid] = job
            if self._fair_order is not None:
                self._fair_order.mark(job)
