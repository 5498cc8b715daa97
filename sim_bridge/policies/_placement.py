"""Placement baselines: FIFO and fair sharing."""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import Launch, PlacementPolicy

__all__ = ["ORDERS", "FairPlacement", "FIFOPlacement", "TaskQueue", "iter_free_slots"]

#: the orders in which a placement may take waiting tasks
ORDERS = ("fifo", "fair")


class TaskQueue:
    """Waiting tasks in FIFO order (job arrival) or in the Fair Scheduler's order.

    Fair: each next task comes from the job with the fewest running attempts, counting the
    tasks launched earlier in the same pass (Hadoop's Fair Scheduler hands each free slot to
    the job furthest below its share; equal shares here), ties by arrival. FIFO: the jobs in
    arrival order, each one's tasks in turn. A placement calls :meth:`next` for a task, then
    :meth:`launched` if it placed it, or :meth:`drop_job` to skip the rest of that job's
    tasks in this pass (a refused task just moves on to the job's next one).

    Examples
    --------
    >>> class J:
    ...     def __init__(self, uid, running, tasks):
    ...         self.uid, self.running, self.pending = uid, [0] * running, dict(enumerate(tasks))
    >>> class V:
    ...     def waiting_jobs(self):
    ...         return [J(0, 2, "ab"), J(1, 0, "xyz")]
    >>> q = TaskQueue(V(), "fair")
    >>> out = []
    >>> while (item := q.next()) is not None:
    ...     out.append(item[1])
    ...     q.launched()
    >>> "".join(out)  # job 1 (nothing running) first, until it catches up with job 0
    'xyazb'
    """

    __slots__ = ("_fair", "_heap", "_jobs", "_cur", "_held", "_last")

    def __init__(self, view, order: str = "fifo"):
        if order not in ORDERS:
            raise ValueError(f"parameter order must be one of {', '.join(ORDERS)}, got {order!r}")
        self._fair = order == "fair"
        self._held: dict[int, int] = {}  # per job (id): tasks held back in this pass
        self._last = None
        if self._fair:
            self._heap = [
                (len(job.running), job.uid, job, iter(job.pending.values()))
                for job in view.waiting_jobs()
            ]
            heapq.heapify(self._heap)
        else:
            self._jobs = iter(view.waiting_jobs())
            self._cur: tuple[Any, Iterator[Any]] | None = None

    def next(self):
        """The next ``(job, task)``, or None when no task is left."""
        if self._fair:
            heap = self._heap
            while heap:
                _n, _uid, job, tasks = heap[0]
                task = next(tasks, None)
                if task is not None:
                    return job, task
                heapq.heappop(heap)
            return None
        while True:
            cur = self._cur
            if cur is not None:
                task = next(cur[1], None)
                if task is not None:
                    return cur[0], task
            job = next(self._jobs, None)
            if job is None:
                self._cur = None
                return None
            self._cur = (job, iter(job.pending.values()))

    def next_runnable(self, n_free: int):
        """:meth:`next`, skipping the jobs that already held back ``n_free`` tasks in this
        pass (their other tasks would be held too: they wait for the next pass)."""
        held = self._held
        while True:
            item = self.next()
            if item is None or held.get(id(item[0]), 0) < n_free:
                self._last = None if item is None else item[0]
                return item
            self.drop_job()

    def hold(self) -> None:
        """The last task :meth:`next_runnable` gave was held back (found no node)."""
        key = id(self._last)
        self._held[key] = self._held.get(key, 0) + 1

    def launched(self) -> None:
        """The last task :meth:`next` gave was launched (fair: its job's count goes up)."""
        if self._fair:
            n, uid, job, tasks = self._heap[0]
            heapq.heapreplace(self._heap, (n + 1, uid, job, tasks))

    def drop_job(self) -> None:
        """Skip the rest of the last task's job in this pass."""
        if self._fair:
            heapq.heappop(self._heap)
        else:
            self._cur = None


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
        queue = TaskQueue(view, "fair")
        out = []
        for node in iter_free_slots(free):
            item = queue.next()
            if item is None:
                break
            out.append(Launch(item[1], node))
            queue.launched()
        return out
