"""Mantri's tick: the compiled ``mantri_scan`` against the Python tick, on the FB-2010 day.

Peer measured in the same run: ``Mantri._on_tick_py`` (``MANTRI_SCAN_IN_C = False``), the
tick in Python that Mantri ran before (its progress reads through the view's compiled loop,
its counts by bisection of the run times' ``memoryview``). Printed: the engine's loop CPU
over the first ``--events`` events of the FB-2010 day on 33,000 x 10 with Mantri, streamed,
``--repeat`` runs of each side, interleaved; the ratio; whether the two traces are equal
(they must be: the same reads in the same order, the same IEEE operations).

Measured 2026-11-30 (m) on the 2-core machine, a LATE day replay on the other core: py-spy
on the Python tick (a streamed FB-2010 half hour on 2,000 x 10, code e226704) put Mantri's
tick at 57% of the process: its progress reads 24% (a third of them ``SimView.progress``
of a task's live attempts, one Python call each), the bisections 7%, the rest the loop
itself. The same half hour (``sim_bridge.simulate("FB2010", "mantri", "fair", nodes=2000,
slots=10, hours=0.5, seed=0, trace_sink=...)``, 252,831 events, 148,853 copies), a copy of
e226704's tree against f066b33, twice each, interleaved: 112.3 / 110.6 s of CPU against
69.2 / 75.5 s, **0.65x**, and four equal ``tasks.parquet`` (395,614 attempts).

Run: ``.venv/bin/python bench/bench_mantri_scan.py [--events 300000] [--data-dir DIR]
[--repeat 1]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _fb2010_loop import compare_fb2010, fb2010_loop_cpu


def _engine_run(in_c: bool, n_events: int, data_dir: str | None, out: Path) -> tuple[float, int]:
    from sim_bridge.policies import _speculation

    _speculation.MANTRI_SCAN_IN_C = in_c
    return fb2010_loop_cpu("mantri", n_events, data_dir, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=300_000, help="FB-2010 events (300,000)")
    ap.add_argument("--data-dir", default=None, help="data directory holding swim/")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each side (1)")
    args = ap.parse_args()

    from sim_bridge.policies import _speculation

    if _speculation._mantri_scan is None:
        sys.exit("bench_mantri_scan: the extension sim_bridge._progress_core is not built")
    c, p, same = compare_fb2010(
        lambda in_c, out: _engine_run(in_c, args.events, args.data_dir, out),
        {True: "tick compiled", False: "tick in Python"},
        "FB-2010 with Mantri",
        args.repeat,
    )
    print(
        f"FB-2010 with Mantri, first {args.events:,} events, loop CPU (best of "
        f"{args.repeat}): Python tick (peer) {p:.1f} s, compiled {c:.1f} s ({c / p:.2f}x); "
        f"traces equal: {same}"
    )


if __name__ == "__main__":
    main()
