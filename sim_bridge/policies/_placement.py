"""Placement baselines: FIFO and fair sharing."""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import Launch, PlacementPolicy

__all__ = ["FairPlacement", "FIFOPlacement", "iter_free_slots"]


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
        out = []
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
    """Fair sharing: each free slot goes to the waiting job with the fewest running attempts."""

    name = "fair"

    def assign(self, view, free):
        heap = [
            (len(job.running), job.uid, job, iter(job.pending.values()))
            for job in view.waiting_jobs()
        ]
        heapq.heapify(heap)
        out = []
        for node in iter_free_slots(free):
            while heap:
                running, uid, job, tasks = heap[0]
                task = next(tasks, None)
                if task is None:
                    heapq.heappop(heap)
                    continue
                out.append(Launch(task, node))
                heapq.heapreplace(heap, (running + 1, uid, job, tasks))
                break
            else:
                break
        return out
