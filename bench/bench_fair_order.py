"""A fair placement pass over J waiting jobs: the engine's kept order against the heap built
from every waiting job.

Peer measured in the same run: ``TaskQueue`` given a view without ``fair_waiting_jobs``,
which builds its heap of ``(running, uid)`` keys from every waiting job at each pass (O(J),
what the engine ran before ``sim_bridge._fair_order``). Measured side: the view's kept order
(``sim_bridge._fair_order.FairOrder``), the heap taking jobs from it only as far as the pass
gets. Each "event" ends one running attempt of a random job (its count changes and it is
marked, as the engine marks it) and runs a pass with ``--free`` free slots, as a full
cluster does when a task finishes. Printed per J: microseconds a pass on each side, the
ratio, and whether both sides launched the same tasks in the same order.

Measured 2026-11-30 on the 2-core machine, ``--free 1``, 3,000 passes, three replays
running beside it (so the microseconds are inflated alike on both sides): 100 waiting jobs
27.9 -> 13.8 us a pass (0.49x), 1,000: 225.8 -> 13.9 (0.062x), 6,000: 2,591.8 -> 18.0
(0.007x); the same tasks launched in the same order. An earlier run with two replays beside
it, 2,000 passes: 15.8 -> 6.5, 118.0 -> 7.4, 1,533.0 -> 9.8 us.

Run: ``.venv/bin/python bench/bench_fair_order.py [--jobs 100 1000 6000] [--passes 3000]
[--free 1]``
"""

from __future__ import annotations

import argparse
import random
import time

from sim_bridge._fair_order import FairOrder
from sim_bridge.policies._placement import TaskQueue


class _Job:
    __slots__ = ("uid", "running", "pending")

    def __init__(self, uid: int, running: int, n_pending: int):
        self.uid = uid
        self.running = dict.fromkeys(range(running))
        self.pending = {i: (uid, i) for i in range(n_pending)}  # refilled as launched


class _Sim:
    def __init__(self, jobs: list[_Job]):
        self._waiting = {j.uid: j for j in jobs}
        self._fair_order: FairOrder[_Job] | None = None


class _BuiltView:
    """The peer: a view with waiting jobs only (the heap is built from all of them)."""

    def __init__(self, sim: _Sim):
        self._sim = sim

    def waiting_jobs(self):
        return self._sim._waiting.values()


class _KeptView(_BuiltView):
    def fair_waiting_jobs(self):
        sim = self._sim
        if sim._fair_order is None:
            sim._fair_order = FairOrder(sim._waiting)
        return sim._fair_order.ascending(sim._waiting)


def _side(n_jobs: int, passes: int, free: int, kept: bool, seed: int) -> tuple[float, list]:
    rng = random.Random(seed)
    jobs = [_Job(i, rng.randrange(0, 40), free) for i in range(n_jobs)]
    sim = _Sim(jobs)
    view = _KeptView(sim) if kept else _BuiltView(sim)
    launched = []
    t0 = time.perf_counter()
    for _ in range(passes):
        job = jobs[rng.randrange(n_jobs)]  # one of its attempts ended
        if job.running:
            job.running.popitem()
        if sim._fair_order is not None:
            sim._fair_order.mark(job)
        queue = TaskQueue(view, "fair", free)
        picked = []
        for j, task in queue:
            picked.append((j, task))
            queue.launched()
        for j, task in picked:  # the engine launches them after the pass
            del j.pending[task[1]]
            j.pending[task[1] + free] = (j.uid, task[1] + free)  # it goes on waiting
            j.running[len(j.running) + 10**9] = None
            if sim._fair_order is not None:
                sim._fair_order.mark(j)
            launched.append(task)
    return time.perf_counter() - t0, launched


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, nargs="+", default=[100, 1000, 6000])
    ap.add_argument("--passes", type=int, default=3000)
    ap.add_argument("--free", type=int, default=1, help="free slots a pass (1)")
    args = ap.parse_args()
    print(f"{'waiting jobs':>12}  {'built (peer) us':>15}  {'kept us':>8}  {'ratio':>6}  same")
    for n in args.jobs:
        peer, a = _side(n, args.passes, args.free, False, seed=n)
        kept, b = _side(n, args.passes, args.free, True, seed=n)
        us_p, us_k = 1e6 * peer / args.passes, 1e6 * kept / args.passes
        print(f"{n:>12,}  {us_p:>15.1f}  {us_k:>8.1f}  {us_k / us_p:>6.3f}  {a == b}")


if __name__ == "__main__":
    main()
