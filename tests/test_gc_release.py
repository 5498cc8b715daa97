"""A finished run is freed by reference counting when ``simulate`` returns.

The collector is paused during a run (``sim_bridge._gc.gc_paused``); ``simulate`` breaks the
run's cycles (done jobs released, the simulator <-> view link cut) once its tables are built,
so nothing of the run waits for the first collection after it (which walked ~170k objects on
FB-2010's first 0.05 h).
"""

from __future__ import annotations

import gc

import pytest

from sim_bridge import simulate
from sim_bridge._engine import Simulator
from sim_bridge._jobs import Attempt, Job, Task

_RUN = dict(workload="SYN", nodes=20, slots=2, hours=0.05, seed=3, progress=False)


def _alive() -> list[object]:
    return [o for o in gc.get_objects() if type(o) in (Job, Task, Attempt, Simulator)]


@pytest.mark.parametrize("policy", ["none", "late", "mantri"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_finished_run_leaves_no_cycles_for_the_collector(policy, stream, tmp_path):
    gc.collect()
    before = len(_alive())
    kw = {"trace_sink": tmp_path / "t.parquet"} if stream else {}
    gc.disable()
    try:
        result = simulate(policy=policy, **_RUN, **kw)
        left = len(_alive()) - before
    finally:
        gc.enable()
    assert result.summary["jobs"] > 0
    assert left == 0


def test_the_tables_are_the_same_with_and_without_breaking_the_cycles(monkeypatch):
    import sim_bridge._simulate as module

    kept = simulate(policy="late", **_RUN)
    monkeypatch.setattr(module, "_dismantle", lambda sim: None)
    whole = simulate(policy="late", **_RUN)
    assert kept.tasks.equals(whole.tasks) and kept.jobs.equals(whole.jobs)
