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
[--repeat 2]``
"""

from __future__ import annotations

from _fb2010_loop import scan_switch_main

if __name__ == "__main__":
    scan_switch_main(__doc__, "mantri", "tick", "MANTRI_SCAN_IN_C", "_mantri_scan")
