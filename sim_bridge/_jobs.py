"""The state of the simulated work: jobs, their tasks, and the tasks' attempts.

The engine (:class:`sim_bridge._engine.Simulator`) creates and updates these objects; policies
read them (through the hooks' arguments and :class:`~sim_bridge._view.SimView`) and never
change them. They are re-exported from ``sim_bridge._engine`` and ``sim_bridge``.

Examples
--------
>>> from sim_bridge._jobs import Attempt, Job, Task
>>> job = Job()
>>> job.job_id, job.uid, job.finish_time = "j7", 0, None
>>> task = Task(0, job, 2, 0, "map", 10.0, 0.5)
>>> att = Attempt(0, task, 0, node=3, launch_time=1.5, start_fraction=0.0)
>>> task.task_id, att.running, task.done, job.done
('j7-m2', True, False, False)
>>> att.job is job
True
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, overload

import numpy as np

from sim_bridge._extensions import optional_extension
from sim_bridge._states import A_FINISHED, A_RUNNING, BLOCKED, DONE

if TYPE_CHECKING:
    from sim_bridge._cluster import PastPaths
    from sim_bridge._workloads import JobSpec

__all__ = [
    "DONE_F",
    "NOT_LAUNCHED",
    "NO_LIVE",
    "ONE_ROW",
    "Attempt",
    "DoneOne",
    "Job",
    "OneFinished",
    "PyAttempt",
    "Task",
    "list_memo",
    "new_memo",
    "profile_of",
    "read_noise",
    "shed_closed",
    "task_indices",
]

#: Integers a task's row holds in ``Job._one`` (:class:`OneFinished`): its one attempt's uid,
#: node and launch record's offset, and the task's uid, in that order.
ONE_ROW = 4

#: Floats a task's row holds in ``Job._done_f`` (:class:`DoneOne`): its work, first launch and
#: finish time (NaN until set), in that order.
DONE_F = 3

#: the task indices every job shares (:func:`task_indices`)
_INDICES: list[int] = []


class PyAttempt:
    """One run of a task on a node (read-only for policies).

    The reference :class:`Attempt`: ``sim_bridge._attempt_core.Attempt`` is the same class
    with its numbers held as C fields, and ``Attempt`` is that one wherever the extension
    was built (and ``STRAGGLER_NO_EXTENSIONS`` is not set), else this one.

    Attributes
    ----------
    uid : int
        Global launch order.
    task : Task
    index : int
        0 for the original, 1.. for copies (launch order within the task).
    node : int
    launch_time : float
    start_fraction : float
        Fraction of the task's input this attempt skipped (Shed+-style progress transfer).
    state : int
        0 running, 1 finished, 2 killed.
    end_time : float or None
        Set once the attempt is over (policies must not use the private ``_end``: it is the
        future finish time of a running attempt).
    """

    __slots__ = (
        "uid",
        "task",
        "index",
        "node",
        "launch_time",
        "start_fraction",
        "state",
        "end_time",
        "_end",
        "_c0",
        "_work",
        "_seg_t",
        "_seg_done",
        "_dem",
        "_prog",
        "_step_rate",
        "_rec",
        "_ckpt",
        "_solve",
        "_pid",
    )

    def __init__(
        self,
        uid: int,
        task: Task,
        index: int,
        node: int,
        launch_time: float,
        start_fraction: float,
        pid: int | None = None,
    ):
        self.uid = uid
        self.task = task
        self.index = index
        self.node = node
        self.launch_time = launch_time
        self.start_fraction = start_fraction
        self.state = A_RUNNING
        self.end_time: float | None = None
        self._end = math.inf
        self._c0 = 0.0  # cum_at at the start of the current segment (no co-located demand)
        self._work = 0.0
        # the current segment: its start, the work done before it, and the co-located
        # tasks' demand met during it (None: none, the precomputed cumulative rates apply)
        self._seg_t = launch_time
        self._seg_done = 0.0
        self._dem: tuple[float, ...] | None = None
        # (t, work done by t) last read in a segment with demand
        self._prog: tuple[float, float] | None = None
        # (step, demand, rate) of the step its last progress read under demand ended in
        #: Cluster.work_with's memo of the last step read: [step, demand, rate]
        self._step_rate: list | None = None
        # streaming runs (keep_history=False): what its trace row needs from its launch
        # (running count and load averages, then the tenants' demand, the truth when on and
        # the node's levels), written at its launch to its job's flat ``_recs``: its offset
        # there (an array of its own took 208 bytes a running attempt; a list of floats or an
        # array, as hand-built attempts hold, moves there when it closes: :func:`shed_closed`)
        self._rec: array | list[float] | int | None = None
        # a streaming run's solve that stopped at the end of the contention paths
        # (Cluster.PastPaths): its pending heap entry is an EV_CHECK there, not its end
        self._ckpt: PastPaths | None = None
        # a deferred end solve (its heap seq, start, work left) while its EV_SOLVE is pending
        self._solve: tuple[int, float, float] | None = None
        # its stage's contention profile on the cluster (``task.job.pids[task.stage]``), held
        # from its launch so the co-tenants' re-solves read one slot, not a chain of four
        # objects (None on an attempt built by hand: :func:`profile_of` reads the chain)
        self._pid = pid

    @property
    def job(self) -> Job:
        return self.task.job

    @property
    def running(self) -> bool:
        return self.state == A_RUNNING

    def __repr__(self) -> str:
        return (
            f"Attempt({self.task.task_id}#{self.index} on node {self.node}, "
            f"launched {self.launch_time:.3f}, "
            f"state {('running', 'finished', 'killed')[self.state]})"
        )


def list_memo() -> list:
    """A new rate memo ``[step, demand, rate]`` as a list: the reference of
    ``sim_bridge._attempt_core.RateMemo`` (``Cluster.work_with`` reads and writes either).

    Examples
    --------
    >>> list_memo()
    [-1, None, 0.0]
    """
    return [-1, None, 0.0]


_core: Any = optional_extension("_attempt_core")
#: a new attempt's rate memo (:attr:`PyAttempt._step_rate`, made at its first progress read
#: under co-located demand): a compiled ``RateMemo`` where the extension is built, else a list
new_memo: Callable[[], Any] = list_memo if _core is None else _core.RateMemo
if TYPE_CHECKING:
    Attempt = PyAttempt
else:
    Attempt = PyAttempt if _core is None else _core.Attempt


class Task:
    """A task of a job (read-only for policies).

    Attributes
    ----------
    uid : int
        Global index.
    job : Job
    index : int
        Index within the job.
    stage : int
        0 (``map``/``task``) or 1 (``reduce``).
    phase : str
    work : float
        Base work (s on an idle nominal node, before noise).
    state : int
        0 blocked (its stage is not runnable yet), 1 waiting, 2 running, 3 done.
    attempts : Sequence[Attempt]
        Every attempt in launch order: a list, except for a task never launched (the shared
        empty tuple ``()``) and, in a streaming run, a done task whose one attempt finished
        (a :class:`OneFinished`, rebuilt from its job's rows when read).
    n_live : int
        How many of its attempts are running.
    live : dict[int, Attempt]
        Running attempts by uid, in launch order: built from ``attempts`` when read, a new
        dict each time (a task holds only their count, ``n_live``). Read-only and shared
        when there are none: :data:`NOT_LAUNCHED` before the first launch, :data:`NO_LIVE`
        once done.
    finish_time : float or None
    """

    __slots__ = (
        "uid",
        "job",
        "index",
        "stage",
        "phase",
        "work",
        "state",
        "attempts",
        "n_live",
        "finish_time",
        "first_launch",
        "_u0",
    )

    def __init__(
        self, uid: int, job: Job, index: int, stage: int, phase: str, work: float, u0: float
    ):
        self.uid = uid
        self.job = job
        self.index = index
        self.stage = stage
        self.phase = phase
        self.work = work
        self.state = BLOCKED
        # shared empty containers until the first launch (~120 bytes a task of a big job
        # waiting to run: FB-2009's largest job has 112k tasks); _launch makes its own
        self.attempts: Sequence[Attempt] = ()
        # a count, not a dict of the running attempts: a dict of one took 240 bytes a
        # running task, a quarter of what a running attempt held in the FB-2010 day (6.3 h)
        self.n_live = 0
        self.finish_time: float | None = None
        self.first_launch: float | None = None
        self._u0 = u0

    @property
    def task_id(self) -> str:
        return f"{self.job.job_id}-{self.phase[0]}{self.index}"

    @property
    def done(self) -> bool:
        return self.state == DONE

    @property
    def live(self) -> dict[int, Attempt]:
        if not self.n_live:
            if self.state == DONE:
                return NO_LIVE
            return NOT_LAUNCHED if not self.attempts else {}
        return {a.uid: a for a in self.attempts if a.state == A_RUNNING}

    def __repr__(self) -> str:
        return (
            f"Task({self.task_id}, state {('blocked', 'waiting', 'running', 'done')[self.state]})"
        )


class Job:
    """A job in the simulation (read-only for policies).

    Attributes
    ----------
    uid : int
        Arrival order (0, 1, ...).
    job_id, workload : str
    submit_time : float
    deadline : float
        Absolute deadline (s) used for PoCD and by deadline-aware policies.
    tasks : Sequence[Task]
        In task index order: a list, or in a streaming run a
        :class:`~sim_bridge._task_list.TaskList` (a read-only sequence that builds a done
        task nobody held again when read: the same fields, a new object).
    stages : list[Sequence[Task]]
        The tasks of each stage (the same kind as ``tasks``).
    stage : int
        The stage now runnable.
    pending : dict[int, Task]
        Waiting tasks by task index (insertion order: the order they became waiting). In a
        streaming run, a big job's is a :class:`~sim_bridge._waiting_tasks.WaitingTasks`, a
        mapping with the same items in the same order whose tasks are made when read.
    running : dict[int, Attempt]
        Live attempts by uid.
    n_done : int
        Finished tasks.
    finish_time : float or None
    """

    __slots__ = (
        "uid",
        "spec",
        "job_id",
        "workload",
        "submit_time",
        "deadline",
        "tasks",
        "stages",
        "stage",
        "stage_left",
        "pending",
        "running",
        "n_done",
        "n_tasks",
        "finish_time",
        "alpha",
        "_pdel",
        "_rdel",
        "_m",
        "_m_off",
        "_m_end",
        "_m_left",
        "pids",
        "_rng",
        "_seed",
        "_recs",
        "_one",
        "_done_f",
        "_many_i",
        "_many_f",
        "_many_n",
        "_nspill",
        "_maker",
    )

    # set by the engine when the job arrives (``Simulator._arrive``)
    uid: int
    spec: JobSpec
    job_id: str
    workload: str
    submit_time: float
    deadline: float
    tasks: Sequence[Task]
    stages: list[Sequence[Task]]
    stage: int
    stage_left: list[int]
    pending: dict[int, Task]
    running: dict[int, Attempt]
    n_done: int
    n_tasks: int
    finish_time: float | None
    alpha: float
    _pdel: int  # deletions from ``pending`` since it was last rebuilt
    _rdel: int  # deletions from ``running`` since it was last rebuilt
    _m: MutableSequence[float]  # the originals' residual noise multipliers (array('d'))
    #: streaming runs: the task index of ``_m``'s first number, the end of its first stage,
    #: and how many originals of that stage are still to launch (:func:`read_noise`)
    _m_off: int
    _m_end: int
    _m_left: int
    pids: tuple[int, int]  # the cluster's profile ids of the two stages
    _rng: np.random.Generator | None
    _seed: tuple[int, int, int]
    #: streaming runs: the launch records of its closed attempts, end to end (each attempt's
    #: ``_rec`` is then its offset here; :func:`shed_closed`)
    _recs: array | None
    #: streaming runs: per task (by index) the uid, node and launch record's offset of a done
    #: task's one finished attempt (:class:`OneFinished`) and the task's uid; None until one
    #: is kept (a big job's, in a file mapping: a memoryview of the same layout,
    #: :class:`sim_bridge._row_maps.RowMaps`)
    _one: array | None
    #: streaming runs: per task (by index) the work, first launch and finish time of a
    #: :class:`DoneOne` (``DONE_F`` floats a task); allocated with ``_one``
    _done_f: array | None
    #: streaming runs: the integers and floats of the closed attempts of its done tasks that
    #: ran several (:class:`sim_bridge._closed_attempts.ClosedAttempts`); None until a task
    #: is packed
    _many_i: array | None
    _many_f: array | None
    #: the attempts' rows used in them (a big job's are the room of a mapping, of a fixed
    #: size: :class:`sim_bridge._row_maps.RowMaps`)
    _many_n: int
    #: streaming runs: the first floats of its launch records, moved to a file
    #: (:class:`sim_bridge._record_spill.RecordSpill`; offsets count them)
    _nspill: int
    #: streaming runs: what a big job's tasks not made yet are made from
    #: (:class:`sim_bridge._waiting_tasks.TaskMaker`), or None
    _maker: Any

    def __init__(self) -> None:
        self._rdel = 0
        self._m_off = 0
        self._m_end = 0
        self._m_left = 0
        self._recs = None
        self._one = None
        self._done_f = None
        self._many_i = None
        self._many_f = None
        self._many_n = 0
        self._nspill = 0
        self._maker = None

    @property
    def rng(self) -> np.random.Generator:
        """The job's own generator (draws of copies' noise), created on first use."""
        if self._rng is None:
            self._rng = np.random.default_rng(list(self._seed))
        return self._rng

    def __repr__(self) -> str:
        return f"Job({self.job_id}, {self.n_done}/{self.n_tasks} done)"

    @property
    def done(self) -> bool:
        return self.finish_time is not None

    def release(self) -> None:
        """Break the job's reference cycles (job <-> task <-> attempt) once it is done and
        its rows are read, so that reference counting frees it at once.

        The cyclic collector is paused during a run (:func:`sim_bridge._gc.gc_paused`), so a
        finished job whose cycles stay whole would live to the end of the run. After this the
        job has no tasks (``tasks``, ``stages``, ``pending`` and ``running`` empty, no noise
        draws) and its tasks no attempts; an attempt or task still held elsewhere (a stale
        heap entry of a killed copy) keeps its scalar fields and its links up
        (``attempt.task``, ``task.job``). Streaming runs call it once the trace sink has read
        the job's rows; nothing simulated reads a finished job's tasks.

        Examples
        --------
        >>> job = Job()
        >>> job.job_id, job.uid, job.finish_time = "j1", 0, 5.0
        >>> task = Task(0, job, 0, 0, "map", 1.0, 0.5)
        >>> job.tasks, job.stages, job.pending = [task], [[task], []], {}
        >>> task.attempts = [Attempt(0, task, 0, node=0, launch_time=0.0, start_fraction=0.0)]
        >>> job.release()
        >>> job.tasks, task.attempts, task.job is job
        ([], (), True)
        """
        if self.finish_time is None:
            raise ValueError(f"job {self.job_id!r} is not done: it cannot be released")
        # a streaming run's tasks are views of one storage (sim_bridge._task_list.TaskList):
        # its dropped done tasks (None) are not built again to be released (nor a task not
        # made yet, sim_bridge._waiting_tasks.UNBUILT: none is left in a done job)
        for task in getattr(self.tasks, "_items", self.tasks):
            if isinstance(task, Task):
                task.attempts = ()
        self.tasks = []
        self.stages = [[], []]
        self.pending = {}
        self.running = {}  # emptied, but a dict keeps the table it grew to
        self._m = []  # the originals' noise multipliers, read at their launches only
        self._recs = None
        self._one = None
        self._done_f = None
        self._many_i = None
        self._many_f = None
        self._maker = None

    def originals_done_durations(self) -> list[float]:
        """Durations of the finished original attempts (attempt 0) so far."""
        out = []
        for t in self.tasks:
            if t.attempts:
                first = t.attempts[0]
                if first.state == A_FINISHED and first.end_time is not None:  # set when closed
                    out.append(first.end_time - first.launch_time)
        return out


class _NoLive(dict):
    """An empty mapping that refuses writes: the ``live`` of every done task (one shared
    instance, :data:`NO_LIVE`, instead of an empty dict per task)."""

    __slots__ = ()
    _why = "a done task has no live attempts: its live mapping is read-only"

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(self._why)

    __setitem__ = _refuse  # type: ignore[assignment]
    update = _refuse  # type: ignore[assignment]
    setdefault = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]


class _NotLaunched(_NoLive):
    """:class:`_NoLive` for tasks never launched (:data:`NOT_LAUNCHED`)."""

    __slots__ = ()
    _why = "a task never launched has no live attempts: its live mapping is read-only"


#: ``Task.live`` of a done task (it has no live attempt and never will): read-only, shared.
NO_LIVE: dict[int, Attempt] = _NoLive()

#: ``Task.live`` of a task never launched (once launched, a read builds a new dict of its
#: running attempts): read-only, shared.
NOT_LAUNCHED: dict[int, Attempt] = _NotLaunched()


class OneFinished(Sequence[Attempt]):
    """``Task.attempts`` of a done task whose one attempt finished, in a streaming run.

    Most tasks run one attempt. Once it finished, a streaming run (``keep_history=False``)
    keeps what its trace row and its read-only fields need in its job's rows (``Job._one``:
    its uid, node and launch record's offset; its launch and end are the task's
    ``first_launch`` and ``finish_time``) and drops the :class:`Attempt` object, its
    attempts list and their numbers: ~300 bytes a done task, which the jobs alive hold
    until they end (millions of tasks in an FB-2010 day). The task becomes a
    :class:`DoneOne`, which builds this view when its ``attempts`` is read.

    It is a read-only sequence of length 1. Each read rebuilds the attempt, equal in every
    public field (``uid``, ``task``, ``index``, ``node``, ``launch_time``,
    ``start_fraction``, ``state``, ``end_time``) to the one that ran, but not the same
    object: a policy that needs an attempt's identity keeps the one its hooks were given.

    Examples
    --------
    >>> job = Job()
    >>> job.job_id, job.uid, job.n_tasks, job.finish_time = "j", 0, 2, None
    >>> task = Task(0, job, 1, 0, "map", 10.0, 0.5)
    >>> att = Attempt(7, task, 0, node=3, launch_time=2.0, start_fraction=0.0)
    >>> task.attempts, task.first_launch = [att], att.launch_time
    >>> att._rec, att.state, att.end_time = [1, 0.5, 0.25, 0.125], 1, 9.0
    >>> shed_closed(att)
    True
    >>> task.finish_time = att.end_time
    >>> type(task.attempts).__name__, len(task.attempts)
    ('OneFinished', 1)
    >>> a = task.attempts[0]
    >>> (a.uid, a.node, a.launch_time, a.end_time, a.state, a.task is task, a._rec)
    (7, 3, 2.0, 9.0, 1, True, 0)
    """

    __slots__ = ("task",)

    def __init__(self, task: Task):
        self.task = task

    def _attempt(self) -> Attempt:
        task = self.task
        one = task.job._one
        assert one is not None  # set with the view (shed_closed)
        k = ONE_ROW * task.index
        att = Attempt(one[k], task, 0, one[k + 1], task.first_launch, 0.0)  # type: ignore[arg-type]
        att.state = A_FINISHED
        att.end_time = att._end = task.finish_time  # type: ignore[assignment]
        att._rec = one[k + 2]
        return att

    def __len__(self) -> int:
        return 1

    @overload
    def __getitem__(self, i: int) -> Attempt: ...

    @overload
    def __getitem__(self, i: slice) -> list[Attempt]: ...

    def __getitem__(self, i: int | slice) -> Attempt | list[Attempt]:
        if isinstance(i, slice):
            return [self._attempt()][i]
        if i != 0 and i != -1:
            raise IndexError(f"attempt index {i} out of range: the task ran one attempt")
        return self._attempt()

    def __iter__(self) -> Iterator[Attempt]:
        return iter((self._attempt(),))

    def __repr__(self) -> str:
        return f"OneFinished([{self._attempt()!r}])"


#: the slots :class:`DoneOne` shadows with properties (their values move to its job's rows)
_SHADOWED = ("attempts", "uid", "work", "first_launch", "finish_time")
_SLOT: dict[str, Any] = {name: Task.__dict__[name] for name in _SHADOWED}
_ATTEMPTS_SLOT: Any = _SLOT["attempts"]


class DoneOne(Task):
    """A done :class:`Task` of a streaming run whose one attempt finished.

    A streaming run turns such a task into this subclass (``__class__`` assignment: the same
    layout, no field added) and moves its numbers into its job's rows: its ``uid`` to
    ``Job._one``, its ``work``, ``first_launch`` and ``finish_time`` to ``Job._done_f``.
    They read the same values (ints and floats are read back exactly), and ``attempts`` is
    a :class:`OneFinished` built when read. A done task of a live job then holds no number
    objects and no view: ~140 bytes less each, and the jobs alive hold millions of them
    (8.5M at 24 h of an FB-2010 day). Setting ``attempts`` (as :meth:`Job.release` does)
    makes it a plain :class:`Task` again, its numbers back in its slots.

    Examples
    --------
    >>> job = Job()
    >>> job.job_id, job.uid, job.n_tasks, job.finish_time = "j", 0, 1, None
    >>> task = Task(5, job, 0, 0, "map", 10.0, 0.5)
    >>> att = Attempt(3, task, 0, node=1, launch_time=2.0, start_fraction=0.0)
    >>> task.attempts, task.first_launch = [att], att.launch_time
    >>> att._rec, att.state, att.end_time = [1.0], 1, 9.0
    >>> shed_closed(att)
    True
    >>> task.finish_time = 9.0  # the engine sets it once the attempt is closed
    >>> type(task).__name__, isinstance(task, Task), task.attempts[0].uid
    ('DoneOne', True, 3)
    >>> task.uid, task.work, task.first_launch, task.finish_time
    (5, 10.0, 2.0, 9.0)
    >>> task.attempts = ()
    >>> type(task).__name__, task.attempts, task.uid, task.finish_time
    ('Task', (), 5, 9.0)
    """

    __slots__ = ()

    @property  # type: ignore[override]
    def attempts(self) -> Sequence[Attempt]:
        return OneFinished(self)

    @attempts.setter
    def attempts(self, value: Sequence[Attempt]) -> None:
        numbers = [(_SLOT[name], getattr(self, name)) for name in _SHADOWED[1:]]
        self.__class__ = Task  # type: ignore[assignment]
        for slot, v in numbers:
            slot.__set__(self, v)
        _ATTEMPTS_SLOT.__set__(self, value)

    @property
    def uid(self) -> int:  # type: ignore[override]  # read-only once done
        return self.job._one[ONE_ROW * self.index + 3]  # type: ignore[index]

    @property
    def work(self) -> float:  # type: ignore[override]  # read-only once done
        return self.job._done_f[DONE_F * self.index]  # type: ignore[index]

    @property
    def first_launch(self) -> float:  # type: ignore[override]  # read-only once done
        return self.job._done_f[DONE_F * self.index + 1]  # type: ignore[index]

    @property  # type: ignore[override]
    def finish_time(self) -> float | None:
        t = self.job._done_f[DONE_F * self.index + 2]  # type: ignore[index]
        return None if t != t else t  # NaN: not set yet

    @finish_time.setter
    def finish_time(self, t: float | None) -> None:
        self.job._done_f[DONE_F * self.index + 2] = math.nan if t is None else t  # type: ignore[index]


#: keep a done task's one finished attempt as its job's row (:class:`DoneOne`); off, it keeps
#: its attempt object (the same trace: ``tests/test_done_task_rows.py``)
ONE_AS_ROW = True


def profile_of(att: Attempt) -> int:
    """The cluster's contention profile id of ``att``'s stage: ``att._pid``, held from its
    launch, else read from its task and job (an attempt built by hand).

    Examples
    --------
    >>> job = Job()
    >>> job.pids = (4, 7)
    >>> task = Task(0, job, 0, 1, "reduce", 10.0, 0.0)
    >>> att = Attempt(0, task, 0, node=3, launch_time=1.5, start_fraction=0.0)
    >>> profile_of(att), profile_of(Attempt(1, task, 1, 3, 2.0, 0.0, pid=9))
    (7, 9)
    """
    pid = att._pid
    if pid is None:
        task = att.task
        return task.job.pids[task.stage]
    return pid


def read_noise(job: Job, index: int) -> float:
    """A streaming run's read of task ``index``'s original noise multiplier (once, at the
    original's launch), letting a stage's numbers go once all its originals have read them.

    ``job._m`` holds the numbers of the tasks ``job._m_off`` to ``job._m_off + len(job._m)
    - 1``, and ``job._m_left`` counts the originals still to launch in its first stage,
    the tasks before ``job._m_end``. A stage launches every original before the next stage
    runs (a stage begins once every task of the one before it is done), so when the count
    reaches 0 those numbers are spent: the list keeps the next stage's numbers, or none.
    The FB-2010 day held one number (8 bytes) for each of its 8.5M done tasks of live jobs
    at 24 h.

    Examples
    --------
    >>> job = Job()
    >>> job.job_id = "j"
    >>> job._m, job._m_off, job._m_end, job._m_left = [1.5, 2.0, 3.0], 0, 2, 2  # 2 maps, 1 reduce
    >>> read_noise(job, 1), job._m
    (2.0, [1.5, 2.0, 3.0])
    >>> read_noise(job, 0), job._m, job._m_off, job._m_end, job._m_left
    (1.5, [3.0], 2, 3, 1)
    >>> read_noise(job, 2), job._m
    (3.0, [])
    """
    k = index - job._m_off
    if k < 0 or index >= job._m_end:
        raise RuntimeError(
            f"job {job.job_id!r}: task {index}'s noise read outside its current stage's "
            f"numbers (tasks {job._m_off} to {job._m_end - 1}): an original launched twice, "
            "or before the stage ahead of its own had launched all its originals"
        )
    mult = job._m[k]
    left = job._m_left - 1
    if left:
        job._m_left = left
    else:  # the stage's originals have all launched: its numbers are spent
        rest = job._m[job._m_end - job._m_off :]
        job._m = rest
        job._m_off = job._m_end
        job._m_end += len(rest)
        job._m_left = len(rest)
    return mult


def shed_closed(att: Attempt) -> bool:
    """Streaming runs (``keep_history=False``): shrink a closed attempt to what is still read.

    Its launch record is in its job's flat ``_recs`` array, where the engine writes it at the
    launch (``_rec`` its offset there; the trace sink reads it when the job is done); a
    record of its own (a list or an ``array("d")`` of floats) moves there now. The rate memo
    of its progress reads goes (a cache: reads give the same values without it). A finished
    attempt's progress is 1 and is no longer computed, so its segment state goes too, and its
    task (done: no attempt will be added) drops its original's spent draw and gets an
    exact-size attempts list or, when that attempt was its only one (started from scratch), a
    :class:`OneFinished`: the attempt then lives on as three integers of its job's ``_one``.
    A killed attempt keeps what its progress at its end is read from. Returns whether its
    task became a :class:`DoneOne`.

    Examples
    --------
    >>> job = Job()
    >>> job.job_id, job.uid, job.finish_time = "j", 0, None
    >>> task = Task(0, job, 0, 0, "map", 10.0, 0.5)
    >>> att = Attempt(0, task, 0, node=1, launch_time=2.0, start_fraction=0.0)
    >>> att._rec = array("d", [1, 0.5, 0.25, 0.125])
    >>> att._step_rate, att.state = [3, None, 0.9], 1
    >>> shed_closed(att)
    False
    >>> att._rec, att._step_rate, job._recs.tolist()
    (0, None, [1.0, 0.5, 0.25, 0.125])
    """
    rec = att._rec
    if isinstance(rec, (array, list)):  # still its record (not yet an offset)
        job = att.task.job
        recs = job._recs
        if recs is None:
            recs = job._recs = array("d")
        att._rec = job._nspill + len(recs)  # its offset (after the ones on disk, if any)
        recs.extend(rec)
    att._step_rate = None
    if att.state == A_FINISHED:
        att._dem = None
        att._prog = None
        att._ckpt = None
        att._c0 = att._seg_done = att._work = 0.0
        if att.end_time is not None:  # set when closed: the same value, share the object
            att._end = att.end_time
        # its task is done: no attempt will be added, and its original's draw is spent
        task = att.task
        task._u0 = 0.0
        atts = task.attempts
        if (
            ONE_AS_ROW
            and len(atts) == 1
            and att.start_fraction == 0.0
            and task.first_launch == att.launch_time
            and type(att._rec) is int
        ):  # its one attempt: kept as its job's row (:class:`OneFinished`)
            task_to_row(task, att.uid, att.node, att._rec, DoneOne)  # type: ignore[arg-type]
            return True
        task.attempts = atts[:]  # exact size
    return False


def task_to_row(task: Task, a: int, b: int, c: int, cls: type[DoneOne]) -> None:
    """Move the done ``task``'s numbers into its job's rows and make it a ``cls`` (a
    :class:`DoneOne`, or a subclass that reads its attempts otherwise): ``Job._one`` gets
    ``a``, ``b``, ``c`` (what ``cls`` reads its attempts from) and the task's uid,
    ``Job._done_f`` its work, first launch and finish time (NaN until set). Its attempts
    list and its numbers go: reads build the view and read the rows."""
    job = task.job
    one, done_f = job._one, job._done_f
    if one is None or done_f is None:
        one = job._one = array("q", bytes(8 * ONE_ROW * job.n_tasks))
        done_f = job._done_f = array("d", bytes(8 * DONE_F * job.n_tasks))
    k = ONE_ROW * task.index
    one[k] = a
    one[k + 1] = b
    one[k + 2] = c
    one[k + 3] = task.uid
    f = DONE_F * task.index
    done_f[f] = task.work
    done_f[f + 1] = task.first_launch  # type: ignore[assignment]  # set at its first launch
    fin = task.finish_time
    done_f[f + 2] = math.nan if fin is None else fin
    for slot in _SLOT.values():
        slot.__set__(task, None)
    task.__class__ = cls


def task_indices(n: int) -> list[int]:
    """A list whose first ``n`` items are the ints ``0 .. n - 1``, the same objects for every
    job: a task's ``index`` (and its key in its job's ``pending``) past 256 is otherwise an
    int object of its own, 32 bytes a task that the jobs alive hold until they end (8.5M
    done tasks of live jobs at 24 h of an FB-2010 day). Ints are immutable: sharing them
    changes no value.

    Examples
    --------
    >>> a, b = task_indices(1000), task_indices(300)
    >>> a[:3], a[999] is task_indices(2000)[999], len(b) >= 300
    ([0, 1, 2], True, True)
    """
    have = len(_INDICES)
    if n > have:
        _INDICES.extend(range(have, max(n, 2 * have)))
    return _INDICES
