"""The engine's loop CPU over the first events of the FB-2010 day (shared by the benches
that compare two implementations of one part of the engine on it)."""

from __future__ import annotations

import time
from pathlib import Path


def fb2010_loop_cpu(
    policy: str, n_events: int, data_dir: str | None, out: Path
) -> tuple[float, int]:
    """Replay the FB-2010 day on 33,000 x 10 with ``policy``, streamed to ``out``, for its
    first ``n_events`` events; return the CPU seconds of the engine's loop (from the
    simulator's start, set-up excluded) and the events run."""
    import sim_bridge
    from sim_bridge import _engine

    box: dict = {}
    run = _engine.Simulator.run

    def timed(self, *a, **k):
        box["sim"], box["t0"] = self, time.process_time()
        return run(self, *a, **k)

    _engine.Simulator.run = timed
    try:
        sim_bridge.simulate(
            "FB2010",
            policy,
            "fair",
            nodes=33000,
            slots=10,
            hours=24,
            seed=0,
            data_dir=data_dir,
            progress=False,
            max_events=n_events,
            trace_sink=out,
        )
    except sim_bridge.SimulationStopped:
        pass
    finally:
        _engine.Simulator.run = run
    return time.process_time() - box["t0"], box["sim"].events
