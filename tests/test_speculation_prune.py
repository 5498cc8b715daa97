"""Hadoop's retry-after-speculate map is pruned of passed entries without changing a run.

An entry ``_next_ok[job] <= now`` acts as no entry (the clock never goes back), so dropping
such entries, finished jobs' included, must leave every decision as it was. Oracle: the same
run with pruning turned off.
"""

from __future__ import annotations

import pytest

import sim_bridge
from sim_bridge.policies import _speculation, get_policy


def _run(prune_min: int, data_dir, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_speculation, "_PRUNE_MIN", prune_min)
    pol = get_policy("hadoop", retry_after_speculate=30.0)
    r = sim_bridge.simulate(
        "FB2009",
        pol,
        nodes=50,
        slots=2,
        hours=3.0,
        seed=1,
        data_dir=data_dir,
        progress=False,
        record_counters=False,
    )
    return r, pol


def test_pruning_changes_no_decision_and_bounds_the_map(shared_data_dir, monkeypatch):
    never, pol_never = _run(10**9, shared_data_dir, monkeypatch)
    often, pol_often = _run(1, shared_data_dir, monkeypatch)
    assert often.tasks.equals(never.tasks)
    assert often.jobs.equals(never.jobs)
    speculated = (never.tasks["attempt"] > 0).groupby(never.tasks["job_id"]).any().sum()
    assert speculated >= 3  # the run exercises the map
    # unpruned, the map keeps one entry per job that ever speculated; pruned, it stays within
    # its bound and holds only entries still in force at the last pruning
    assert len(pol_never._next_ok) == speculated
    assert pol_often._next_ok.items() <= pol_never._next_ok.items()
    assert len(pol_often._next_ok) <= pol_often._prune_at
    assert len(pol_often._next_ok) < len(pol_never._next_ok)
