"""Placement baselines: FIFO and fair sharing, and the task queue every placement shares."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from heapq import heapify, heappop, heappush, heapreplace
from typing import Any

from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import Launch, PlacementPolicy

__all__ = [
    "ORDERS",
    "FairPlacement",
    "FIFOPlacement",
    "HeldDeadlines",
    "TaskQueue",
    "iter_free_slots",
]

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
    placed (a slot fewer) or :meth:`hold` / :meth:`hold_while` if it was held back.
    Iteration ends when no slot or no task is left. A job that held back as many tasks as
    there are free slots is left for the next pass (its other tasks would be held too).

    Parameters
    ----------
    view : SimView
        Only ``view.waiting_jobs()`` is read (jobs with ``uid``, ``running`` and ``pending``;
        FIFO reads ``pending`` only), or for the fair order ``view.fair_waiting_jobs()`` when
        the view has it (the same jobs, in the fair order as the pass begins).
    order : {"fifo", "fair"}
    n_free : int
        Free slots in the pass.

    Attributes
    ----------
    n_free : int
        Free slots left (each :meth:`launched` takes one).

    Notes
    -----
    The fair order is a heap of ``(running, uid)`` keys whose top is re-keyed after each
    launch. With a view that keeps the order (``SimView.fair_waiting_jobs``) the heap takes
    jobs from it only as far as the pass gets, so a pass that looks at k of J waiting jobs
    costs O(k log J); else it is built from every waiting job once per pass (O(J): thousands
    wait on Alibaba 2017's full cluster). A job's tasks are a live iterator over its pending
    tasks, so a task costs O(log J) at most, and :meth:`hold_while` holds a run of one job's
    tasks without a round trip per task.

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
    >>> q = TaskQueue(V(), "fifo", n_free=3)
    >>> [(task, q.hold_while(lambda t: t != "z")) for job, task in q]  # z may not wait
    [('a', 2), ('x', 2), ('z', 0)]
    """

    __slots__ = ("n_free", "_tasks", "_launched", "_held", "_head", "_task", "_stash")

    def __init__(self, view, order: str = "fifo", n_free: int = 1):
        if order not in ORDERS:
            raise ValueError(f"parameter order must be one of {', '.join(ORDERS)}, got {order!r}")
        self.n_free = n_free
        self._launched = False  # the last task was launched
        self._held: dict[int, int] = {}  # job (id) -> its tasks held in this pass
        self._head: Any = None  # the last task's heap entry (key, key, job, task iterator)
        self._task: Any = None  # the last task
        self._stash: Any = None  # a task hold_while drew that may not wait: it comes next
        self._tasks = self._order(view, order == "fair")

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return self._tasks

    def launched(self) -> None:
        """The last task was launched: a slot fewer (fair: its job's count goes up)."""
        self._launched = True
        self.n_free -= 1

    def hold(self) -> None:
        """The last task was held back (found no node): it waits for a later pass."""
        key = id(self._head[2])
        self._held[key] = self._held.get(key, 0) + 1

    def hold_while(self, may_wait: Callable[[Any], bool]) -> int:
        """Hold the last task and its job's next ones while ``may_wait(task)`` (and the job's
        hold cap lets): for a placement whose verdict is the same for a job's tasks until a
        launch. Returns how many were held (0: the last task may not wait); the first task
        that may not wait is the next one given."""
        key = id(self._head[2])
        cap = self.n_free - self._held.get(key, 0)
        task, held = self._task, 0
        while may_wait(task):
            held += 1
            if held == cap:
                break
            task = next(self._head[3], None)
            if task is None:
                break
        else:
            if held:
                self._stash = task
        self._held[key] = self._held.get(key, 0) + held
        return held

    def _order(self, view, fair: bool) -> Iterator[tuple[Any, Any]]:
        """The head job's next task, the head being the job with the fewest running-plus-
        launched attempts (fair; ties by arrival) or the first job (FIFO) that has a task left
        and fewer than ``n_free`` held."""
        # a job's task iterator is made when it first heads the heap (None until then): a
        # pass launches into few of the waiting jobs, and a big job's waiting tasks
        # (sim_bridge._waiting_tasks.WaitingTasks) make their iterator in Python
        heap: list[tuple[int, int, Any, Any]] = []
        # fair: the jobs not in the heap yet, in its order, from the engine's index
        # (SimView.fair_waiting_jobs), else every waiting job in the heap from the start
        kept = getattr(view, "fair_waiting_jobs", None) if fair else None
        source: Iterator[Any] = iter(()) if kept is None else kept()
        if fair and kept is None:
            heap = [(len(job.running), job.uid, job, None) for job in view.waiting_jobs()]
            heapify(heap)
        elif not fair:  # arrival order: sorted, hence a heap; a launch does not move the head
            heap = [(0, k, job, None) for k, job in enumerate(view.waiting_jobs())]
        nxt = next(source, None)
        held = self._held
        while (heap or nxt is not None) and self.n_free:
            # the next job of the order joins the heap while its key is below the head's:
            # keys only grow in a pass, so the head is then the one a heap of every waiting
            # job would have (keys are unique: the uid breaks ties)
            if nxt is not None and (not heap or (len(nxt.running), nxt.uid) < heap[0][:2]):
                heappush(heap, (len(nxt.running), nxt.uid, nxt, None))
                nxt = next(source, None)
                continue
            head = heap[0]
            if head[3] is None:  # the same keys: the heap stays a heap
                head = heap[0] = (head[0], head[1], head[2], iter(head[2].pending.values()))
            task = self._stash
            if task is None:
                task = next(head[3], None)
            else:
                self._stash = None
            if task is None or (held and held.get(id(head[2]), 0) >= self.n_free):
                heappop(heap)  # ran out or held its cap
                continue
            self._head, self._task, self._launched = head, task, False
            yield head[2], task
            if self._launched and fair:
                n, key, job, tasks = head
                heapreplace(heap, (n + 1, key, job, tasks))


class HeldDeadlines(dict):
    """When each held task launches at the latest: task uid -> ``(task, due)``, ``due`` being
    ``max_wait`` seconds after the task was first held; and the earliest due of the tasks held
    in the current pass (for the placement's :class:`~sim_bridge.policies.base.Wake`).

    Examples
    --------
    >>> class T:
    ...     uid = 7
    >>> d = HeldDeadlines(max_wait=5.0)
    >>> d.start(100.0)
    >>> d.may_wait(T()), d[7][1], d.earliest  # first held at 100: may wait until 105
    (True, 105.0, 105.0)
    >>> d.start(105.0)
    >>> d.may_wait(T())  # its deadline has come
    False
    """

    __slots__ = ("max_wait", "now", "earliest")

    def __init__(self, max_wait: float):
        super().__init__()
        self.max_wait = max_wait
        self.now = self.earliest = math.inf

    def start(self, now: float) -> None:
        """A new placement pass at ``now``."""
        self.now, self.earliest = now, math.inf

    def may_wait(self, task) -> bool:
        """Whether ``task``, found no node now, may be held (its deadline is set the first
        time it is held; held: its deadline counts towards :attr:`earliest`)."""
        hit = self.get(task.uid)
        due = self.now + self.max_wait if hit is None else hit[1]
        if not due > self.now:
            return False
        if hit is None:
            self[task.uid] = (task, due)
        if due < self.earliest:
            self.earliest = due
        return True

    def prune(self, waiting_count: Callable[[], int]) -> None:
        """Forget the tasks no longer waiting (launched by a speculator) once they may be
        many: more than 64 and 4 x (``waiting_count()`` + 16) held tasks."""
        if len(self) > 64 and len(self) > 4 * (waiting_count() + 16):
            keep = [
                (uid, hit) for uid, hit in self.items() if not hit[0].done and not hit[0].n_live
            ]
            self.clear()
            self.update(keep)


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
