"""Issue 13: a streaming run's done task with several attempts keeps them as its job's rows
(:func:`sim_bridge._closed_attempts.pack_closed`, a :class:`ClosedAttempts` view).

Oracles: the attempt objects themselves, captured at the moment they are packed (every
public field, the launch record's offset, and the progress ``SimView.progress`` reads from
them, against the same from the rebuilt ones); the trace sink's object reader
(:func:`attempt_columns`) against its row reader (:func:`job_attempt_columns`); and whole
streamed traces with the packing turned off, which keep every object.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from _crowded import crowded_workload

import sim_bridge
import sim_bridge._closed_attempts as closed
import sim_bridge._sim_lifecycle as lifecycle
from sim_bridge import Cluster
from sim_bridge._attempt_columns import ATTEMPT_COLUMNS, attempt_columns, job_attempt_columns
from sim_bridge._closed_attempts import ClosedAttempts, pack_closed
from sim_bridge._engine import Simulator
from sim_bridge._jobs import Attempt, Job, Task
from sim_bridge._states import A_FINISHED, A_KILLED, DONE
from sim_bridge.policies import get_policy

PUBLIC = ("uid", "index", "node", "launch_time", "start_fraction", "state", "end_time")


def _streamed(policy: str, check_job, packed: list, monkeypatch) -> Simulator:
    """A crowded run streamed as ``simulate(trace_sink=...)`` streams a big cluster (the
    killed attempts' work done booked at their close); each task packed is checked against
    its objects, and ``check_job(sim, job)`` runs on each job done."""
    real = closed.pack_closed

    def watched(task):
        before = list(task.attempts)
        want = [([getattr(a, f) for f in PUBLIC], a._rec, sim.view.progress(a)) for a in before]
        if not real(task):
            return False
        got = task.attempts
        assert type(got) is ClosedAttempts and len(got) == len(before) >= 2
        for i, (a, (fields, rec, prog)) in enumerate(zip(got, want, strict=True)):
            assert type(a) is Attempt and a.task is task and a is not before[i]
            assert [getattr(a, f) for f in PUBLIC] == fields
            assert a._rec == rec and sim.view.progress(a) == prog
        packed.append(task)
        return True

    monkeypatch.setattr(lifecycle, "pack_closed", watched)
    pol, place = get_policy(policy), get_policy("fair")
    pol.reset()
    place.reset()
    w = crowded_workload(3, 40)
    sim = Simulator(Cluster(8, 6, 3, keep_paths=True), [w], pol, place, seed=5,
                    keep_history=False, on_job_done=lambda job: check_job(sim, job))  # fmt: skip
    sim._hold_live = True  # as a streamed big cluster: a killed attempt's end is booked
    sim.run()
    return sim


@pytest.mark.parametrize("policy", ["late", "mantri", "sda"])
def test_packed_attempts_read_as_the_objects_did(policy, monkeypatch):
    packed: list[Task] = []
    seen = {"jobs": 0, "with_packed": 0}

    def check_job(_sim, job):
        cols, offsets = job_attempt_columns(job)
        atts = [a for t in job.tasks for a in t.attempts]  # the packed ones rebuilt
        ref = attempt_columns(atts)
        for k in ATTEMPT_COLUMNS:
            np.testing.assert_array_equal(cols[k], ref[k], err_msg=k)
        np.testing.assert_array_equal(offsets, [a._rec for a in atts])
        seen["jobs"] += 1
        seen["with_packed"] += any(type(t.attempts) is ClosedAttempts for t in job.tasks)

    sim = _streamed(policy, check_job, packed, monkeypatch)
    assert seen["jobs"] == 40 and seen["with_packed"] > 3
    assert len(packed) > 15
    kinds = {tuple(a.state for a in t.attempts) for t in packed}
    assert any(A_KILLED in k for k in kinds)  # copies killed once their task was done
    assert all(t.state == DONE and not t.live for t in packed)
    assert sim.events > 0


@pytest.mark.parametrize("policy", ["late", "mantri", "sda"])
def test_a_streamed_trace_does_not_depend_on_packing(tmp_path, monkeypatch, policy):
    """The same simulate(trace_sink=...) with the packing on and off: the same trace and job
    table, bit for bit; on, tasks were packed."""
    count = []
    real = closed.pack_closed
    monkeypatch.setattr(lifecycle, "pack_closed", lambda t: real(t) and not count.append(1))
    w = crowded_workload(3, 40)
    out = {}
    for on in (True, False):
        monkeypatch.setattr(closed, "MANY_AS_ROWS", on)
        path = tmp_path / f"{on}.parquet"
        res = sim_bridge.simulate(w, policy, "fair", nodes=8, slots=6, seed=1, progress=False,
                                  engine="python", trace_sink=path)  # fmt: skip
        out[on] = (pd.read_parquet(path), res.jobs)
        if on:
            assert len(count) > 10
    pd.testing.assert_frame_equal(out[True][0], out[False][0], check_exact=True)
    pd.testing.assert_frame_equal(out[True][1], out[False][1], check_exact=True)


def _task_of_two(kill_booked: bool) -> Task:
    job = Job()
    job.job_id, job.uid, job.n_tasks, job.finish_time = "j", 0, 1, None
    task = Task(5, job, 0, 0, "map", 10.0, 0.5)
    a0 = Attempt(7, task, 0, node=3, launch_time=2.0, start_fraction=0.0)
    a1 = Attempt(9, task, 1, node=4, launch_time=6.0, start_fraction=0.25)
    a0.state, a0.end_time, a0._work, a0._rec = A_KILLED, 8.0, 10.0, 0
    a0._prog = (8.0, 4.5) if kill_booked else (7.0, 4.0)
    a1.state, a1.end_time, a1._end, a1._work, a1._rec = A_FINISHED, 8.0, 8.0, 0.0, 4
    task.attempts, task.live, task.state = [a0, a1], {}, DONE
    return task


def test_a_killed_attempt_whose_end_was_not_booked_keeps_its_object():
    task = _task_of_two(kill_booked=False)
    objects = list(task.attempts)
    assert not pack_closed(task)
    assert task.attempts == objects and task.job._many_i is None


def test_the_view_is_a_read_only_sequence():
    task = _task_of_two(kill_booked=True)
    assert pack_closed(task)
    view = task.attempts
    assert [a.uid for a in view[::-1]] == [9, 7] and view[-2].uid == 7
    assert view[1].start_fraction == 0.25 and view[1]._prog is None
    assert view[0]._prog == (8.0, 4.5) and view[0]._end == math.inf and view[1]._end == 8.0
    with pytest.raises(IndexError, match="attempt index 2 out of range: the task ran 2"):
        view[2]
    assert repr(view).startswith("ClosedAttempts([Attempt(")
    task.job.finish_time = 9.0
    task.job.tasks = [task]
    task.job.release()  # the rows go with the job
    assert task.attempts == () and task.job._many_i is None and task.job._many_f is None
