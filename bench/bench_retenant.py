"""A node's co-tenants re-solved in C (``sim_bridge._retenant_core``) against the Python loop.

Peer measured in the same run: ``AttemptPhysics._retenant_py`` and the Python lists of the
tenants' own and added demands (``sim_bridge.world._attempts.RETENANT_IN_C`` off), what the
engine ran before the compiled loop (and runs without the extensions). Printed, each side
``--repeat`` times, interleaved, the engine's loop CPU (set-up excluded) and the ratio
compiled / peer, and whether the two traces are equal:

- Alibaba 2017's first ``--ali2017-hours`` of jobs (default 0.25: 71,049 tasks) on its
  1,300 machines of 176 slots without speculation, to their end: each departure re-solves up
  to 175 co-tenants, about half of the Python loop's CPU (py-spy);
- with ``--fb2010-events N`` (0 skips it), the first N events of the FB-2010 day on
  33,000 x 10 with LATE.

Both need the data (``straggler data fetch``, or ``--data-dir ../shared/data``).

Measured 2026-11-29 on the 2-core machine (two long replays running beside it, so CPU is
process time), loop and set-up together, from ``/tmp/s17/ab.py`` (the same A/B outside the
repo, whole process CPU):

- Alibaba 0.25 h, the re-solve loop alone in C: 30.5 s -> 24.0 s (0.79x, a quiet machine);
  with the own and added demands too: 34.8 s -> 27.0 / 25.8 s (0.76x); equal traces. This
  script (``--repeat 1``), loop CPU only: python 31.8 s, compiled 25.0 s (0.79x), equal;
  after the walk's key is read once a tenant (5b929b1): 31.2 s, 23.5 s (0.75x), equal;
- FB-2010 with LATE, first 400,000 events: 80.3 s -> 72.1 s (0.90x); equal traces.

Run: ``.venv/bin/python bench/bench_retenant.py [--ali2017-hours 0.25] [--fb2010-events 0]
[--data-dir DIR] [--repeat 2]``
"""

from __future__ import annotations

from _fb2010_loop import engine_switch_main


def main() -> None:
    import sim_bridge.world._attempts as module

    def set_switch(in_c: bool) -> None:
        module.RETENANT_IN_C = in_c

    engine_switch_main(
        __doc__, set_switch, module._retenant_c is not None, "sim_bridge._retenant_core", "python"
    )


if __name__ == "__main__":
    main()
