"""A day-block of contention levels drawn in parts from marks, against drawing it again a part.

A cluster whose day-block of levels is bigger than 128 MiB (about 2,900 nodes) draws it a
part at a time (``sim_bridge._simulate.path_part_steps``: 2-hour parts on 33,000 nodes; 4-hour
parts, 256 MiB, until 2026-11-29 (e)).
Peer measured in the same run: every part draws and filters the whole block's stream again
and keeps its own steps (``PersistentLevels.block_part`` with the marks switched off, what
it did before and does without ``sim_bridge._normals_core``). The marks: the block's first
part draws the whole stream once, recording each row's generator and AR(1) state at every
part, and the later parts draw only their own steps (``sim_bridge.world._block_marks``).

Printed, for ``--blocks`` consecutive day-blocks of ``--nodes`` nodes, each side
``--repeat`` times interleaved: the CPU of each part (best of the repeats), each side's total
and the ratio marks / peer, whether every part is the same array, and the marks' memory.

Measured 2026-11-29 on the 2-core machine (an FB-2010 replay running beside it), this script
with its defaults (33,000 nodes, one block in 6 parts of 240 steps): peer 3.86-4.41 s a
part, 23.9 s the block; marks 3.76 s for the first part and 0.68-0.70 s for each other,
7.2 s the block (**0.30x**); every part the same array; the marks hold 36 MiB while the
block is drawn.

Measured 2026-11-29 (e), the parts now 120 steps (12 a block; this script, its defaults, an
FB-2010 replay beside it): peer 3.89-4.24 s a part, 47.6 s the block; marks 3.97 s for the
first part and 0.34-0.35 s for each other, 7.8 s the block (**0.16x**); every part the same
array; the marks hold 73 MiB while the block is drawn.

Since 2026-11-30 (k) each part's marks lie in pages of their own, given back once the part is
drawn: the script also prints the marks kept after each part and the process's resident set
then (the marks side), which falls by a part's share each part instead of holding 73 MiB to
the block's last part. Measured 2026-11-30 (k), its defaults, two day replays beside it
(slower than above): peer 78.1 s the block, marks 12.7 s (0.16x), the same arrays; the marks
kept after each part 66, 60, 54, ... 6, 0 MiB, the resident set 235, 230, 224, ... 175, 169
MiB.

Since 2026-11-30 (o) a row's generator state is kept once and each part keeps the outputs
the row drew before it (4 bytes; the part's generator is stepped on at once, an LCG jump
ahead), so the marks are 40 MiB after a block's first pass, not 73. Measured 2026-11-30 (o),
its defaults, an FB-2010 day and an Alibaba 2017 replay beside it: peer 87.6 s the block,
marks 16.7 s (0.19x; the first part 7.6 s, each other 0.74-0.88 s, the load of (k) and more:
in isolation one part's draws from the counted marks took 0.23-0.26 s against 0.21-0.22 s
from the whole states), the same arrays; the marks kept after each part 37, 34, 31, ... 7, 0
MiB, the resident set 204, 202, 199, ... 174, 167 MiB (235 ... 169 on (k)).

Run: ``.venv/bin/python bench/bench_path_parts.py [--nodes 33000] [--blocks 1] [--repeat 1]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from _proc_memory import rss_mb


def _draw(
    nodes: int, blocks: int, steps: int, marks: bool
) -> tuple[list[float], list[bytes], list[tuple[float, float]]]:
    """Each part's CPU and a digest of its levels, for ``blocks`` day-blocks in parts, and
    after each part the marks kept (MiB) and the resident set (MiB, Linux)."""
    import hashlib

    from sim_bridge._cluster import _BLOCK
    from sim_bridge.world import DEFAULT_PERSISTENCE, PersistentLevels, _block_marks, _persistence

    _persistence.seekable = _block_marks.seekable if marks else (lambda: False)
    g = PersistentLevels(DEFAULT_PERSISTENCE, nodes, (2026, 505))
    out = np.empty((4, nodes, steps))
    cpu, digest, kept = [], [], []
    for b in range(blocks):
        for lo in range(0, _BLOCK, steps):
            t = time.process_time()
            g.block_part(b, _BLOCK, lo, steps, out=out)
            cpu.append(time.process_time() - t)
            digest.append(hashlib.sha256(out.tobytes()).digest())
            m = g._marks
            left = 0.0 if m is None else m.nbytes / 2**20
            kept.append((left, rss_mb() if os.path.exists("/proc/self/statm") else float("nan")))
    return cpu, digest, kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=33_000, help="nodes (33000, FB-2010's)")
    ap.add_argument("--blocks", type=int, default=1, help="consecutive day-blocks (1)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each side (1)")
    args = ap.parse_args()

    from sim_bridge._cluster import _BLOCK
    from sim_bridge._simulate import path_part_steps
    from sim_bridge.world import _block_marks

    if not _block_marks.seekable():
        sys.exit("bench_path_parts: sim_bridge._normals_core is not built or differs from NumPy")
    steps = path_part_steps(args.nodes)
    if steps == _BLOCK:
        sys.exit(f"bench_path_parts: {args.nodes:,} nodes draw whole blocks; use more nodes")
    best: dict[bool, list[float]] = {}
    digests: dict[bool, list[bytes]] = {}
    kept: list[tuple[float, float]] = []
    for _ in range(args.repeat):
        for marks in (False, True):
            cpu, digests[marks], k = _draw(args.nodes, args.blocks, steps, marks)
            kept = k if marks else kept
            best[marks] = [min(a, b) for a, b in zip(best.get(marks, cpu), cpu, strict=True)]
    parts = _BLOCK // steps
    # a block's marks after its first pass (an untouched map: its size, not its pages)
    key = (0, _BLOCK, steps)
    empty = _block_marks.BlockMarks.start(np.random.default_rng(0), key, 4 * args.nodes)
    mib = empty.nbytes / 2**20
    print(
        f"{args.nodes:,} nodes, {args.blocks} day-block(s) of {_BLOCK} steps in {parts} parts of "
        f"{steps}; CPU best of {args.repeat}"
    )
    for marks, label in ((False, "whole block a part (peer)"), (True, "from marks")):
        each = ", ".join(f"{x:.2f}" for x in best[marks])
        print(f"  {label:26s} parts: {each} s; total {sum(best[marks]):.1f} s")
    ratio = sum(best[True]) / sum(best[False])
    same = digests[True] == digests[False]
    print(
        f"  marks / peer: {ratio:.2f}x; every part the same array: {same}; "
        f"marks {mib:.0f} MiB after a block's first pass"
    )
    print("  marks kept after each part: " + ", ".join(f"{m:.0f}" for m, _ in kept) + " MiB")
    print("  resident set then: " + ", ".join(f"{r:.0f}" for _, r in kept) + " MiB")


if __name__ == "__main__":
    main()
