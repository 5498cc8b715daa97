"""A streaming run's done task with several attempts keeps them as rows of its job.

Under speculation many tasks run two attempts or more: LATE on the FB-2010 day copies about
two in five of the tasks that finish in its first hour. Once such a task is done and every
attempt is closed, its attempts are only read again for the job's trace rows (when the job
ends) and by whoever reads ``task.attempts`` (a length, now and then a field). Their objects
cost ~700 bytes a two-attempt task (a list, two :class:`~sim_bridge._jobs.Attempt` objects
of 19 slots and their floats), held by the live jobs until they end.

:func:`pack_closed` moves them into two flat arrays of the job (``Job._many_i``: uid, node,
launch record's offset and state; ``Job._many_f``: launch time, start fraction, end time,
``_end``, ``_work`` and the work done booked at its end), 80 bytes an attempt
(``Job._many_n`` of them; a big job's arrays are the room of a file mapping,
:mod:`sim_bridge._row_maps`, until it fills and they go on as arrays), and makes the task a
:class:`DoneMany`, whose numbers are read from its job's rows (as a
:class:`~sim_bridge._jobs.DoneOne`'s) and whose ``attempts``, a :class:`ClosedAttempts`
view, builds them again when read: equal in every public field and in what reading their
progress needs, but new objects (as :class:`~sim_bridge._jobs.OneFinished` does for a task's
one attempt). Like a ``DoneOne``, the task's own object may then go once nothing but its job
holds it (``sim_bridge._task_list``). A killed attempt is packed only when its progress at
its end is read from what is kept: its work done there was booked at its close (a streamed
run whose paths follow the live attempts does that), or it has a fixed duration (``_work <=
0``). Otherwise the task keeps its objects.

Examples
--------
>>> from sim_bridge._jobs import Attempt, Job, Task
>>> job = Job()
>>> job.job_id, job.uid, job.n_tasks, job.finish_time = "j", 0, 1, None
>>> task = Task(5, job, 0, 0, "map", 10.0, 0.5)
>>> a0 = Attempt(7, task, 0, node=3, launch_time=2.0, start_fraction=0.0)
>>> a1 = Attempt(9, task, 1, node=4, launch_time=6.0, start_fraction=0.0)
>>> a0.state, a0.end_time, a0._work, a0._prog, a0._rec = 2, 8.0, 10.0, (8.0, 4.5), 0
>>> a1.state, a1.end_time, a1._end, a1._work, a1._rec = 1, 8.0, 8.0, 0.0, 4
>>> task.attempts, task.first_launch = [a0, a1], 2.0
>>> pack_closed(task)
True
>>> type(task).__name__, type(task.attempts).__name__, len(task.attempts)
('DoneMany', 'ClosedAttempts', 2)
>>> task.uid, task.work, task.finish_time  # read from the job's rows
(5, 10.0, None)
>>> [(a.uid, a.node, a.state, a.end_time, a._rec) for a in task.attempts]
[(7, 3, 2, 8.0, 0), (9, 4, 1, 8.0, 4)]
>>> task.attempts[0]._prog, task.attempts[-1].index
((8.0, 4.5), 1)
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Sequence
from typing import overload

from sim_bridge._jobs import ONE_ROW, Attempt, DoneOne, Task, task_to_row
from sim_bridge._states import A_FINISHED, A_KILLED

__all__ = ["MANY_AS_ROWS", "ClosedAttempts", "DoneMany", "pack_closed"]

#: keep a done task's several closed attempts as its job's rows (:func:`pack_closed`); off,
#: it keeps the objects (the same trace: ``tests/test_closed_attempts.py``)
MANY_AS_ROWS = True

#: integers an attempt keeps in ``Job._many_i``: uid, node, launch record's offset, state
MANY_I = 4
#: floats an attempt keeps in ``Job._many_f``: launch time, start fraction, end time,
#: ``_end``, ``_work``, and the work done booked at its end (NaN: none)
MANY_F = 6


class ClosedAttempts(Sequence[Attempt]):
    """``Task.attempts`` of a done task whose attempts were packed by :func:`pack_closed`:
    a read-only sequence whose items are built again, in launch order, at each read."""

    __slots__ = ("_at", "_n", "task")

    def __init__(self, task: Task, at: int, n: int):
        self.task = task
        self._at = at  # its first attempt's row in the job's arrays
        self._n = n

    def _attempt(self, i: int) -> Attempt:
        task = self.task
        job = task.job
        ints, floats = job._many_i, job._many_f
        assert ints is not None and floats is not None  # set with the view
        k, f = MANY_I * (self._at + i), MANY_F * (self._at + i)
        att = Attempt(ints[k], task, i, ints[k + 1], floats[f], floats[f + 1])
        att.state = ints[k + 3]
        att.end_time = floats[f + 2]
        att._end = floats[f + 3]
        att._work = floats[f + 4]
        done = floats[f + 5]
        if done == done:  # booked at its end
            att._prog = (att.end_time, done)
        att._rec = ints[k + 2]
        return att

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Attempt: ...

    @overload
    def __getitem__(self, i: slice) -> list[Attempt]: ...

    def __getitem__(self, i: int | slice) -> Attempt | list[Attempt]:
        if isinstance(i, slice):
            return [self._attempt(j) for j in range(self._n)[i]]
        if not -self._n <= i < self._n:
            raise IndexError(f"attempt index {i} out of range: the task ran {self._n}")
        return self._attempt(i % self._n)

    def __iter__(self) -> Iterator[Attempt]:
        return (self._attempt(i) for i in range(self._n))

    def __repr__(self) -> str:
        return f"ClosedAttempts({list(self)!r})"


def _many_attempts(task: DoneMany) -> ClosedAttempts:
    one = task.job._one
    assert one is not None  # set when packed
    k = ONE_ROW * task.index
    return ClosedAttempts(task, one[k], -one[k + 1])


class DoneMany(DoneOne):
    """A done :class:`~sim_bridge._jobs.Task` of a streaming run whose several attempts were
    packed (:func:`pack_closed`): a :class:`~sim_bridge._jobs.DoneOne` whose row in
    ``Job._one`` holds its first attempt's row in ``Job._many_i`` and minus its count of
    attempts (a ``DoneOne``'s node there is never negative), and whose ``attempts`` is a
    :class:`ClosedAttempts` built when read. Like a ``DoneOne``, its object may be dropped
    once nothing but its job holds it (``sim_bridge._task_list``), and setting its
    ``attempts`` makes it a plain ``Task`` again."""

    __slots__ = ()

    @property  # type: ignore[override]
    def attempts(self) -> Sequence[Attempt]:
        return _many_attempts(self)

    @attempts.setter
    def attempts(self, value: Sequence[Attempt]) -> None:
        DoneOne.attempts.fset(self, value)  # type: ignore[attr-defined,misc]  # a Task again


def _packable(att: Attempt, i: int, task: Task) -> bool:
    """Whether ``att``, the ``i``-th attempt of the done ``task``, is read the same from the
    rows: closed and shed (its launch record an offset), and its progress at its end read
    from what the rows keep."""
    if type(att) is not Attempt or att.task is not task or att.index != i:
        return False
    if type(att._rec) is not int or att.end_time is None or att._ckpt is not None:
        return False
    if att.state == A_FINISHED:
        return True
    if att.state != A_KILLED:
        return False
    prog = att._prog
    return att._work <= 0.0 or (prog is not None and prog[0] == att.end_time)


def pack_closed(task: Task) -> bool:
    """Move the closed attempts of the done ``task`` into its job's rows and give it a
    :class:`ClosedAttempts` view (a streaming run, once its last attempt closed: ``task.n_live``
    0). Returns whether it did: not for one attempt (a
    :class:`~sim_bridge._jobs.OneFinished` or a list of one), nor when an attempt's progress
    would not be read the same (module doc), nor with :data:`MANY_AS_ROWS` off."""
    atts = task.attempts
    if not MANY_AS_ROWS or task.n_live or type(atts) is not list or len(atts) < 2:
        return False
    if not all(_packable(a, i, task) for i, a in enumerate(atts)):
        return False
    job = task.job
    ints, floats = job._many_i, job._many_f
    at = job._many_n
    n = len(atts)
    if ints is None or floats is None:
        ints = job._many_i = array("q")
        floats = job._many_f = array("d")
    elif type(ints) is memoryview and MANY_I * (at + n) > len(ints):
        # a mapping's room is full (sim_bridge._row_maps): the rows go on in arrays
        ints = job._many_i = array("q", ints[: MANY_I * at].tobytes())
        floats = job._many_f = array("d", floats[: MANY_F * at].tobytes())  # type: ignore[index]
    nan = math.nan
    rows_i: list[int] = []
    rows_f: list[float] = []
    for a in atts:
        rows_i += (a.uid, a.node, a._rec, a.state)  # type: ignore[arg-type]
        prog = a._prog
        booked = a.state == A_KILLED and prog is not None and prog[0] == a.end_time
        done = prog[1] if booked else nan  # type: ignore[index]
        rows_f += (a.launch_time, a.start_fraction, a.end_time, a._end, a._work, done)  # type: ignore[arg-type]
    if type(ints) is memoryview:  # the room of a mapping: written in place
        ints[MANY_I * at : MANY_I * (at + n)] = array("q", rows_i)
        floats[MANY_F * at : MANY_F * (at + n)] = array("d", rows_f)
    else:
        ints.extend(rows_i)
        floats.extend(rows_f)
    job._many_n = at + n
    task_to_row(task, at, -n, 0, DoneMany)  # minus the count: not a DoneOne's node
    return True
