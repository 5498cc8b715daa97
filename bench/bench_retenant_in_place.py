"""The co-tenants' re-solve rewriting a tenant's work done and pending solve in place, against
the same compiled loop allocating new ones.

Peer measured in the same run: ``sim_bridge._retenant_core.retenant`` with
``set_in_place(False)``, the compiled re-solve as it was before 2026-11-30 (q): each tenant
re-solved got a new ``_seg_done`` float and a new ``_solve`` tuple ``(seq, t0, work)``, and
the old ones were freed. With it on, each is rewritten in place when the attempt's slot holds
its only reference (the tuple's count is a new int). Printed, each side ``--repeat`` times,
interleaved, the engine's loop CPU (set-up excluded), the ratio and whether the two traces
are equal (they must be: no reader can tell the two apart):

- Alibaba 2017's first ``--ali2017-hours`` of jobs (default 0.25) on its 1,300 machines of
  176 slots without speculation, to their end: each departure re-solves up to 175
  co-tenants;
- with ``--fb2010-events N`` (0 skips it), the first N events of the FB-2010 day on
  33,000 x 10 with LATE.

Both need the data (``straggler data fetch``, or ``--data-dir ../shared/data``).

Run: ``.venv/bin/python bench/bench_retenant_in_place.py [--ali2017-hours 0.25]
[--fb2010-events 0] [--data-dir DIR] [--repeat 2]``
"""

from __future__ import annotations

from _fb2010_loop import engine_switch_main


def main() -> None:
    try:
        from sim_bridge._retenant_core import set_in_place
    except ImportError:
        set_in_place = None

    def set_switch(in_place: bool) -> None:
        if set_in_place is not None:
            set_in_place(in_place)

    engine_switch_main(
        __doc__,
        set_switch,
        set_in_place is not None,
        "sim_bridge._retenant_core",
        "new ones",
        side="in place",
    )


if __name__ == "__main__":
    main()
