"""A streaming run's ``job.tasks`` and ``job.stages``: done tasks nobody holds become rows.

A streamed FB-2010 day keeps 8.5M done tasks of live jobs at 24 h (a job lives until its last
task ends). A done task whose one attempt finished is already a :class:`DoneOne` whose
numbers live in its job's rows (``Job._one``, ``Job._done_f``); its object still costs 128
bytes. :class:`TaskList` lets the engine drop that object when nothing but the job refers to
it (:func:`drop_unheld`, by reference count), and builds an equal one when it is read again
(kept from then on). A task a policy, an attempt or a heap entry still refers to is never
dropped, so ``job.tasks[i] is t`` holds for every ``t`` anyone kept: only the ``id`` of a
task nobody holds can change.

Examples
--------
>>> from sim_bridge._jobs import DONE_F, ONE_ROW, DoneOne, Job, Task
>>> job = Job()
>>> job.job_id, job.uid, job.n_tasks, job.finish_time = "j", 0, 2, None
>>> job.spec = type("Spec", (), {"phases": ("map", "reduce")})()
>>> tasks = [Task(5, job, 0, 0, "map", 10.0, 0.5), Task(6, job, 1, 1, "reduce", 3.0, 0.5)]
>>> set_task_lists(job, tasks, 1)
>>> len(job.tasks), len(job.stages[0]), job.stages[1][0] is tasks[1]
(2, 1, True)
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

from sim_bridge import _chunked_items as _chunked
from sim_bridge._chunked_items import ChunkedItems
from sim_bridge._closed_attempts import DoneMany
from sim_bridge._jobs import _SHADOWED, _SLOT, DONE_F, ONE_ROW, DoneOne, Job, Task, task_indices
from sim_bridge._states import DONE
from sim_bridge._waiting_tasks import UNBUILT

__all__ = ["DROP_DONE", "DropQueue", "TaskList", "drop_unheld", "set_task_lists", "task_works"]

#: let a streaming run drop the done tasks nobody holds (:func:`drop_unheld`); off, it keeps
#: every task object (the same trace: ``tests/test_task_list.py``)
DROP_DONE = True

#: how many times a queued task that is still held is tried before it is kept for good: by
#: :class:`DropQueue` at 0, 1, 3, 7, 15, ... sweeps after it was queued, so 40 tries reach
#: 2 ** 39 sweeps, past any run. A killed attempt's stale heap entry holds its task until
#: the clock reaches the end it would have had, often hours later for a straggler beaten by
#: its copy: with 7 tries (63 sweeps, until 2026-11-29 (d)) the FB-2010 LATE day held 186,693
#: packed tasks as objects at 3 simulated hours, most of them kept that way (25,731 with 40)
_TRIES = 40

#: the done tasks whose numbers are their job's rows: their objects may be dropped
_AS_ROWS = (DoneOne, DoneMany)


class TaskList(Sequence[Task]):
    """``n`` tasks of a job from position ``lo`` of the job's shared storage (``items``), in a
    streaming run: an item is a :class:`Task`, or None for a done task dropped as a row, which
    a read builds again (a :class:`DoneOne` equal in every field) and keeps.

    ``job.tasks`` is the whole storage, ``job.stages[0]`` and ``job.stages[1]`` its two
    parts: three views of one storage (a list each took 8 bytes a task), a list or, for a
    big job, a :class:`~sim_bridge._chunked_items.ChunkedItems`.
    """

    __slots__ = ("_items", "_job", "_lo", "_n", "_n0")

    def __init__(self, job: Job, items: list[Task | None] | ChunkedItems, lo: int, n: int, n0: int):
        self._job = job
        self._items = items
        self._lo = lo
        self._n = n
        self._n0 = n0  # tasks of the first stage (positions 0 .. n0 - 1 of the storage)

    def __len__(self) -> int:
        return self._n

    def _at(self, k: int) -> Task:
        """The task at storage position ``k``, built again (and kept) if it was dropped, or
        made (and kept) if it was not yet (:data:`~sim_bridge._waiting_tasks.UNBUILT`)."""
        t = self._items[k]
        if t is None:
            t = self._items[k] = revive(self._job, k, self._n0)
        elif t is UNBUILT:
            t = self._items[k] = self._job._maker.make(self._job, k, self._n0)
        return t

    @overload
    def __getitem__(self, i: int) -> Task: ...

    @overload
    def __getitem__(self, i: slice) -> list[Task]: ...

    def __getitem__(self, i: int | slice) -> Task | list[Task]:
        n = self._n
        if isinstance(i, slice):
            return [self._at(self._lo + k) for k in range(*i.indices(n))]
        k = i + n if i < 0 else i
        if not 0 <= k < n:
            raise IndexError(f"task index {i} out of range: the list holds {n} tasks")
        return self._at(self._lo + k)

    def __iter__(self) -> Iterator[Task]:
        items, lo = self._items, self._lo
        if isinstance(items, list):  # by index: the second stage's view skips nothing
            for k in range(lo, lo + self._n):
                t = items[k]
                yield self._at(k) if t is None or t is UNBUILT else t
        else:  # chunks: read in order (an index reads through a Python call)
            for k, t in enumerate(items.iter_range(lo, lo + self._n), lo):
                yield self._at(k) if t is None or t is UNBUILT else t

    def works(self) -> Iterator[float]:
        """Each task's base work, in order, without making a task not yet made or building
        again one dropped: what ``(t.work for t in self)`` gives (a task not made has its
        maker's, a dropped one its job's row's)."""
        items, lo, job = self._items, self._lo, self._job
        it = (
            (items[k] for k in range(lo, lo + self._n))
            if isinstance(items, list)
            else items.iter_range(lo, lo + self._n)
        )
        for k, t in enumerate(it, lo):
            if t is UNBUILT:
                yield job._maker.work[k]
            elif t is None:
                yield job._done_f[DONE_F * k]  # type: ignore[index]
            else:
                yield t.work

    def __repr__(self) -> str:
        return f"TaskList({self._n} tasks of job {self._job.job_id})"


def task_works(job: Job) -> Iterator[float]:
    """The base work of each of ``job``'s tasks, in task order, as ``t.work`` reads it, but
    without making the tasks of a big job's queue (:meth:`TaskList.works`).

    Examples
    --------
    >>> from sim_bridge._jobs import Job, Task
    >>> job = Job()
    >>> job.job_id, job.n_tasks = "j", 2
    >>> job.tasks = [Task(1, job, 0, 0, "map", 2.0, 0.0), Task(2, job, 1, 0, "map", 3.0, 0.0)]
    >>> list(task_works(job))
    [2.0, 3.0]
    """
    tasks = job.tasks
    if type(tasks) is TaskList:
        return tasks.works()
    return (t.work for t in tasks)


def set_task_lists(job: Job, tasks: list[Any], n0: int) -> None:
    """Give ``job`` its ``tasks`` (the first ``n0`` of the first stage) as :class:`TaskList`
    views of one storage: ``tasks`` itself, which the job then owns, or for a job of
    :data:`~sim_bridge._chunked_items.CHUNKED_MIN_TASKS` tasks or more the same items in
    chunks that go once all their tasks were dropped (:class:`ChunkedItems`)."""
    n = len(tasks)
    items: list[Any] | ChunkedItems = tasks
    if n >= _chunked.CHUNKED_MIN_TASKS:
        items = ChunkedItems(tasks, _chunked.CHUNK)
    job.tasks = TaskList(job, items, 0, n, n0)  # type: ignore[assignment]
    job.stages = [TaskList(job, items, 0, n0, n0), TaskList(job, items, n0, n - n0, n0)]  # type: ignore[list-item]


def revive(job: Job, k: int, n0: int) -> DoneOne:
    """The done task at position ``k`` of ``job``, built from its rows: what the dropped
    :class:`DoneOne` or :class:`~sim_bridge._closed_attempts.DoneMany` held (its numbers are
    read from the job's rows, as before; a negative count of attempts there marks the
    second)."""
    one = job._one
    assert one is not None  # a task is dropped only once its row is set
    cls = DoneMany if one[ONE_ROW * k + 1] < 0 else DoneOne
    t = cls.__new__(cls)
    stage = 0 if k < n0 else 1
    t.job = job
    t.index = task_indices(k + 1)[k]  # the shared int, as at arrival
    t.stage = stage
    t.phase = job.spec.phases[stage]  # the same str object as at arrival
    t.state = DONE
    t.n_live = 0
    t._u0 = 0.0  # spent (shed_closed)
    for name in _SHADOWED:  # its numbers are in the job's rows
        _SLOT[name].__set__(t, None)
    return t


def _free_refs() -> int:
    """References a task held by its job's storage alone has in :func:`drop_unheld`'s loop
    (the storage, the queue, the loop's name and ``getrefcount``'s argument), measured on a
    probe laid out the same way rather than assumed."""
    probe: Any = object()
    queue, storage = [probe], [probe]
    del probe
    task = queue[0]  # as the loop's name holds it
    n = sys.getrefcount(task)
    del storage  # alive until here, as a job's storage is
    return n


_FREE = _free_refs()


class DropQueue:
    """The done tasks a streaming run may drop (:func:`drop_unheld`), tried again with a
    back-off: a task still held after its ``n``-th try waits ``2 ** (n - 1)`` sweeps for the
    next, up to :data:`_TRIES` tries: a task held for ``s`` sweeps is tried about
    ``log2(s)`` times (most tasks held at their first try are held by a stale heap entry for
    a while, and re-checking ~7,000 of them every sweep was ~5% of an FB-2010 run).

    Examples
    --------
    >>> q = DropQueue()
    >>> bool(q), len(q)
    (False, 0)
    """

    __slots__ = ("new", "_later", "_sweeps")

    def __init__(self) -> None:
        #: tasks queued since the last sweep (the engine appends to it)
        self.new: list[Task] = []
        self._later: dict[int, tuple[list[Task], array]] = {}  # by the sweep they are due
        self._sweeps = 0

    def __bool__(self) -> bool:
        return bool(self.new) or bool(self._later)

    def __len__(self) -> int:
        return len(self.new) + sum(len(q) for q, _ in self._later.values())

    def sweep(self) -> None:
        """Try the tasks queued since the last sweep and those due at this one."""
        self._sweeps += 1
        s = self._sweeps
        due = self._later.pop(s, None)
        if due is None:
            queue, tries = self.new, array("B")
        else:
            queue, tries = due  # tried before: their tries, then the new ones' (none)
            queue += self.new
        self.new = []
        carry, carry_tries = drop_unheld(queue, tries)
        del queue, due  # the carried tasks are held by `carry` alone from here
        later = self._later
        for i in range(len(carry)):
            n = carry_tries[i]
            at = s + (1 << (n - 1))
            bucket = later.get(at)
            if bucket is None:
                bucket = later[at] = ([], array("B"))
            bucket[0].append(carry[i])
            bucket[1].append(n)

    def clear(self) -> None:
        """Forget every queued task (the run's jobs are done)."""
        self.new = []
        self._later = {}


def drop_unheld(queue: list[Task], tries: array) -> tuple[list[Task], array]:
    """Drop the queued done tasks that only their job's storage holds (set their item to
    None); return the tasks still held, to be tried at a later sweep, and their tries.

    A task of a finished job is left (its job releases it); one held at its ``_TRIES``-th
    try is kept for good.

    Examples
    --------
    >>> from sim_bridge._jobs import Job, Task
    >>> job = Job()
    >>> job.job_id, job.uid, job.n_tasks, job.finish_time = "j", 0, 2, None
    >>> job.spec = type("Spec", (), {"phases": ("map", "reduce")})()
    >>> set_task_lists(job, [Task(0, job, 0, 0, "map", 1.0, 0.5),
    ...                      Task(1, job, 1, 0, "map", 1.0, 0.5)], 2)
    >>> for t in job.tasks:
    ...     t.__class__ = DoneOne  # as shed_closed leaves a task whose one attempt finished
    >>> held = job.tasks[1]
    >>> left, tries = drop_unheld(list(job.tasks), array("B"))
    >>> job.tasks._items[0] is None, left == [held], tries.tolist()
    (True, True, [1])
    """
    carry: list[Task] = []
    carry_tries = array("B")
    n_old = len(tries)
    getrc = sys.getrefcount
    for i in range(len(queue)):
        task = queue[i]  # held as _free_refs' probe is: no other name refers to it
        job = task.job
        if job.finish_time is not None or type(task) not in _AS_ROWS:
            continue  # released with its job, or no longer a row (Job.release)
        if getrc(task) == _FREE:
            job.tasks._items[task.index] = None  # type: ignore[attr-defined]
            continue
        n = (tries[i] if i < n_old else 0) + 1
        if n < _TRIES:
            carry.append(task)
            carry_tries.append(n)
    return carry, carry_tries
