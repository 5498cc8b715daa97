"""An attempt holds its stage's contention profile from its launch.

The co-tenants' re-solve (``sim_bridge._retenant_core``), the scans' progress reads
(``sim_bridge._progress_core``) and the deferred solves read a running attempt's profile id
from its ``_pid`` slot instead of the chain ``att.task.job.pids[att.task.stage]``: four
dependent loads, each a likely cache miss, per co-tenant on Alibaba 2017's nodes of 176
slots. The oracle is the chain: every attempt the engine re-solves holds the chain's value,
and a run whose attempts hold none (every read falls back on the chain, compiled and in
Python) gives the same tables, in memory and streamed.
"""

from __future__ import annotations

import pytest
from _crowded import crowded_workload, simulate_tables

import sim_bridge
import sim_bridge.world._attempts as attempts_mod
from sim_bridge._jobs import Attempt, Job, Task, profile_of

WORLDS = [
    pytest.param(crowded_workload(5, 14), dict(nodes=1, slots=176, policy="late"), id="crowd-176"),
    pytest.param("SYN", dict(hours=0.05, nodes=6, slots=8, policy="late"), id="syn-late"),
    pytest.param("SYN", dict(hours=0.05, nodes=5, slots=8, policy="mantri"), id="syn-mantri"),
    pytest.param(
        "SYN",
        dict(hours=0.05, nodes=6, slots=12, bad_node_share=0.3, record_truth=True, seed=4),
        id="bad-nodes-truth",
    ),
]


def test_profile_of_reads_the_chain_when_nothing_is_held():
    job = Job()
    job.pids = (3, 8)
    tasks = [Task(i, job, i, stage, "map", 1.0, 0.0) for i, stage in enumerate((0, 1))]
    for task in tasks:
        a = Attempt(0, task, 0, node=0, launch_time=0.0, start_fraction=0.0)
        assert a._pid is None
        assert profile_of(a) == job.pids[task.stage]
        held = Attempt(1, task, 1, 0, 0.0, 0.0, pid=11)
        assert profile_of(held) == 11  # what is held is read, not the chain


@pytest.mark.parametrize(("workload", "kw"), WORLDS)
def test_every_re_solved_attempt_holds_its_stage_s_profile(monkeypatch, workload, kw):
    seen = {"n": 0}
    real = attempts_mod.AttemptPhysics._retenant

    def watched(self, atts, now, dems):
        for a in atts:
            assert a._pid is not None
            assert a._pid == a.task.job.pids[a.task.stage]
        seen["n"] += len(atts)
        real(self, atts, now, dems)

    monkeypatch.setattr(attempts_mod.AttemptPhysics, "_retenant", watched)
    r = sim_bridge.simulate(workload, progress=False, **kw)
    assert seen["n"] > 0 and len(r.tasks) > 0


def _run(monkeypatch, tmp_path, held: bool, workload, kw, stream: bool, in_c: bool):
    real = attempts_mod.AttemptPhysics._solve_launch

    def forgetful(self, att, *args):
        end = real(self, att, *args)
        att._pid = None  # as an attempt built by hand: every later read takes the chain
        return end

    with monkeypatch.context() as m:
        m.setattr(attempts_mod, "RETENANT_IN_C", in_c)
        if not held:
            m.setattr(attempts_mod.AttemptPhysics, "_solve_launch", forgetful)
        out = tmp_path / f"{'held' if held else 'chain'}.parquet" if stream else None
        return simulate_tables(workload, kw, out)


@pytest.mark.parametrize("in_c", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
@pytest.mark.parametrize(("workload", "kw"), WORLDS)
def test_a_run_holding_no_profile_is_the_same_run(
    monkeypatch, tmp_path, workload, kw, stream, in_c
):
    if in_c and attempts_mod._retenant_c is None:
        pytest.skip("sim_bridge._retenant_core is not built")
    held = _run(monkeypatch, tmp_path, True, workload, kw, stream, in_c)
    chain = _run(monkeypatch, tmp_path, False, workload, kw, stream, in_c)
    assert len(held[0]) > 0
    assert held[0].equals(chain[0])
    if not stream:
        assert held[1].equals(chain[1])
