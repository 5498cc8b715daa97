"""LATE's scan: the compiled ``late_scan`` against the Python scan, on the FB-2010 day.

Peer measured in the same run: ``LATE._ranked_py`` (``LATE_SCAN_IN_C = False``), the scan in
Python and NumPy that LATE ran before (its first pass in Python; the progress reads through
the view's compiled loop either way). Printed: the engine's loop CPU over the first
``--events`` events of the FB-2010 day on 33,000 x 10 with LATE, streamed, ``--repeat`` runs
of each side, interleaved; the ratio; whether the two traces are equal (they must be: the
same reads in the same order, the same IEEE operations).

Measured 2026-11-28 (c) on the 2-core machine, against a worktree of the commit before the
change (cd0dcbf, whose first pass and progress reads were already compiled, the rest of the
scan in NumPy), run beside it (the same loop, ``/tmp/s15/ab.py``, outside the repo; a LATE
day replay on the other core), loop CPU:

- the first 400,000 events (0.86 simulated h): 81.5 -> 68.9 s with the whole scan in C;
  85.7 -> 68.6 s once it read the tasks from their slots and sorted inline;
- the first 1.2M events (2.16 h): 320.7 -> 249.2 s (0.78x) then; 288.6 -> 215.7 s (0.75x)
  once the progress reads also read their memos in place and book ``_prog`` in its slot;
- equal traces every time (452,254 rows at 1.2M events).

Measured 2026-11-29 (b), the reads' last-read pairs rewritten in place when nothing else
holds them (no pair or float allocated, nor the old ones freed, per read), against a copy
of the commit before (3bae583), the two run side by side (``/tmp/s18/ab.sh``, outside the
repo): the first 600,000 events, 96.8 / 100.6 -> 88.7 / 93.8 s of loop CPU (two pairs);
the LATE day to 6 h (``bench_day.py --until 6``) 680 -> 623 s of CPU; equal traces.

Run: ``.venv/bin/python bench/bench_late_scan.py [--events 300000] [--data-dir DIR]
[--repeat 2]``
"""

from __future__ import annotations

from _fb2010_loop import scan_switch_main

if __name__ == "__main__":
    scan_switch_main(__doc__, "late", "scan", "LATE_SCAN_IN_C", "_late_scan")
