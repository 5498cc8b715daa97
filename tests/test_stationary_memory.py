"""Issue 13: a streamed run's memory grows with the work alive, not with the jobs ever run.

The oracle is a stationary load (:func:`sim_bridge.stationary_workload`): the same job mix at
the same rate for 25 and for 60 hours (both past the first day's end, where the paths' next
block is drawn). Each run's Python objects are counted (``sys.getallocatedblocks`` after a
full collection) when its loop starts and when it has ended and written its last rows, every
job done and the engine empty. The longer run finishes some 2,600 more jobs; what it holds
at its end may differ from the shorter run's by what does not depend on them (what a dict
grew to, say) but not by anything kept a job. An object kept a job on purpose is found by
the same measure, so the measure can fail.

Until 2026-12-02 (y) the streamed run kept objects for every job it had finished: its row for
the job table (an object of seven fields, with the ints and floats they held), its stamp in the
fair order (:mod:`sim_bridge._fair_order`), and a float a row group for the summary's
task-seconds (:mod:`sim_bridge._summary_tallies`).
"""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import sim_bridge
from sim_bridge import JobSpec, Workload, _engine, stationary_workload
from sim_bridge._trace_sink import TraceSink

#: the job mix: SWIM-like small jobs, a stage of maps and a few reduces
N_MIX, RATE, NODES, SLOTS = 200, 0.02, 200, 2


def _mix(seed: int = 0) -> Workload:
    rng = np.random.default_rng(seed)
    jobs = []
    for i in range(N_MIX):
        maps = rng.lognormal(3.5, 0.8, int(rng.integers(1, 20)))
        reds = rng.lognormal(3.0, 0.5, int(rng.integers(0, 4)))
        jobs.append(JobSpec(f"j{i}", float(i), maps, reds, workload="FB2009"))
    return Workload("FB2009", jobs)


def _held(hours: float, tmp_path, monkeypatch, keep=None) -> tuple[int, int]:
    """Objects the run of ``hours`` of the stationary mix holds at its end beyond those at
    its loop's start, and the jobs it finished. ``keep``: a list that gets one object a
    finished job (the planted leak)."""
    workload = stationary_workload(_mix(), hours, rate=RATE, seed=3)
    counts: dict[str, int] = {}
    run, finish, add_job = _engine.Simulator.run, TraceSink.finish, TraceSink.add_job

    def count(key: str) -> None:
        gc.collect()
        counts[key] = sys.getallocatedblocks()

    def counted_run(self, *a, **k):
        count("start")
        return run(self, *a, **k)

    def counted_finish(self, *a, **k):
        finish(self, *a, **k)  # the last rows written: the buffer empty
        count("end")  # the loop over: every job done, the engine's state empty

    def leaky_add_job(self, job):
        keep.append(object())
        return add_job(self, job)

    monkeypatch.setattr(_engine.Simulator, "run", counted_run)
    monkeypatch.setattr(TraceSink, "finish", counted_finish)
    if keep is not None:
        monkeypatch.setattr(TraceSink, "add_job", leaky_add_job)
    out = tmp_path / f"{hours:g}h"
    out.mkdir()
    r = sim_bridge.simulate(
        workload,
        "late",
        nodes=NODES,
        slots=SLOTS,
        trace_sink=out / "tasks.parquet",
        row_group_rows=64,
        progress=False,
    )
    monkeypatch.undo()
    assert r.summary["complete"] and r.summary["jobs"] == len(workload.jobs)
    return counts["end"] - counts["start"], r.summary["jobs"]


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """One run first: what a run imports and builds once is in place before the counts."""
    mp = pytest.MonkeyPatch()
    try:
        _held(26.0, tmp_path_factory.mktemp("warm"), mp)
    finally:
        mp.undo()


def _per_job(tmp_path, monkeypatch, keep=None) -> tuple[float, int]:
    short, n_short = _held(25.0, tmp_path, monkeypatch, keep)
    long, n_long = _held(60.0, tmp_path, monkeypatch, keep)
    assert n_long > 2.2 * n_short
    return (long - short) / (n_long - n_short), n_long - n_short


def test_a_run_twice_as_long_holds_nothing_more_at_its_end(warm, tmp_path, monkeypatch):
    per_job, more = _per_job(tmp_path, monkeypatch)
    # one object kept a job gives 1.0 (the planted leak below); the two ends' own state
    # (what the engine's dicts and lists grew to, the last pass's leftovers) differs by
    # about two hundred objects either way, over some 2,600 more jobs
    assert more > 2000
    assert abs(per_job) < 0.25, f"{per_job:.3f} objects held a job finished"


def test_the_measure_finds_one_object_kept_a_job(warm, tmp_path, monkeypatch):
    keep: list = []
    per_job, _ = _per_job(tmp_path, monkeypatch, keep)
    assert 0.75 < per_job < 1.25
