"""The big-cluster shortcuts of the general loop change nothing: oracles, not pasted numbers.

* ``SimView.progress_many`` reads an attempt under co-located demand inline when its last
  read lies in its current step; the oracle is the obvious scan (every attempt through the
  engine's ``_work_done``), and whole simulations with either must give equal tables.
* LATE's slow-node set is recomputed only after a finished attempt; the oracle recomputes it
  at every scan.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _crowded import crowded_workload, run_tables

import sim_bridge
from sim_bridge import SimView, Workload
from sim_bridge._states import A_RUNNING
from sim_bridge.policies import LATE, Mantri
from sim_bridge.policies import _speculation as speculation
from sim_bridge.world._attempts import AttemptPhysics


def _reference_progress_many(self: SimView, attempts) -> np.ndarray:
    """Every attempt the slow, obvious way: the engine's own progress arithmetic."""
    sim = self._sim
    now = sim.now
    out = []
    for a in attempts:
        if a.state != A_RUNNING:
            out.append(self.progress(a))
            continue
        sf = a.start_fraction
        if a._work <= 0.0:
            span = a._end - a.launch_time
            frac = 1.0 if span <= 0 else (now - a.launch_time) / span
        else:
            frac = sim._work_done(a, now) / a._work
        out.append(sf + (1.0 - sf) * min(max(frac, 0.0), 1.0))
    return np.array(out, dtype=float)


def _crowded(seed: int) -> Workload:
    return crowded_workload(seed, n_jobs=30)


def _run(policy, seed: int, tmp_path, stream: bool):
    kw = dict(nodes=5, slots=8, seed=seed, progress=False, engine="python")
    if stream:
        sink = tmp_path / f"{policy.name}_{seed}_{len(list(tmp_path.iterdir()))}.parquet"
        kw["trace_sink"] = sink
    return sim_bridge.simulate(_crowded(seed), policy, **kw)


def _tables(res) -> dict[str, pd.DataFrame]:
    return run_tables(res)


@pytest.mark.parametrize(
    ("make", "seed", "stream"),
    [
        (LATE, 0, False),
        (lambda: LATE(interval=2.0, min_elapsed=0.0), 1, True),
        (Mantri, 2, False),
    ],
)
def test_inline_progress_reads_give_the_same_run(make, seed, stream, tmp_path, monkeypatch):
    calls = {"n": 0}
    work_done = AttemptPhysics._work_done

    def counted(self, att, t):
        calls["n"] += 1
        return work_done(self, att, t)

    monkeypatch.setattr(AttemptPhysics, "_work_done", counted)
    fast = _run(make(), seed, tmp_path, stream)
    n_fast = calls["n"]
    calls["n"] = 0
    monkeypatch.setattr(SimView, "progress_many", _reference_progress_many)
    # LATE and Mantri read through it too
    monkeypatch.setattr(speculation, "LATE_SCAN_IN_C", False)
    monkeypatch.setattr(speculation, "MANTRI_SCAN_IN_C", False)
    slow = _run(make(), seed, tmp_path, stream)
    n_slow = calls["n"]
    # the shortcut was taken (fewer engine reads) on a run that really speculated
    assert n_fast < n_slow
    assert slow.summary["attempts"] > slow.summary["tasks"]
    want, got = _tables(slow), _tables(fast)
    assert want.keys() == got.keys() and len(want["tasks"]) == slow.summary["attempts"]
    for name, table in want.items():
        assert table.equals(got[name]), name


class _CheckedSlowNodes(LATE):
    """LATE that recomputes its slow-node set at every scan and checks the cached one."""

    name = "_checked_slow_nodes"

    def reset(self) -> None:
        super().reset()
        self.checked_ = 0

    def _slow_nodes(self):
        cached = super()._slow_nodes()
        fresh = self._slow_nodes_now()
        assert (cached is None) == (fresh is None)
        if fresh is not None:
            assert np.array_equal(cached, fresh)
            self.checked_ += 1
        return cached


def test_late_slow_node_cache_equals_recomputation(tmp_path):
    pol = _CheckedSlowNodes(slow_node_threshold=0.5)
    res = _run(pol, 3, tmp_path, stream=False)
    assert pol.checked_ >= 10
    plain = _run(LATE(slow_node_threshold=0.5), 3, tmp_path, stream=False)
    assert plain.tasks.equals(res.tasks)
