"""Issue 13: a job's ``running`` dict is rebuilt once deletions exceed twice what is left
(``AttemptLifecycle._close``), so a big stage's table does not stay allocated through its
tail, and a scan does not walk its dead entries.

Oracles: the same runs with the rebuild off (``COMPACT_RUNNING = False``), which must give the
same trace and job table bit for bit; the rule's invariant after every close; and the
table's size in a stage's tail, which without the rebuild stays at its peak.
"""

from __future__ import annotations

import sys

import pandas as pd
import pytest
from _crowded import crowded_workload

import sim_bridge
import sim_bridge._sim_lifecycle as lifecycle
from sim_bridge import Cluster, JobSpec, Workload
from sim_bridge._engine import Simulator
from sim_bridge.policies import get_policy


def _watch_closes(monkeypatch, seen: dict) -> None:
    """Wrap ``_close``: after each, check the rule's invariant and count the rebuilds."""
    real = lifecycle.AttemptLifecycle._close

    def watched(self, att, state):
        job = att.task.job
        before = job.running
        real(self, att, state)
        seen["closes"] += 1
        if job.running is not before:
            seen["rebuilds"] += 1
            assert list(job.running) == list(before)  # the same items, in the same order
        if lifecycle.COMPACT_RUNNING:
            assert job._rdel <= max(32, 2 * len(job.running))

    monkeypatch.setattr(lifecycle.AttemptLifecycle, "_close", watched)


@pytest.mark.parametrize("policy", ["late", "mantri", "none"])
def test_a_trace_does_not_depend_on_the_rebuild(tmp_path, monkeypatch, policy):
    """simulate(trace_sink=...) and an in-memory run, with the rebuild on and off: the same
    trace and job table, bit for bit; on, dicts were rebuilt."""
    w = crowded_workload(4, 40)
    out = {}
    for on in (True, False):
        monkeypatch.setattr(lifecycle, "COMPACT_RUNNING", on)
        seen = {"closes": 0, "rebuilds": 0}
        _watch_closes(monkeypatch, seen)
        path = tmp_path / f"{on}.parquet"
        kw = {"nodes": 8, "slots": 6, "seed": 2, "progress": False, "engine": "python"}
        streamed = sim_bridge.simulate(w, policy, "fair", trace_sink=path, **kw)
        kept = sim_bridge.simulate(w, policy, "fair", **kw)
        out[on] = (pd.read_parquet(path), streamed.jobs, kept.tasks, kept.jobs)
        assert (seen["rebuilds"] > 0) == on
        monkeypatch.undo()
    for a, b in zip(out[True], out[False], strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def _tail_sizes(monkeypatch, on: bool) -> tuple[int, int, int]:
    """One job of 600 maps on 200 slots: the peak size of its ``running`` dict, its size
    once 5 attempts are left (the stage's tail, no launch since the queue emptied), and the
    size of a fresh dict of as many items."""
    monkeypatch.setattr(lifecycle, "COMPACT_RUNNING", on)
    w = Workload("ONE", [JobSpec("big", 0.0, [100.0] * 600, [], workload="ONE")])
    sim = Simulator(Cluster(4, 50, 1), [w], get_policy("none"), get_policy("fifo"), seed=3,
                    keep_history=True)  # fmt: skip
    sizes = {"peak": 0, "tail": None}
    real = lifecycle.AttemptLifecycle._close

    def watched(self, att, state):
        real(self, att, state)
        running = att.task.job.running
        sizes["peak"] = max(sizes["peak"], sys.getsizeof(running))
        if sizes["tail"] is None and len(running) == 5:
            sizes["tail"] = (sys.getsizeof(running), sys.getsizeof(dict(running)))

    monkeypatch.setattr(lifecycle.AttemptLifecycle, "_close", watched)
    sim.run()
    monkeypatch.undo()
    assert sizes["tail"] is not None
    return sizes["peak"], *sizes["tail"]


def test_a_stage_tail_gives_its_table_back(monkeypatch):
    """With the rebuild, the tail's dict is at most four times a fresh one of its items (its
    table holds at most 2 dead entries a live one, plus 32); without, it stays at its
    peak (the case the rebuild is for)."""
    peak, tail, fresh = _tail_sizes(monkeypatch, True)
    assert tail <= 4 * max(fresh, sys.getsizeof(dict.fromkeys(range(33))))
    assert tail * 8 < peak
    peak_off, tail_off, _ = _tail_sizes(monkeypatch, False)
    assert tail_off == peak_off == peak
