"""LATE's cut by selection (``sim_bridge._order_stats``) against the same cut from sorted
rates.

A LATE scan's cut for a job is a percentile of its running attempts' rates and its stage's
finished tasks' inverse run times: two neighbouring order statistics of the union. Since
2026-12-01 (u) the compiled scan (``sim_bridge._progress_core.late_scan``) selects them from
the unsorted rates, counting the sorted run below each pivot by bisection. Peer measured in
the same run: the same scan sorting the rates first and bisecting the two sorted runs (what
it did before, and still does when the selection gives up: ``set_select_rounds(0)``).
Printed, the two sides interleaved:

- the two order statistics of ``n`` rates (uniform, a tenth of them ``0.0``: attempts not yet
  started) and 200 finished run times, at LATE's 25th percentile, for ``n`` from 8 to 2,048,
  in µs a call (``select_pair_of_two``, which converts the two lists on each call, the same
  on both sides), best of ``--repeat`` rounds, and the ratio;
- the ranking of a scan's candidates (``(estimate, uid, attempt)``, longest estimate first,
  then the oldest): in C (``rank_candidates``, as ``late_scan`` ranks them since (u))
  against ``sorted`` with LATE's key function, which ``LATE._ranked`` called before, for
  1,000 to 100,000 candidates, in ms, best of ``--repeat`` rounds;
- with ``--fb2010-events N`` (0 skips it; needs the data, ``straggler data fetch`` or
  ``--data-dir ../shared/data``): the engine's loop CPU over the first N events of the
  FB-2010 day on 33,000 x 10 with LATE, the mean of ``--fb2010-repeat`` runs of each side
  (which goes first alternates), and whether the two traces are equal (they must be: the
  same values are picked).

Measured 2026-12-01 (u), code da1f156, on the project's 2-core machine with a day replay
beside it: 0.30 µs a call either way at 8 and 32 rates, 0.97 against 1.07 at 128, 2.38
against 4.79 at 512 and 10.9 against 21.5 at 2,048 (so the scan selects only from 128 rates
on: below that the selection measured up to 1.1x the sort). On the FB-2010 day with LATE, the
first 600,000 events in this script's two sides: 69.0 and 71.4 s selected against 74.8 and
75.8 s sorted, each pair run selected first (the order this script then used); the same code
run four times in one process took 67.7, 70.4, 69.8 and 76.3 s, so most of that 0.92x was the
order, which the A/B now alternates (``_fb2010_loop.compare_fb2010``). In separate processes
side by side (``bench_day.py --until 3``, da1f156 against bf98fbe): 193.9 against 196.9 s of
CPU at 3 h (0.98-0.99x at every half hour), the same peaks (745 MB). The streamed FB-2010 half
hour with LATE on 1,500 x 10 (``straggler simulate ... --stream``), whose scans selected
17,580 cuts, gives tables equal to bf98fbe's (252,706 rows).

Run: ``.venv/bin/python bench/bench_late_cut.py [--repeat 5] [--fb2010-events 0]
[--fb2010-repeat 2] [--data-dir DIR]``
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from _fb2010_loop import compare_switched_late

SIZES = (8, 32, 128, 512, 2048)
QUANTILE = 0.25  # LATE's SlowTaskThreshold


def cut_inputs(n: int, seed: int = 0) -> tuple[list[float], list[float], int]:
    """``n`` rates (a tenth of them 0.0), 200 ascending run times, and the rank ``k`` of
    LATE's 25th percentile over the union."""
    rng = random.Random(seed)
    rates = [0.0 if rng.random() < 0.1 else rng.random() * 1e-2 for _ in range(n)]
    done = sorted(rng.uniform(20.0, 400.0) for _ in range(200))
    return rates, done, int(QUANTILE * (n + len(done) - 1))


def time_cuts(n: int, repeat: int, calls: int) -> dict[bool, float]:
    """µs a call of the two order statistics, by selection (True) and by sorting (False),
    best of ``repeat`` interleaved rounds of ``calls`` calls; both must pick the same."""
    from sim_bridge._progress_core import select_pair_of_two, set_select_rounds

    rates, done, k = cut_inputs(n)
    best = {True: float("inf"), False: float("inf")}
    picked = {}
    for _ in range(repeat):
        for selected in (True, False):
            was = set_select_rounds(-1 if selected else 0)
            try:
                t = time.perf_counter()
                for _ in range(calls):
                    x, y, _how = select_pair_of_two(rates, done, k, True)
                best[selected] = min(best[selected], time.perf_counter() - t)
                picked[selected] = (x, y)
            finally:
                set_select_rounds(was)
    if picked[True] != picked[False]:
        sys.exit(f"bench_late_cut: the two paths picked {picked[True]} and {picked[False]}")
    return {s: 1e6 * b / calls for s, b in best.items()}


def time_ranking(n: int, repeat: int) -> dict[bool, float]:
    """ms to rank ``n`` candidates in C (True) and by ``sorted`` with LATE's key (False),
    best of ``repeat`` interleaved rounds; both must give the same order."""
    from sim_bridge._progress_core import rank_candidates

    from sim_bridge.policies._speculation import _rank_key  # LATE's order

    rng = random.Random(n)
    uids = rng.sample(range(10 * n), n)
    cands = [(rng.expovariate(1e-3), u, object()) for u in uids]
    best = {True: float("inf"), False: float("inf")}
    got = {}
    for _ in range(repeat):
        for in_c in (True, False):
            t = time.perf_counter()
            got[in_c] = rank_candidates(cands, _rank_key) if in_c else sorted(cands, key=_rank_key)
            best[in_c] = min(best[in_c], time.perf_counter() - t)
    if [c[1] for c in got[True]] != [c[1] for c in got[False]]:
        sys.exit("bench_late_cut: the two rankings differ")
    return {k: 1e3 * b for k, b in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="rounds of each side (5)")
    ap.add_argument("--calls", type=int, default=20_000, help="calls a round at 8 rates (20,000)")
    ap.add_argument("--fb2010-events", type=int, default=0, help="FB-2010 events (0: skip)")
    ap.add_argument("--fb2010-repeat", type=int, default=2, help="runs of each side (2: AB BA)")
    ap.add_argument("--data-dir", default=None, help="data directory holding swim/")
    args = ap.parse_args()
    try:
        from sim_bridge._progress_core import set_select_rounds
    except ImportError:
        sys.exit("bench_late_cut: the extension sim_bridge._progress_core is not built")

    for n in SIZES:
        us = time_cuts(n, args.repeat, max(args.calls * 8 // n, 200))
        print(
            f"{n:>5,} rates and 200 run times, best of {args.repeat}: sorted (peer) "
            f"{us[False]:.2f} µs, selected {us[True]:.2f} µs ({us[True] / us[False]:.2f}x)",
            flush=True,
        )
    for n in (1_000, 10_000, 100_000):
        ms = time_ranking(n, args.repeat)
        print(
            f"ranking {n:>7,} candidates, best of {args.repeat}: sorted with LATE's key "
            f"(peer) {ms[False]:.2f} ms, in C {ms[True]:.2f} ms ({ms[True] / ms[False]:.2f}x)",
            flush=True,
        )
    if args.fb2010_events:

        def selecting(on: bool) -> bool:
            return set_select_rounds(-1 if on else 0) != 0

        labels = {True: "selected", False: "sorted (peer)"}
        compare_switched_late(
            selecting, labels, args.fb2010_events, args.data_dir, args.fb2010_repeat
        )


if __name__ == "__main__":
    main()
