"""Placement baselines: FIFO and fair sharing, and the task queue every placement shares."""

from __future__ import annotations

from collections.abc import Iterator
from heapq import heapify, heappop, heapreplace
from typing import Any

from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import Launch, PlacementPolicy

__all__ = ["ORDERS", "FairPlacement", "FIFOPlacement", "TaskQueue", "iter_free_slots"]

#: the orders in which a placement may take waiting tasks
ORDERS = ("fifo", "fair")


class TaskQueue:
    """The waiting tasks of one placement pass with ``n_free`` free slots, in FIFO order (job
    arrival) or in the Fair Scheduler's order.

    Fair: each next task comes from the job with the fewest running attempts, counting the
    tasks launched earlier in the same pass (Hadoop's Fair Scheduler hands each free slot to
    the job furthest below its share; equal shares here), ties by arrival. FIFO: the jobs in
    arrival order, each one's tasks in turn.

    Iterate it for ``(job, task)`` pairs; after each, call :meth:`launched` if the task was
    placed (a slot fewer) or :meth:`hold` if it was held back (neither: it is passed over).
    Iteration ends when no slot or no task is left. A job that held back as many tasks as
    there are free slots is left for the next pass (its other tasks would be held too).

    Parameters
    ----------
    view : SimView
        Only ``view.waiting_jobs()`` is read (jobs with ``uid``, ``running`` and ``pending``;
        FIFO reads ``pending`` only).
    order : {"fifo", "fair"}
    n_free : int
        Free slots in the pass.

    Attributes
    ----------
    n_free : int
        Free slots left (each :meth:`launched` takes one).

    Notes
    -----
    The fair order is a heap of ``(running, uid)`` keys built once per pass (O(J) for J
    waiting jobs, a handful in practice) whose top is re-keyed after each launch; the tasks of
    a job are a live iterator over its pending tasks, so a task costs O(log J) at most.

    Examples
    --------
    >>> class J:
    ...     def __init__(self, uid, running, tasks):
    ...         self.uid, self.running, self.pending = uid, [0] * running, dict(enumerate(tasks))
    >>> class V:
    ...     def waiting_jobs(self):
    ...         return [J(0, 2, "ab"), J(1, 0, "xyz")]
    >>> q = TaskQueue(V(), "fair", n_free=4)
    >>> out = []
    >>> for job, task in q:
    ...     out.append(task)
    ...     q.launched()
    >>> "".join(out), q.n_free  # job 1 (nothing running) first, until it catches up with job 0
    ('xyaz', 0)
    >>> q = TaskQueue(V(), "fifo", n_free=2)
    >>> [task for job, task in q if q.hold() is None]  # each job holds at most 2 in the pass
    ['a', 'b', 'x', 'y']
    """

    __slots__ = ("n_free", "_tasks", "_last")

    def __init__(self, view, order: str = "fifo", n_free: int = 1):
        if order not in ORDERS:
            raise ValueError(f"parameter order must be one of {', '.join(ORDERS)}, got {order!r}")
        self.n_free = n_free
        self._last = 0  # what became of the last task: 1 launched, -1 held, 0 neither
        jobs = view.waiting_jobs()
        self._tasks = self._fair(jobs) if order == "fair" else self._fifo(jobs)

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return self._tasks

    def launched(self) -> None:
        """The last task was launched: a slot fewer (fair: its job's count goes up)."""
        self._last = 1
        self.n_free -= 1

    def hold(self) -> None:
        """The last task was held back (found no node): it waits for a later pass."""
        self._last = -1

    def _fifo(self, jobs) -> Iterator[tuple[Any, Any]]:
        for job in jobs:
            held = 0
            for task in job.pending.values():
                if held >= self.n_free:  # also: no slot left
                    break
                self._last = 0
                yield job, task
                held += self._last < 0
            if not self.n_free:
                return

    def _fair(self, jobs) -> Iterator[tuple[Any, Any]]:
        heap = [(len(job.running), job.uid, job, iter(job.pending.values())) for job in jobs]
        heapify(heap)
        held: dict[int, int] = {}  # job uid -> its tasks held in this pass
        while heap and self.n_free:
            n, uid, job, tasks = heap[0]
            task = next(tasks, None)
            if task is None or held.get(uid, 0) >= self.n_free:
                heappop(heap)
                continue
            self._last = 0
            yield job, task
            if self._last > 0:
                heapreplace(heap, (n + 1, uid, job, tasks))
            elif self._last < 0:
                held[uid] = held.get(uid, 0) + 1


def iter_free_slots(free) -> Iterator[int]:
    """Each free slot as its node id (a node with two free slots appears twice).

    Examples
    --------
    >>> list(iter_free_slots({3: 2, 1: 1}))
    [3, 3, 1]
    """
    for node, count in free.items():
        for _ in range(count):
            yield node


@register_policy
class FIFOPlacement(PlacementPolicy):
    """FIFO: waiting tasks in job arrival order go to the least recently freed slots."""

    name = "fifo"

    def assign(self, view, free):
        out: list[Launch] = []
        slots = iter_free_slots(free)
        for job in view.waiting_jobs():
            for task in job.pending.values():
                node = next(slots, None)
                if node is None:
                    return out
                out.append(Launch(task, node))
        return out


@register_policy
class FairPlacement(PlacementPolicy):
    """Fair sharing: each free slot goes to the waiting job with the fewest running attempts
    (:class:`TaskQueue`'s fair order), in least-recently-freed slot order."""

    name = "fair"

    def assign(self, view, free):
        slots = iter_free_slots(free)
        queue = TaskQueue(view, "fair", sum(free.values()))
        out = []
        for _job, task in queue:
            out.append(Launch(task, next(slots)))
            queue.launched()
        return out
