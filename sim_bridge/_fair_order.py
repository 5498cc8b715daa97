"""The waiting jobs in the Fair Scheduler's order, kept as the engine changes them.

A fair placement pass hands each free slot to the waiting job with the fewest running
attempts, ties by arrival (:class:`sim_bridge.policies.TaskQueue`). Building that order from
every waiting job at every pass costs O(J) a pass: on Alibaba 2017's full cluster thousands of
jobs wait, and nearly every event frees one slot, so a replay's CPU per event grew with the
jobs alive (1.1 ms at 600, 3.5-4.7 ms at 6,000: ``bench/results/ALI2017_late_17h_o.jsonl``).

:class:`FairOrder` keeps the order instead: a heap of ``(running attempts, uid, stamp)``
entries for the waiting jobs. The engine marks a job (:meth:`FairOrder.mark`) whenever its
running attempts change or it starts waiting; at the next pass each marked job still waiting
gets a fresh entry with a new stamp, which makes its older entries stale. The entries hold
uids, not jobs. A pass pops the
entries in order (:meth:`FairOrder.ascending`), dropping the stale ones and those of jobs no
longer waiting, and the entries it took go back on the heap before the next pass. The heap is
rebuilt from its current entries once it, or the stamps, hold four times as many as there are
jobs waiting: the stamps of jobs no longer waiting go then (a finished job's stamp stayed until
2026-12-02 (y), one dict entry for every job ever run where the heap seldom grew).
A pass then costs O((k + m) log J) for k jobs it looks at and m changes since the last one.

The keys are the ones a pass would build (``len(job.running)``, ``job.uid``), so the jobs come
in the same order: ``tests/test_fair_order.py`` checks it against the heap built from every
waiting job at every pass of real runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sized
from heapq import heapify, heappop, heappush
from typing import Generic, Protocol, TypeVar

__all__ = ["FairOrder"]


class _Waiting(Protocol):
    """What the order reads of a job (``sim_bridge._jobs.Job`` has it)."""

    @property
    def uid(self) -> int: ...

    @property
    def running(self) -> Sized: ...


Job = TypeVar("Job", bound=_Waiting)

# the heap is rebuilt once it holds this many times the jobs waiting (plus a few)
_SLACK = 4


class FairOrder(Generic[Job]):
    """The jobs of a dict of waiting jobs by uid (the simulator's ``_waiting``, given at each
    pass: the view may replace the dict), in ascending ``(len(job.running), job.uid)``.

    The order holds uids and counts only (no job, no simulator): a finished job leaves it
    with its last entry, and it makes no reference cycle.

    Examples
    --------
    >>> class J:
    ...     def __init__(self, uid, running):
    ...         self.uid, self.running = uid, [0] * running
    >>> a, b, c = J(0, 2), J(1, 0), J(2, 1)
    >>> waiting = {0: a, 1: b, 2: c}
    >>> order = FairOrder(waiting)
    >>> [j.uid for j in order.ascending(waiting)]
    [1, 2, 0]
    >>> b.running = [0] * 3  # a launch changed b's running attempts: the engine marks it
    >>> order.mark(b)
    >>> del waiting[2]  # c no longer waits
    >>> [j.uid for j in order.ascending(waiting)]
    [0, 1]
    """

    __slots__ = ("_heap", "_stamp", "_marked", "_taken", "_pass")

    def __init__(self, waiting: dict[int, Job]):
        self._stamp: dict[int, int] = {}
        self._marked: set[int] = set()  # uids whose entry is due again
        self._taken: list[tuple[int, int, int]] = []  # popped by the last pass
        self._pass = 0  # the passes begun: an older pass's iterator refuses to go on
        self._heap: list[tuple[int, int, int]] = []  # (running attempts, uid, stamp)
        for job in waiting.values():
            self.mark(job)

    def __len__(self) -> int:
        """The heap's entries, stale ones included."""
        return len(self._heap) + len(self._taken)

    def mark(self, job: Job) -> None:
        """``job``'s running attempts changed, or it started waiting: its entry is made again
        at the next pass (if it still waits then)."""
        self._marked.add(job.uid)

    def _settle(self, waiting: dict[int, Job]) -> None:
        """Before a pass: the last pass's valid entries back on the heap, the marked jobs'
        entries made afresh, and the heap rebuilt when mostly stale."""
        stamp = self._stamp
        heap = self._heap
        for e in self._taken:
            if stamp.get(e[1]) == e[2] and e[1] in waiting:
                heappush(heap, e)
        self._taken = []
        if self._marked:
            for uid in self._marked:
                job = waiting.get(uid)
                if job is not None:
                    s = stamp[uid] = stamp.get(uid, 0) + 1
                    heappush(heap, (len(job.running), uid, s))
            self._marked = set()
        bound = _SLACK * len(waiting) + 64
        if len(heap) > bound or len(stamp) > bound:  # the finished jobs' stamps go too
            live = [e for e in heap if stamp.get(e[1]) == e[2] and e[1] in waiting]
            self._stamp = {e[1]: e[2] for e in live}
            heapify(live)
            self._heap = live

    def ascending(self, waiting: dict[int, Job]) -> Iterator[Job]:
        """The jobs of ``waiting``, fewest running attempts first, ties by uid (arrival), as
        a pass begins: draw only as many as needed. A new pass ends the older pass's iterator
        (it raises RuntimeError if drawn from again)."""
        self._settle(waiting)
        self._pass += 1
        return self._iter(waiting, self._pass)

    def _iter(self, waiting: dict[int, Job], this_pass: int) -> Iterator[Job]:
        stamp = self._stamp
        heap = self._heap
        taken = self._taken
        while True:
            if self._pass != this_pass:
                raise RuntimeError("FairOrder: a new pass began; this pass's order is over")
            if not heap:
                return
            e = heappop(heap)
            uid = e[1]
            job = waiting.get(uid)
            if job is None or stamp.get(uid) != e[2]:
                continue  # stale: a newer entry stands for the job, or it no longer waits
            taken.append(e)
            yield job
