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

from _fb2010_loop import engine_switch_main


def main() -> None:
    import sim_bridge._cluster as module

    def set_switch(in_c: bool) -> None:
        module.CHUNKS_IN_C = in_c

    engine_switch_main(
        __doc__, set_switch, module.TenantRates is not None, "sim_bridge._tenants_core", "numpy"
    )


if __name__ == "__main__":
    main()
