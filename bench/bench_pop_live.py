"""The compiled heap passing over the entries the loop would (``EventHeap.pop_live``) against
the loop popping each.

Peer measured in the same run: the loop handed every heap entry
(``sim_bridge._closed_events.SKIP_STALE_IN_C`` off), what the engine ran before: each stale
finish, each deferred solve of a closed attempt and each older deferral's re-queue popped and
passed over or pushed again in Python (``Simulator._loop``,
``AttemptPhysics._solve_deferred``). Printed, each side ``--repeat`` times, interleaved, the
engine's loop CPU (set-up excluded), the ratio and whether the two traces are equal:

- Alibaba 2017's first ``--ali2017-hours`` of jobs (default 0.25) on its 1,300 machines of
  176 slots without speculation, to their end: 64 heap entries popped an event, 40 of them
  re-queues (the whole table's first 150,000 events);
- with ``--fb2010-events N`` (0 skips it), the first N events of the FB-2010 day on
  33,000 x 10 with LATE.

Both need the data (``straggler data fetch``, or ``--data-dir ../shared/data``).

Measured 2026-11-30 (p) on the 2-core machine, two day replays beside it, ``--repeat 1``:
Alibaba 0.25 h, loop CPU 25.6 s (peer) against 24.1 s (0.94x); FB-2010's first 300,000
events with LATE, 48.7 s against 50.1 s (1.03x: no gain measurable there, where the loop
pops ~9.5 entries an event, not 64); traces equal both times. Side by side on Alibaba's
whole table to 2 h (``bench/results/ALI2017_none_2h_p_bb4b032.jsonl``): 0.92x the CPU an
event.

Run: ``.venv/bin/python bench/bench_pop_live.py [--ali2017-hours 0.25] [--fb2010-events 0]
[--data-dir DIR] [--repeat 2]``
"""

from __future__ import annotations

from _fb2010_loop import engine_switch_main


def main() -> None:
    import sim_bridge._closed_events as module
    import sim_bridge._event_heap as heaps

    def set_switch(in_c: bool) -> None:
        module.SKIP_STALE_IN_C = in_c

    engine_switch_main(
        __doc__, set_switch, heaps.HEAP_IN_C, "sim_bridge._heap_core", "every entry to the loop"
    )


if __name__ == "__main__":
    main()
