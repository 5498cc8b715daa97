"""A streaming run's big jobs make a task object only when something reads the task.

A job's tasks that wait for a slot, or for their stage to become runnable, are objects from
the job's arrival: a :class:`~sim_bridge._jobs.Task` (144 bytes), its uid and work (28 and
24 bytes) and its entry in ``job.pending`` (~40 bytes). When the FB-2010 day's cluster fills
in its 14th hour (33,000 x 10 slots, LATE), 314,751 tasks wait at once, and the Python objects
of the process grow from 377 MB (323,000 attempts running at 6.3 h, nothing waiting) to
482 MB (330,000 running, that queue); a replay on a cluster too small for its trace queues
without bound.

Here a big job (:data:`LAZY_MIN_TASKS` tasks or more) of a streaming run holds, until a task
is read, only its work (8 bytes in an array) and a marker (:data:`UNBUILT`) in its storage
(:class:`~sim_bridge._task_list.TaskList`). :class:`TaskMaker` makes the task, with the same
fields it had from the arrival, when the engine launches it or anything reads it (``job.tasks``,
``job.stages``, ``job.pending``); it is kept from then on, so ``job.tasks[i] is t`` holds
for every ``t`` read. ``job.pending`` is a :class:`WaitingTasks`: the job's waiting tasks in
the order a dict of them would have, as a few tasks put back at the front (a killed task's,
:meth:`WaitingTasks.push_front`) and then a run of storage positions, minus those taken out
of order. Nothing a policy reads changes: the same tasks, fields and order
(``tests/test_waiting_tasks.py`` compares whole traces with :data:`LAZY_TASKS` off).

Examples
--------
>>> from array import array
>>> from sim_bridge._jobs import Job
>>> from sim_bridge._task_list import set_task_lists
>>> job = Job()
>>> job.job_id, job.uid, job.n_tasks, job.stage, job.finish_time = "j", 0, 3, 0, None
>>> job.spec = type("Spec", (), {"phases": ("map", "reduce")})()
>>> job._maker = TaskMaker(100, array("d", [4.0, 5.0, 6.0]), None)
>>> set_task_lists(job, [UNBUILT] * 3, 2)
>>> job.pending = WaitingTasks(job.tasks, 0, 2)
>>> len(job.pending), list(job.pending)
(2, [0, 1])
>>> t = job.pending[1]
>>> t.uid, t.work, t.state, job.tasks[1] is t
(101, 5.0, 1, True)
>>> del job.pending[0]
>>> [x.uid for x in job.pending.values()], job.tasks[2].state  # the reduce is blocked
([101], 0)
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, MutableMapping, Sequence, ValuesView
from typing import TYPE_CHECKING, Any

from sim_bridge._jobs import Task, task_indices
from sim_bridge._states import BLOCKED, WAITING

if TYPE_CHECKING:
    from sim_bridge._jobs import Job

__all__ = ["LAZY_MIN_TASKS", "LAZY_TASKS", "UNBUILT", "TaskMaker", "WaitingTasks", "built_in"]

#: let a streaming run's big jobs make their tasks when first read (off: every task is an
#: object from its job's arrival, as in a run that keeps its history; the same trace,
#: ``tests/test_waiting_tasks.py``)
LAZY_TASKS = True

#: jobs of this many tasks or more make them when read. A job's waiting tasks then cost a
#: Python call each at its launch (:meth:`WaitingTasks.__delitem__`, the view's iterator)
#: instead of a dict operation; small jobs keep their dict. Jobs of 1,024 tasks or more are
#: 7% of the FB-2010 day's 24,437 jobs and hold 94% of its tasks (16% and 77% of Alibaba
#: 2017's 11,644 jobs and tasks). Since 2026-11-30 (s) the bound is 256: 98% and 97% of the
#: tasks, with 11% and 44% of the jobs. Alibaba 2017's whole table without speculation, whose
#: slots are full and whose tasks wait, peaked at 687 MB at 6.02 h against 732 MB at 6.14 h
#: with 1,024 (memory grows ~45 MB an hour there), with the same CPU (339 s each; one pair,
#: side by side, ``bench/bench_day.py --until 6``).
LAZY_MIN_TASKS = 256

_ZERO = 0.0  # the shared unread draw (sim_bridge._sim_arrivals.SHARE_UNREAD_DRAWS)


class _Unbuilt:
    """The marker of a task not made yet in its job's storage."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNBUILT"

    def __reduce__(self) -> str:
        return "UNBUILT"


#: a task not made yet, in its job's storage (:class:`~sim_bridge._task_list.TaskList`)
UNBUILT = _Unbuilt()


class TaskMaker:
    """What a big job's tasks are made from: the first task's uid, every task's work and,
    when something reads them, their uniform draws (None: the shared 0.0).

    Parameters
    ----------
    uid0 : int
        The uid of the job's first task (its ``k``-th task is ``uid0 + k``).
    work : array of float
        Each task's base work.
    u0 : list of float, optional
        Each task's uniform draw, or None when nothing reads them.

    Examples
    --------
    >>> from array import array
    >>> m = TaskMaker(7, array("d", [1.5]), None)
    >>> m.uid0, m.work.tolist(), m.u0
    (7, [1.5], None)
    """

    __slots__ = ("uid0", "work", "u0")

    def __init__(self, uid0: int, work: array, u0: list[float] | None):
        self.uid0 = uid0
        self.work = work
        self.u0 = u0

    def make(self, job: Job, k: int, n0: int) -> Task:
        """Task ``k`` of ``job`` (its first ``n0`` tasks are the first stage), with the fields
        the arrival gave it: waiting when its stage is the runnable one (a task not made was
        never launched), else blocked."""
        stage = 0 if k < n0 else 1
        u0 = self.u0
        t = Task(
            self.uid0 + k,
            job,
            task_indices(k + 1)[k],
            stage,
            job.spec.phases[stage],
            self.work[k],
            _ZERO if u0 is None else u0[k],
        )
        t.state = WAITING if stage == job.stage else BLOCKED
        return t


class _Values(ValuesView):
    """``WaitingTasks.values()``: its tasks in order, each made when reached."""

    _mapping: WaitingTasks

    def __iter__(self) -> Iterator[Task]:
        return self._mapping._iter_tasks()


class WaitingTasks(MutableMapping[int, Task]):
    """A big job's ``pending`` in a streaming run: its waiting tasks by index, in the order
    a dict of them would keep (insertion order), made only when read.

    It holds a dict of the tasks put back at the front (:meth:`push_front`) or added while
    the run was not empty, then a run of storage positions ``lo .. hi - 1`` (a task's index
    is its position in the job's storage), less those taken out of the run out of order.
    Changing it while iterating over it raises ``RuntimeError``, as a dict does.

    Parameters
    ----------
    tasks : TaskList
        The job's ``tasks`` (its ``_at`` makes a task not made yet).
    lo, hi : int
        The run of waiting positions.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> class Tasks:  # a storage whose position k makes a task of index k
    ...     def _at(self, k): return SimpleNamespace(index=k)
    >>> w = WaitingTasks(Tasks(), 0, 4)
    >>> del w[2]; w.push_front(SimpleNamespace(index=2))  # taken, then put back first
    >>> list(w), [t.index for t in w.values()]
    ([2, 0, 1, 3], [2, 0, 1, 3])
    """

    __slots__ = ("_tasks", "_front", "_lo", "_hi", "_gone", "_changes")

    def __init__(self, tasks: Any, lo: int, hi: int):
        self._tasks = tasks
        self._front: dict[int, Any] = {}
        self._lo = lo
        self._hi = hi
        self._gone: set[int] = set()  # positions in the run taken out of order
        self._changes = 0  # of the size, for iterators (a dict's "changed size" error)

    # the mapping
    def __len__(self) -> int:
        return len(self._front) + self._hi - self._lo - len(self._gone)

    def __bool__(self) -> bool:
        return bool(self._front) or self._hi - self._lo > len(self._gone)

    def _in_run(self, k: Any) -> bool:
        return type(k) is int and self._lo <= k < self._hi and k not in self._gone

    def __contains__(self, k: object) -> bool:
        return k in self._front or self._in_run(k)

    def __getitem__(self, k: int) -> Task:
        t = self._front.get(k)
        if t is not None:
            return t
        if self._in_run(k):
            return self._tasks._at(k)
        raise KeyError(k)

    def __setitem__(self, k: int, task: Task) -> None:
        if k in self._front:
            self._front[k] = task
        elif self._in_run(k):  # a dict keeps the key's place: the run already makes it
            if self._tasks._at(k) is not task:
                raise ValueError(f"waiting task {k}: another task is already at its index")
        else:  # a new key goes last: after the run, so the run moves to the dict first
            self._spill_run()
            self._front[k] = task
            self._changes += 1

    def __delitem__(self, k: int) -> None:
        front = self._front
        if k in front:
            del front[k]
        elif self._in_run(k):
            if k == self._lo:
                lo = k + 1
                gone = self._gone
                while gone and lo in gone:  # taken before: the run starts past them
                    gone.discard(lo)
                    lo += 1
                self._lo = lo
                if lo == self._hi:
                    gone.clear()
            else:
                self._gone.add(k)
        else:
            raise KeyError(k)
        self._changes += 1

    def __iter__(self) -> Iterator[int]:
        changes = self._changes
        for k in self._front:
            yield k
            if self._changes != changes:
                raise _changed()
        gone = self._gone
        for k in range(self._lo, self._hi):
            if k not in gone:
                yield k
                if self._changes != changes:
                    raise _changed()

    def values(self) -> _Values:  # type: ignore[override]
        return _Values(self)

    def _iter_tasks(self) -> Iterator[Task]:
        changes = self._changes
        for t in self._front.values():
            yield t
            if self._changes != changes:
                raise _changed()
        at, gone = self._tasks._at, self._gone
        for k in range(self._lo, self._hi):
            if k not in gone:
                yield at(k)
                if self._changes != changes:
                    raise _changed()

    def __repr__(self) -> str:
        return f"WaitingTasks({len(self)} tasks)"

    # what the engine does to a job's waiting tasks
    def push_front(self, task: Task) -> None:
        """Put ``task`` first (a task whose attempts were all killed), as
        ``{task.index: task} | pending`` would."""
        k = task.index
        if self._in_run(k):
            self._gone.add(k)
        front = {k: task}
        front.update((i, t) for i, t in self._front.items() if i != k)
        self._front = front
        self._changes += 1

    def extend_run(self, lo: int, hi: int) -> None:
        """Add the positions ``lo .. hi - 1`` last (a stage that became runnable)."""
        if lo >= hi:
            return
        if self._hi - self._lo > len(self._gone):
            self._spill_run()  # a run already: it moves to the dict, ahead of the new one
        self._lo, self._hi = lo, hi
        self._gone = set()
        self._changes += 1

    def _spill_run(self) -> None:
        """Move the run's tasks (made now) to the dict, in order, and empty the run."""
        at, gone = self._tasks._at, self._gone
        for k in range(self._lo, self._hi):
            if k not in gone:
                self._front[k] = at(k)
        self._lo = self._hi
        self._gone = set()


def _changed() -> RuntimeError:
    return RuntimeError("a job's waiting tasks changed size during iteration")


def built_in(items: Sequence[Any], lo: int, hi: int) -> Iterator[Task]:
    """The tasks already made at positions ``lo .. hi - 1`` of a job's storage (neither
    :data:`UNBUILT` nor a dropped done task's None)."""
    it = items.iter_range(lo, hi) if hasattr(items, "iter_range") else items[lo:hi]
    for t in it:
        if t is not None and t is not UNBUILT:
            yield t
