"""A streaming run moves its live jobs' launch records past a small buffer to disk
(:mod:`sim_bridge._record_spill`) and reads them back when each job's rows are written.

Oracles: a plain list of the floats appended (the spill reads back exactly that, whatever
the chunk and the order of appends and spills); the same run with records kept in memory
(a chunk larger than any job's records) writes the identical trace, and the in-memory run
the same rows.
"""

from __future__ import annotations

import math
from array import array

import pandas as pd
import pytest
from _crowded import mapreduce_workload
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
import sim_bridge._record_spill as spill_module
from sim_bridge._jobs import Job
from sim_bridge._record_spill import RecordSpill
from sim_bridge._trace_sink import trace_status

KEY = ["job_id", "task_id", "attempt"]


@settings(max_examples=60, deadline=None)
@given(
    chunk=st.integers(1, 9),
    steps=st.lists(
        st.tuples(st.integers(0, 2), st.lists(st.floats(allow_nan=False), max_size=6)),
        max_size=25,
    ),
)
def test_the_spill_reads_back_every_float_in_order(tmp_path_factory, chunk, steps):
    where = tmp_path_factory.mktemp("spill") / ".t.spill"
    spill = RecordSpill(where, chunk=chunk)
    jobs = [Job() for _ in range(3)]
    want: list[list[float]] = [[], [], []]
    for uid, job in enumerate(jobs):
        job.uid, job._recs = uid, array("d")
    for j, values in steps:
        job = jobs[j]
        assert job._nspill + len(job._recs) == len(want[j])  # the next offset, as shed_closed
        job._recs.extend(values)
        want[j] += values
        if len(job._recs) >= spill.chunk:
            spill.put(job)
            assert len(job._recs) == 0 and job._nspill == len(want[j])
    for j, job in enumerate(jobs):
        assert spill.records(job).tolist() == want[j]
    assert spill.bytes == 8 * sum(job._nspill for job in jobs)
    assert where.exists() == (spill.files > 0)  # made at the first spill
    spill.close()
    assert not where.exists()


def _workload():
    return mapreduce_workload(40, 3, gap=60.0, max_maps=40, map_mu=4.0)


COMMON = dict(nodes=4, slots=2, seed=2, progress=False, engine="python")


@pytest.mark.parametrize("policy", ["late", "none", "mantri"])
@pytest.mark.parametrize("truth", [False, True])
def test_a_spilled_trace_is_the_trace_kept_in_memory(tmp_path, monkeypatch, policy, truth):
    w = _workload()
    mem = sim_bridge.simulate(w, policy, record_truth=truth, **COMMON)
    puts = []
    real_put = RecordSpill.put

    def put(self, job):
        puts.append(len(job._recs))
        real_put(self, job)

    monkeypatch.setattr(RecordSpill, "put", put)
    tables = {}
    for chunk in (1, 40, 10**9):  # every attempt, a few, never
        monkeypatch.setattr(spill_module, "SPILL_DOUBLES", chunk)
        path = tmp_path / f"t{chunk}.parquet"
        n_before = len(puts)
        r = sim_bridge.simulate(w, policy, record_truth=truth, trace_sink=path, **COMMON)
        tables[chunk] = pd.read_parquet(path)
        assert r.summary["complete"] is True
        assert not (tmp_path / f".t{chunk}.parquet.spill").exists()  # removed at the end
        n_puts = len(puts) - n_before
        assert (n_puts > 0) == (chunk < 10**9)
        pd.testing.assert_frame_equal(r.jobs, mem.jobs, check_exact=True)
    assert tables[1].equals(tables[10**9]) and tables[40].equals(tables[10**9])
    got = tables[1].sort_values(KEY).reset_index(drop=True)
    pd.testing.assert_frame_equal(
        got, mem.tasks.sort_values(KEY).reset_index(drop=True), check_exact=True
    )


def test_a_run_stopped_early_removes_its_spill(tmp_path, monkeypatch):
    monkeypatch.setattr(spill_module, "SPILL_DOUBLES", 8)
    w = _workload()
    full = sim_bridge.simulate(w, "late", **COMMON)
    limit = full.summary["events"] // 2
    path = tmp_path / "tasks.parquet"
    r = sim_bridge.simulate(w, "late", trace_sink=path, max_events=limit, **COMMON)
    assert r.summary["complete"] is False and 0 < r.summary["jobs"] < len(w.jobs)
    assert trace_status(path) == (False, f"max_events={limit}")
    assert not (tmp_path / ".tasks.parquet.spill").exists()
    assert len(pd.read_parquet(path)) == r.summary["attempts"]


def test_a_spill_left_by_a_killed_run_is_cleared(tmp_path):
    where = tmp_path / ".t.spill"
    where.mkdir()
    (where / "0.f64").write_bytes(b"\0" * 80)  # a killed run's job 0, 10 floats
    (where / "keep.txt").write_text("not a spill file")
    spill = RecordSpill(where, chunk=1)
    job = Job()
    job.uid, job._recs = 0, array("d", [math.pi])
    spill.put(job)
    assert spill.records(job).tolist() == [math.pi]
    assert (where / "keep.txt").exists()


def test_a_changed_spill_file_is_named(tmp_path):
    spill = RecordSpill(tmp_path / ".t.spill", chunk=1)
    job = Job()
    job.uid, job._recs = 3, array("d", [1.0, 2.0])
    spill.put(job)
    (tmp_path / ".t.spill" / "3.f64").write_bytes(b"\0" * 8)
    with pytest.raises(OSError, match=r"3\.f64: 1 floats, 2 were written"):
        spill.records(job)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "8"])
def test_a_bad_chunk_is_refused(bad):
    with pytest.raises(ValueError, match=f"parameter chunk must be an integer >= 1, got {bad!r}"):
        RecordSpill(None, chunk=bad)
