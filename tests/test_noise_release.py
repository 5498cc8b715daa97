"""A streaming run lets a stage's noise multipliers go once all its originals have read
them (``sim_bridge._jobs.read_noise``): the reads equal the plain list's, the list keeps
only the stages still to launch, and the traces are those of the run kept in memory."""

from __future__ import annotations

import pandas as pd
import pytest
from _crowded import mapreduce_workload
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
import sim_bridge.world._attempts as attempts_module
from sim_bridge._jobs import Job, read_noise


def _job(n_m: int, n_r: int, values: list[float]) -> Job:
    """A job as arrival leaves it (``JobArrivals._arrive``)."""
    job = Job()
    job.job_id, job.n_tasks = "j", n_m + n_r
    job._m = list(values)
    job._m_off = 0
    job._m_end = job._m_left = n_m or n_r
    return job


@settings(max_examples=200, deadline=None)
@given(
    n_m=st.integers(0, 30),
    n_r=st.integers(0, 30),
    data=st.data(),
)
def test_reads_equal_the_plain_list_and_spent_stages_go(n_m, n_r, data):
    n = n_m + n_r
    if n == 0:
        return
    values = [float(i) + 0.5 for i in range(n)]
    job = _job(n_m, n_r, values)
    # the originals launch in any order within a stage, the stages in order
    order = data.draw(st.permutations(range(n_m))) + data.draw(st.permutations(range(n_m, n)))
    for step, i in enumerate(order):
        assert read_noise(job, i) == values[i]
        launched = step + 1
        # what the list holds: the numbers of the stages not yet fully launched
        if n_m and launched < n_m:
            assert job._m == values and job._m_left == n_m - launched
        elif launched < n:
            assert job._m == values[n_m:] and job._m_off == n_m
            assert job._m_left == n - launched
    assert job._m == [] and job._m_off == n


def test_a_read_outside_the_current_stage_is_refused():
    job = _job(2, 1, [1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="task 2's noise read outside"):
        read_noise(job, 2)  # a reduce before the maps launched
    read_noise(job, 0)
    read_noise(job, 1)
    with pytest.raises(RuntimeError, match="task 0's noise read outside"):
        read_noise(job, 0)  # its numbers went with its stage


@pytest.mark.parametrize("policy", ["late", "none"])
def test_a_streamed_run_holds_only_unspent_numbers_and_equals_the_kept_run(
    tmp_path, monkeypatch, policy
):
    seen = {"reads": 0, "released": 0}

    def checked(job, index):
        # before each read: the list covers the tasks from the offset, and every task
        # before it launched its original
        assert len(job._m) == job.n_tasks - job._m_off
        assert all(len(t.attempts) > 0 for t in list(job.tasks)[: job._m_off])
        off = job._m_off
        mult = read_noise(job, index)
        seen["reads"] += 1
        seen["released"] += job._m_off != off
        return mult

    w = mapreduce_workload(40, 2, gap=40.0, max_maps=60, map_mu=3.5)
    common = dict(nodes=4, slots=2, seed=3, progress=False, engine="python")
    kept = sim_bridge.simulate(w, policy, **common)
    monkeypatch.setattr(attempts_module, "read_noise", checked)
    path = tmp_path / "t.parquet"
    streamed = sim_bridge.simulate(w, policy, trace_sink=path, row_group_rows=64, **common)
    n_tasks = len(kept.tasks.drop_duplicates(["job_id", "task_id"]))
    assert seen["reads"] == n_tasks > 200  # each original read its number once
    assert seen["released"] > 40  # the maps' numbers went before the job's end
    key = ["job_id", "task_id", "attempt"]
    got = pd.read_parquet(path).sort_values(key).reset_index(drop=True)
    want = kept.tasks.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    pd.testing.assert_frame_equal(streamed.jobs, kept.jobs, check_exact=True)
