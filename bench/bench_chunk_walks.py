"""The chunk walks of co-tenant solves in C (``TenantRates.rates`` and ``.end_chunks``) against
the NumPy walk.

An attempt that shares its node is solved step by step for its first steps, then a chunk of
steps at a time (``Cluster.end_with``, ``Cluster.work_with``). Peer measured in the same run:
the same chunks walked in NumPy (``sim_bridge._cluster.CHUNKS_IN_C`` off: ``_rates_with_py``,
then ``cumsum`` and ``searchsorted``), which is what the engine runs without the extensions.
Since 2026-11-30 (n) both sum a step's load in resource order, as the step-by-step walk does,
so the two give the same floats; before, the chunk's load was a BLAS product. Printed, each
side ``--repeat`` times, interleaved, the engine's loop CPU (set-up excluded), the ratio
compiled / peer, and whether the two traces are equal:

- Alibaba 2017's first ``--ali2017-hours`` of jobs (default 0.25) on its 1,300 machines of
  176 slots without speculation: up to 175 co-tenants a machine;
- with ``--fb2010-events N`` (0 skips it), the first N events of the FB-2010 day on
  33,000 x 10 with LATE.

Both need the data (``straggler data fetch``, or ``--data-dir ../shared/data``).

Measured 2026-11-30 (n), code 3bd1d57, the Alibaba 2017 day replay on the other core (log
``bench/results/chunk_walks_n.txt``): Alibaba's quarter hour, numpy (peer) 55.1 s, compiled
32.6 s (0.59x); traces equal.

Run: ``.venv/bin/python bench/bench_chunk_walks.py [--ali2017-hours 0.25] [--fb2010-events 0]
[--data-dir DIR] [--repeat 2]``
"""

from __future__ import annotations

import argparse
import sys

from _fb2010_loop import compare_fb2010, fb2010_loop_cpu, loop_cpu


def _side(in_c: bool, run) -> tuple[float, int]:
    from sim_bridge import _cluster

    _cluster.CHUNKS_IN_C = in_c
    return run()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ali2017-hours", type=float, default=0.25, help="0 skips it (0.25)")
    ap.add_argument("--fb2010-events", type=int, default=0, help="FB-2010 events (0: skip)")
    ap.add_argument("--data-dir", default=None, help="data directory holding the traces")
    ap.add_argument("--repeat", type=int, default=2, help="engine runs of each side (2)")
    args = ap.parse_args()

    from sim_bridge import _cluster

    if _cluster.TenantRates is None:
        sys.exit("bench_chunk_walks: the extension sim_bridge._tenants_core is not built")
    labels = {True: "compiled", False: "numpy (peer)"}
    cases = []
    if args.ali2017_hours:
        cases.append(
            (
                f"Alibaba 2017 first {args.ali2017_hours:g} h, none, 1,300 x 176",
                lambda out: loop_cpu(
                    "ALI2017", 1300, 176, "none", args.ali2017_hours, None, args.data_dir, out
                ),
            )
        )
    if args.fb2010_events:
        cases.append(
            (
                f"FB-2010 first {args.fb2010_events:,} events, LATE, 33,000 x 10",
                lambda out: fb2010_loop_cpu("late", args.fb2010_events, args.data_dir, out),
            )
        )
    for what, run in cases:
        c, p, same = compare_fb2010(
            lambda in_c, out, run=run: _side(in_c, lambda: run(out)), labels, what, args.repeat
        )
        print(
            f"{what}, loop CPU (best of {args.repeat}): numpy (peer) {p:.1f} s, compiled "
            f"{c:.1f} s ({c / p:.2f}x); traces equal: {same}"
        )


if __name__ == "__main__":
    main()
