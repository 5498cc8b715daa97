"""The compiled scans' prefetch hints (``sim_bridge._progress_core._ahead``) against the same
loops without them.

A speculation scan reads the progress of every live attempt: a chain of dependent loads per
attempt (the attempt and its rate memo; until 2026-12-01 (v) also the floats in its slots
and its last-read pair, and the memo was a list of three objects), which on a big run come
from outside the caches. Since 2026-12-01 (t) the loops ask the CPU for the
objects of the attempts 2 to 12 places ahead while they read this one. Peer measured in the
same run: the same loops with the hints off (``set_prefetch(False)``). Printed, each side
``--repeat`` times, interleaved:

- ``--attempts N`` (default 150,000; 0 skips it): ``progress_list`` over N attempts made
  between other objects and shuffled, so that they lie scattered as an engine's do, every
  read on the inline path (the common one of a day replay), in ns per attempt, best of the
  rounds, and the ratio;
- with ``--fb2010-events N`` (0 skips it; needs the data, ``straggler data fetch`` or
  ``--data-dir ../shared/data``): the engine's loop CPU over the first N events of the
  FB-2010 day on 33,000 x 10 with LATE, and whether the two traces are equal (they must be:
  the hints change no value).

Measured 2026-12-01 (t), code 02e8f13, on the project's 2-core machine: 150,000 attempts,
about 450 ns an attempt without the hints and 180-200 with them (0.4x); the FB-2010 LATE
replay to 1.2 h, side by side against a copy of 2c3c666 (``bench_day.py --until 1.2``,
the scan timed by a wrapper outside the repository): the scans 30.1 s in 872 (34.5 ms
each) against 18.5 s in 883 (21.0 ms, 0.61x), the whole replay 87 -> 74 s of CPU at 1.2 h.
Reading 2,000 attempts (all in the caches) takes 67 ns each without hints: the rest is
waiting for memory, which the hints overlap.

Run: ``.venv/bin/python bench/bench_prefetch.py [--attempts 150000] [--fb2010-events 0]
[--data-dir DIR] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from _fb2010_loop import compare_switched_late

DT = 60.0
NOW = 3630.0
K_NOW = int(NOW // DT)


def scattered_attempts(n: int, seed: int = 1) -> tuple[list, list]:
    """``n`` running attempts under co-located demand, each last read in the clock's step
    (an inline read), made between lists, dicts, tuples and strings and shuffled; returns
    them and the objects kept between them (hold both while reading)."""
    from sim_bridge._jobs import Attempt, new_memo

    rng = random.Random(seed)
    dem = (0.1, 0.2, 0.0)
    atts: list = []
    junk: list = []
    for i in range(n):
        a = Attempt(i, None, 0, i % 1000, float(3000 + i % 500), 0.0, pid=0)
        junk.append([float(i)] * rng.randint(1, 12))
        a._work = float(100.0 + i % 77)
        a._dem = dem
        a._seg_t = 3500.0 + (i % 7)
        junk.append({i: i})
        a._prog = (3600.0 + (i % 3), float(i % 50) + 0.5)
        junk.append((float(i), float(i + 1), float(i + 2)))
        memo = new_memo()  # as the engine makes it (a RateMemo where the extension is built)
        memo[:] = (K_NOW, dem, 0.37 + (i % 11) * 0.01)
        a._step_rate = memo
        junk.append(str(i) * rng.randint(1, 5))
        atts.append(a)
    rng.shuffle(junk)
    del junk[::2]
    rng.shuffle(atts)
    return atts, junk


def read_all(atts: list) -> list[float]:
    """``progress_list`` over ``atts`` at the clock (every read inline)."""
    from sim_bridge._progress_core import progress_list

    return progress_list(atts, NOW, None, None, None, {}, True, DT, K_NOW)


def time_reads(n: int, repeat: int) -> dict[bool, float]:
    """Best ns per attempt of :func:`read_all` over :func:`scattered_attempts`, with the hints
    (True) and without (False), ``repeat`` rounds each, interleaved."""
    import gc

    from sim_bridge._progress_core import set_prefetch

    atts, junk = scattered_attempts(n)
    best = {True: float("inf"), False: float("inf")}
    values: dict[bool, list[float]] = {}
    gc.disable()
    try:
        for _ in range(repeat):
            for on in (True, False):
                was = set_prefetch(on)
                try:
                    t = time.perf_counter()
                    values[on] = read_all(atts)
                    best[on] = min(best[on], time.perf_counter() - t)
                finally:
                    set_prefetch(was)
    finally:
        gc.enable()
    if values[True] != values[False]:
        sys.exit("bench_prefetch: the reads differ with and without the hints")
    del junk
    return {on: 1e9 * s / n for on, s in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attempts", type=int, default=150_000, help="0 skips it (150,000)")
    ap.add_argument("--fb2010-events", type=int, default=0, help="FB-2010 events (0: skip)")
    ap.add_argument("--data-dir", default=None, help="data directory holding swim/")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of each side (3)")
    args = ap.parse_args()
    try:
        from sim_bridge._progress_core import set_prefetch
    except ImportError:
        sys.exit("bench_prefetch: the extension sim_bridge._progress_core is not built")

    if args.attempts:
        ns = time_reads(args.attempts, args.repeat)
        print(
            f"{args.attempts:,} scattered attempts, best of {args.repeat}: without hints (peer) "
            f"{ns[False]:.0f} ns an attempt, with hints {ns[True]:.0f} ns "
            f"({ns[True] / ns[False]:.2f}x)",
            flush=True,
        )
    if args.fb2010_events:
        labels = {True: "with hints", False: "without hints (peer)"}
        compare_switched_late(set_prefetch, labels, args.fb2010_events, args.data_dir, args.repeat)


if __name__ == "__main__":
    main()
