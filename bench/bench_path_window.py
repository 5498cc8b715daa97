"""The contention paths' window moved on in its own buffer, against copying it to a new array.

A streamed run's cluster keeps the levels ``(4, nodes, steps)`` some reader still holds and
grows them a part at a time (120 steps on 33,000 nodes, ~1 MB a step). Each growth drops the
steps no reader holds and appends the part's. Peer measured in the same run: the copy that
did it until 2026-11-29 (j) -- a new array of the new window, the kept steps copied in, then
the old array freed, so both windows were resident at once. Now
(``sim_bridge._path_window.slide_window``) the kept steps move inside the window's own
buffer, one ``memmove`` a row, and the buffer grows or shrinks by ``realloc``.

Printed, for ``--parts`` growths of a ``--nodes`` cluster whose reader keeps ``--keep`` steps
behind the new part's start: per growth (the reader's hold, which may trim the window at
once, then the read that grows it), the transient -- its peak resident memory above the
larger of the resident memory before and after it (``VmHWM`` after ``/proc/self/clear_refs``
resets it to the resident set; Linux only) --, each side's largest, their ratio, each
side's CPU, the windows reached, and whether both read the same levels.

Measured 2026-11-29 (j) on the 2-core machine (two FB-2010 day replays beside it), this script
with its defaults (33,000 nodes, 6 growths of 120 steps, windows of 152 and 272 steps): the
copy's transients 103, 153, 32, 154, 32 and 33 MiB; in place 8, 9, 0, 9, 0 and 9 MiB (the
part's draw), **0.06x** the largest; CPU 7.55 against 7.98 s (0.95x); the same levels read.
The day replays themselves are in ``bench/bench_sim.py`` (j).

Run: ``.venv/bin/python bench/bench_path_window.py [--nodes 33000] [--parts 6] [--keep 32,160]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from _proc_memory import hwm_mb, reset_hwm, rss_mb


def _copy_slide(self, drop: int, steps: int) -> None:
    """The peer: the window copied into a new array (the code before (j))."""
    f, n, s = self._levels.shape
    levels = np.empty((f, n, steps))
    levels[:, :, : s - drop] = self._levels[:, :, drop:]
    self._levels = levels
    self._lvbuf = levels.reshape(-1)


def _run(
    nodes: int, parts: int, keep: list[int], in_place: bool
) -> tuple[list[float], float, bytes, list[int]]:
    """Each growth's transient (peak above the resident set before and after it), the CPU and
    a digest of the levels read."""
    import hashlib

    from sim_bridge import Cluster
    from sim_bridge._cluster import Cluster as _C
    from sim_bridge._simulate import path_part_steps

    saved = _C._slide
    if not in_place:
        _C._slide = _copy_slide  # type: ignore[method-assign]
    try:
        c = Cluster(nodes, 10, seed=7, keep_paths=False, extend_steps=path_part_steps(nodes))
        every = np.arange(nodes)
        digest = hashlib.sha256()
        above, cpu, windows = [], 0.0, []
        for i in range(parts):
            k = c.horizon_steps  # the next part's first step
            before = rss_mb()
            reset_hwm()
            t = time.process_time()
            c.hold("reader", (k - keep[i % len(keep)]) * c.dt)  # may trim the window at once
            lv = c.levels_at(every, np.full(nodes, k * c.dt))  # grows the paths by a part
            cpu += time.process_time() - t
            above.append(hwm_mb() - max(before, rss_mb()))
            digest.update(lv.tobytes())
            windows.append(c.window_steps)
        del c
        return above, cpu, digest.digest(), windows
    finally:
        _C._slide = saved  # type: ignore[method-assign]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=33_000, help="nodes (33000, FB-2010's)")
    ap.add_argument("--parts", type=int, default=6, help="growths of the paths (6)")
    ap.add_argument(
        "--keep",
        default="32,160,32,280,32,32",
        help="steps held behind each new part, a cycle (32,160,32,280,32,32: a reader that "
        "at times lags, as a long attempt's hold does)",
    )
    args = ap.parse_args()
    try:
        keep = [int(x) for x in args.keep.split(",")]
    except ValueError:
        sys.exit(f"bench_path_window: --keep must be integers joined by commas, got {args.keep!r}")
    if not os.path.exists("/proc/self/clear_refs"):
        sys.exit("bench_path_window: needs Linux's /proc/self/clear_refs to reset the peak")

    import sim_bridge
    from sim_bridge._simulate import path_part_steps

    sim_bridge.lean_allocators()
    step_mb = 4 * 8 * args.nodes / 2**20
    part = path_part_steps(args.nodes)
    print(
        f"{args.nodes:,} nodes ({step_mb:.2f} MiB a step), {args.parts} growths of {part} steps, "
        f"steps held behind each in turn: {args.keep}"
    )
    res = {}
    for in_place in (False, True):
        res[in_place] = _run(args.nodes, args.parts, keep, in_place)
    for in_place, label in ((False, "copy to a new array (peer)"), (True, "moved in its buffer")):
        above, cpu, _, _ = res[in_place]
        each = ", ".join(f"{x:.0f}" for x in above)
        print(f"  {label:28s} transient per growth: {each} MiB; CPU {cpu:.2f} s")
    print(f"  windows after each growth (steps): {res[True][3]} (the peer's: {res[False][3]})")
    ratio = max(res[True][0]) / max(res[False][0])
    same = res[True][2] == res[False][2]
    print(
        f"  largest transient, in place / peer: {ratio:.2f}x; "
        f"CPU {res[True][1] / res[False][1]:.2f}x; the same levels read: {same}"
    )


if __name__ == "__main__":
    main()
