"""Every node's rates computed a few steps at a time, against a whole part of the paths.

With a window (a streamed run), a cluster computes the profiles' rates and running sums of
every node as far as a read reaches, a part at a time, and drops them once no reader holds
them. Peer, measured in the same run: the rule until 2026-11-30, a part of the paths (120
steps on 33,000 nodes) at a time, held until the clock passed it -- 2 profiles x (rate, sum)
x 33,000 nodes x 8 bytes = 1 MB a step, ~130 MB at the start of each part. Now
(``Cluster(rate_steps=)``, chosen by ``sim_bridge._simulate.path_rate_steps``: 15 steps
there) they are computed and dropped 15 steps at a time; a solve whose end lies past them
walks its own node's rates from the levels (``Cluster._node_ahead``), which this measures too.

The reads are a streamed engine's, on a clock that moves a step at a time for ``--hours``:
the rates held from the clock (re-held every 10 steps, as ``sim_bridge._engine``'s
``_HOLD_EVERY_S``), the levels from ``--lag`` steps behind it, and each step ``--solves``
attempts launched on random nodes, each read at the clock (``launch_point``) and its end
solved within the paths drawn (``end_from(within=True)``), ends spread over the next 3
hours. Printed for each side: the most rates kept (MiB), the peak resident memory above the
resident set at its start (``VmHWM`` after ``/proc/self/clear_refs``; Linux only), CPU, the
per-node walks, and whether both solved the same floats.

This is a worst case for the walks: every attempt here runs alone on its node, so every
solve reads the rates, and 40% of them end past the rates computed. In the engine most
solves run under co-located demand (they read the levels, not the rates), and a bounded solve
goes on when the clock gets there, by when the rates are computed: the streamed FB-2010 half
hour on 33,000 x 10 with LATE made 520 walks for 68,084 ``end_from`` solves (138 before),
in 0.93x the CPU.

Measured 2026-11-30 (k) on the 2-core machine (two FB-2010 day replays beside it), defaults
(33,000 nodes, 2 profiles, 8 h, 300 launches a step): rates kept at most 121.4 MiB (peer)
and 30.7 MiB (**0.25x**); peak above the start 421 and 377 MiB (0.89x); CPU 5.87 and 9.63 s
(1.64x: 120,348 per-node walks, ~32 us each); the same floats solved.

Run: ``.venv/bin/python bench/bench_rate_parts.py [--nodes 33000] [--hours 8] [--solves 300]``
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import sys
import time

import numpy as np
from _proc_memory import hwm_mb, reset_hwm, rss_mb

_PROFILES = ((0.5, 0.2, 1.0, 0.3), (1.0, 0.0, 0.1, 0.0))  # two, as FB-2010's maps and reduces


def _run(nodes: int, rate_steps: int, hours: float, solves: int, lag: int) -> dict:
    """One side: the reads above on a cluster rating ``rate_steps`` at a time."""
    from sim_bridge import Cluster
    from sim_bridge._cluster import Cluster as _C
    from sim_bridge._simulate import path_part_steps

    walks = [0]
    ahead = _C._node_ahead

    def counted(self, *a):
        walks[0] += 1
        return ahead(self, *a)

    _C._node_ahead = counted  # type: ignore[method-assign]
    try:
        base = rss_mb()
        reset_hwm()
        part = path_part_steps(nodes)
        c = Cluster(nodes, 10, seed=7, keep_paths=False, extend_steps=part, rate_steps=rate_steps)
        pids = [c.profile_id(p) for p in _PROFILES]
        rng = np.random.default_rng(3)
        digest = hashlib.sha256()
        most, cpu = 0, 0.0
        k0 = part  # past the first part, rated whole before any hold
        for k in range(k0, k0 + int(hours * 60)):
            t = k * c.dt
            t0 = time.process_time()
            if (k - k0) % 10 == 0:
                c.hold("engine", t - lag * c.dt, rates_from=t)
            for node, pid, ahead_s in zip(
                rng.integers(0, nodes, solves).tolist(),
                rng.integers(0, len(pids), solves).tolist(),
                rng.uniform(0.0, 3 * 3600.0, solves).tolist(),
                strict=True,
            ):
                kk, r0, c0 = c.launch_point(node, pid, t)
                end = c.end_from(node, pid, t, kk, r0, c0, ahead_s * r0, within=True)
                at = end if isinstance(end, float) else -end.at
                digest.update(struct.pack("dd", c0, at))
            cpu += time.process_time() - t0
            most = max(most, sum(a.nbytes for a in (*c._rate, *c._cum)))
        peak = hwm_mb() - base
        del c
        return {"most": most / 2**20, "peak": peak, "cpu": cpu, "walks": walks[0],
                "digest": digest.digest()}  # fmt: skip
    finally:
        _C._node_ahead = ahead  # type: ignore[method-assign]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=33_000, help="nodes (33000, FB-2010's)")
    ap.add_argument("--hours", type=float, default=8.0, help="simulated hours of reads (8)")
    ap.add_argument("--solves", type=int, default=300, help="attempts launched a step (300)")
    ap.add_argument("--lag", type=int, default=32, help="levels held behind the clock (32)")
    args = ap.parse_args()
    for name in ("nodes", "solves"):
        if getattr(args, name) < 1:
            sys.exit(f"bench_rate_parts: --{name} must be >= 1, got {getattr(args, name)}")
    if not args.hours > 0:
        sys.exit(f"bench_rate_parts: --hours must be > 0, got {args.hours}")
    if not os.path.exists("/proc/self/clear_refs"):
        sys.exit("bench_rate_parts: needs Linux's /proc/self/clear_refs to reset the peak")

    import sim_bridge
    from sim_bridge._simulate import path_part_steps, path_rate_steps

    sim_bridge.lean_allocators()
    part = path_part_steps(args.nodes)
    new = path_rate_steps(args.nodes, part)
    print(
        f"{args.nodes:,} nodes, paths in parts of {part} steps, {len(_PROFILES)} profiles; "
        f"{args.hours:g} h of reads, {args.solves} launches a step, levels held {args.lag} "
        "steps behind the clock"
    )
    res = {}
    for label, steps in (("peer: a part of the paths", part), ("rated in parts", new)):
        res[label] = r = _run(args.nodes, steps, args.hours, args.solves, args.lag)
        print(
            f"  {label:26s} ({steps:4d} steps): rates kept at most {r['most']:6.1f} MiB, peak "
            f"above start {r['peak']:6.1f} MiB, CPU {r['cpu']:6.2f} s, per-node walks "
            f"{r['walks']:,}"
        )
    a, b = res.values()
    print(
        f"  in parts / peer: rates kept {b['most'] / a['most']:.2f}x, peak "
        f"{b['peak'] / a['peak']:.2f}x, CPU {b['cpu'] / a['cpu']:.2f}x; "
        f"the same floats solved: {a['digest'] == b['digest']}"
    )


if __name__ == "__main__":
    main()
