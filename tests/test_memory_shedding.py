"""A streaming run keeps only what is still read of a closed attempt (``shed_closed``).

Oracles: the same streaming run with shedding turned off (the attempts keep their launch
records and memos) gives bit-identical trace and job tables and the same events; the trace
sink written in row groups of at most the buffer equals the one written a group a flush; two
runs under one seed write the same file. Invariants at every job handed to the sink: a closed
attempt holds no launch-record list and no rate memo, a finished one no co-tenants' demand, a
done task shares the read-only empty ``NO_LIVE``.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from _crowded import mapreduce_workload

import sim_bridge
import sim_bridge._sim_lifecycle
from sim_bridge import Cluster, Workload
from sim_bridge._engine import Simulator
from sim_bridge._jobs import NO_LIVE, PyAttempt
from sim_bridge._states import A_FINISHED, A_RUNNING
from sim_bridge._trace_sink import TraceSink
from sim_bridge.policies import get_policy


def _workload(n_jobs: int = 40, seed: int = 2) -> Workload:
    """Jobs of a few to ~60 tasks, arriving faster than 4 x 2 slots serve them."""
    return mapreduce_workload(n_jobs, seed, gap=40.0, max_maps=60, map_mu=3.5)


def _stream(policy: str, *, row_group_rows: int = 64, check=None, **kw):
    cluster = Cluster(4, 2, 3)
    sink = TraceSink(
        cluster, row_group_rows=row_group_rows, record_truth=kw.get("record_truth", False)
    )
    pol, place = get_policy(policy), get_policy("fair")
    pol.reset()
    place.reset()

    def add_job(job):
        if check is not None:
            check(sim, job)
        sink.add_job(job)

    sim = Simulator(cluster, [_workload()], pol, place, seed=3, keep_history=False,
                    on_job_done=add_job, **kw)  # fmt: skip
    sink.tenancy = sim._tenancy
    sim.run()
    jobs, tasks = sink.close()
    return sim, jobs, tasks


CASES = [
    ("late", {}),
    ("mantri", {"record_truth": True}),
    ("late", {"interference": 0.0}),
]


@pytest.mark.parametrize("policy, kw", CASES)
def test_shedding_closed_attempts_changes_no_row(monkeypatch, policy, kw):
    sim, jobs, tasks = _stream(policy, **kw)
    monkeypatch.setattr(sim_bridge._sim_lifecycle, "shed_closed", lambda att: None)
    sim0, jobs0, tasks0 = _stream(policy, **kw)
    assert sim.events == sim0.events and len(tasks) > 200
    assert tasks.equals(tasks0) and jobs.equals(jobs0)
    assert (tasks["attempt"] > 0).any()  # copies were made, and killed
    assert (tasks["outcome"] == "killed").any()


@pytest.mark.parametrize("policy, kw", CASES)
def test_closed_attempts_of_live_jobs_hold_only_what_is_read(policy, kw):
    seen = {"closed": 0, "running": 0, "sized": 0}

    def check(sim, done_job):
        for job in [*sim._active.values(), done_job]:
            offsets = []
            for task in job.tasks:
                for a in task.attempts:
                    # each attempt's launch record is in its job's flat records from its
                    # launch on: the attempt holds its offset there
                    assert type(a._rec) is int
                    offsets.append(a._rec)
                    if a.state == A_RUNNING:
                        seen["running"] += 1
                        continue
                    seen["closed"] += 1
                    assert a._step_rate is None
                    if a.state == A_FINISHED:
                        assert a._dem is None and a._prog is None and a._end == a.end_time
                        # the reference shares the float object (a compiled attempt holds
                        # no object there: its _end is a C double)
                        assert type(a) is not PyAttempt or a._end is a.end_time
                assert (task.live is NO_LIVE) == task.done
                atts = task.attempts
                if type(atts) is list and len(atts) <= 2:  # sized to its attempts
                    assert sys.getsizeof(atts) == sys.getsizeof([None] * len(atts))
                    seen["sized"] += 1
            # one record an attempt, end to end, none shared
            width = 4 + 4 * sim._tenancy + 4 * sim.record_truth
            assert sorted(offsets) == list(range(0, width * len(offsets), width))
            assert job._nspill + len(job._recs or ()) == width * len(offsets)

    _stream(policy, check=check, **kw)
    assert seen["closed"] > 100 and seen["running"] > 0 and seen["sized"] > 100


def test_no_live_is_empty_and_refuses_writes():
    assert len(NO_LIVE) == 0 and not NO_LIVE and list(NO_LIVE.values()) == []
    for write in (
        lambda: NO_LIVE.__setitem__(1, None),
        lambda: NO_LIVE.update({1: None}),
        lambda: NO_LIVE.setdefault(1, None),
    ):
        with pytest.raises(TypeError, match="done task"):
            write()
    assert len(NO_LIVE) == 0


def test_a_job_bigger_than_the_buffer_spans_row_groups_of_at_most_the_buffer(tmp_path):
    # row_group_rows=16: most jobs here have more attempts. Such a job was once written as one
    # row group (its whole Arrow table held at once: ~45 MB for FB-2009's largest job); now it
    # gets row groups of its own of at most 16 rows, while smaller jobs stay whole in a group
    # (the readers read the file whole; none needs a job in one group). The file must equal
    # the one written with one group a flush (row_group_rows=10**6): same rows, same order.
    w = _workload(12, seed=5)
    kw = dict(nodes=4, slots=2, seed=1, progress=False, engine="python")
    small, whole = tmp_path / "small.parquet", tmp_path / "whole.parquet"
    r = sim_bridge.simulate(w, "late", trace_sink=small, row_group_rows=16, **kw)
    r1 = sim_bridge.simulate(w, "late", trace_sink=whole, row_group_rows=10**6, **kw)
    a, b = pd.read_parquet(small), pd.read_parquet(whole)
    assert a.equals(b) and r.jobs.equals(r1.jobs)
    assert pq.read_schema(small).equals(pq.read_schema(whole), check_metadata=False)
    assert r.summary["straggler_share"] == r1.summary["straggler_share"]
    meta = pq.ParquetFile(small)
    assert meta.num_row_groups == r.summary["trace_row_groups"]
    sizes = a.groupby("job_id", sort=False).size()
    assert sizes.max() > 16 and (sizes <= 16).any()
    assert (a["job_id"] != a["job_id"].shift()).sum() == len(sizes)  # each job's rows together
    big_groups = 0
    for g in range(meta.num_row_groups):
        ids = meta.read_row_group(g, columns=["job_id"]).column(0).to_pandas().value_counts()
        if (sizes[ids.index] > 16).any():  # a slice of one big job
            assert len(ids) == 1 and ids.iloc[0] <= 16
            big_groups += 1
        else:  # whole small jobs
            assert (ids == sizes[ids.index]).all()
    assert big_groups == sum(-(-n // 16) for n in sizes[sizes > 16])


def test_a_streamed_run_is_deterministic_under_its_seed(tmp_path):
    w = _workload(15, seed=9)
    kw = dict(nodes=4, slots=2, seed=4, progress=False, engine="python", record_truth=True)
    paths = [tmp_path / f"t{i}.parquet" for i in range(2)]
    runs = [sim_bridge.simulate(w, "mantri", trace_sink=p, row_group_rows=32, **kw) for p in paths]
    assert pd.read_parquet(paths[0]).equals(pd.read_parquet(paths[1]))
    assert runs[0].jobs.equals(runs[1].jobs)


def test_a_day_block_drawn_in_place_equals_the_block_drawn_alone():
    # Cluster._extend draws each new block into the tail of the new window (no block-sized
    # copies); the levels must equal the blocks drawn one by one and degraded by copy
    from sim_bridge._cluster import _BLOCK
    from sim_bridge.world import PersistentLevels
    from sim_bridge.world._bad_nodes import degrade_levels

    c = Cluster(7, 1, seed=4, bad_node_share=0.5, keep_paths=True)
    assert (c.bad.resource >= 0).any()
    c.levels_at([0], [3.5 * _BLOCK * c.dt])  # four blocks
    ref = PersistentLevels(c._persist.params, 7, (4, 505), dt=c.dt)
    bad = c.bad.__class__(7, (4, 404), 0.5)  # a fresh copy: its drift state from the start
    blocks = []
    for b in range(4):
        lv = ref.block(b, _BLOCK)
        blocks.append(degrade_levels(lv, bad, bad.capacity_block(b, _BLOCK, c.dt)))
    np.testing.assert_array_equal(c._levels, np.concatenate(blocks, axis=2))
