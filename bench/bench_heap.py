"""The engine's event heap: the compiled ``EventHeap`` against ``heapq`` on tuples.

Peer measured in the same run: ``sim_bridge._event_heap.PyEventHeap``, ``heapq`` on a list of
``(time, seq, kind, obj)`` tuples, which is what the engine used before the compiled heap
(and what it uses without the extensions). Printed:

- the "hold" model of priority-queue benchmarks: a heap of ``--size`` events (the ~100,000
  of an FB-2010 hour on 33,000 x 10), then ``--ops`` pairs of a pop and a push at the popped
  time plus an exponential delay, ns a pair and the ratio peer / compiled;
- with the SWIM data (``--fb2010-events N``, 0 skips it): the engine's loop CPU over the first
  N events of the FB-2010 day on 33,000 x 10 without speculation, streamed, on either heap,
  ``--repeat`` runs each, interleaved, with the ratio; the two traces are checked equal.

Measured 2026-11-28 on the 2-core machine:

- hold, 100,000 events, 2M pairs (two FB-2010 replays running beside it): heapq 2,769 ns a
  pair, compiled 719 ns (3.9x);
- FB-2010 first 1M events (to 1.97 simulated h; one replay beside it; the same loop as
  ``--fb2010-events 1000000``, from ``/tmp/s14/ab_heap.py``, outside the repo), loop CPU:
  heapq 87.1 / 88.3 s, compiled 69.8 / 65.1 s (0.77x); equal traces. The loop pops ~9.5
  heap entries per event of the model there (deferred solves, their re-queues, stale finish
  events: counted over the first simulated hour).

Run: ``.venv/bin/python bench/bench_heap.py [--size 100000] [--ops 2000000]
[--fb2010-events 0] [--data-dir DIR] [--repeat 2]``
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from _fb2010_loop import compare_fb2010, fb2010_loop_cpu


class _Payload:
    """An event's object: an attempt stands for it (one allocation each, scattered)."""

    __slots__ = ("i",)

    def __init__(self, i: int):
        self.i = i


def hold(make, size: int, ops: int, seed: int = 0) -> tuple[float, list]:
    """ns per pop-and-push pair on a heap of ``size`` events; the first 1,000 pops."""
    rng = random.Random(seed)
    h = make()
    seq = 0
    for i in range(size):
        seq += 1
        h.push(rng.expovariate(1.0) * size, seq, 1, _Payload(i))
    expo = rng.expovariate
    pops = []
    t0 = time.perf_counter()
    for _ in range(ops):
        t, _s, kind, obj = h.pop_next()
        seq += 1
        h.push(t + expo(1.0) * size, seq, kind, obj)
        if len(pops) < 1000:
            pops.append((t, _s))
    return (time.perf_counter() - t0) / ops * 1e9, pops


def _engine_run(in_c: bool, n_events: int, data_dir: str | None, out: Path) -> tuple[float, int]:
    from sim_bridge import _event_heap

    _event_heap.HEAP_IN_C = in_c
    return fb2010_loop_cpu("none", n_events, data_dir, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000, help="events in the heap (100,000)")
    ap.add_argument("--ops", type=int, default=2_000_000, help="pop-push pairs (2,000,000)")
    ap.add_argument("--fb2010-events", type=int, default=0, help="FB-2010 events (0: skip)")
    ap.add_argument("--data-dir", default=None, help="data directory holding swim/")
    ap.add_argument("--repeat", type=int, default=2, help="engine runs of each side (2)")
    args = ap.parse_args()

    from sim_bridge._event_heap import HEAP_IN_C, PyEventHeap

    if not HEAP_IN_C:
        sys.exit("bench_heap: the extension sim_bridge._heap_core is not built")
    from sim_bridge._heap_core import EventHeap

    peer_ns, peer_pops = hold(PyEventHeap, args.size, args.ops)
    ours_ns, our_pops = hold(EventHeap, args.size, args.ops)
    assert our_pops == peer_pops, "the two heaps popped different events"
    print(
        f"hold, {args.size:,} events, {args.ops:,} pairs: heapq (peer) {peer_ns:,.0f} ns a "
        f"pair, compiled {ours_ns:,.0f} ns ({peer_ns / ours_ns:.1f}x)"
    )

    if args.fb2010_events:
        c, p, same = compare_fb2010(
            lambda in_c, out: _engine_run(in_c, args.fb2010_events, args.data_dir, out),
            {True: "compiled", False: "heapq"},
            "FB-2010",
            args.repeat,
        )
        print(
            f"FB-2010 first {args.fb2010_events:,} events, loop CPU (mean of "
            f"{args.repeat}): heapq (peer) {p:.1f} s, compiled {c:.1f} s ({c / p:.2f}x); "
            f"traces equal: {same}"
        )


if __name__ == "__main__":
    main()
