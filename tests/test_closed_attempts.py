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
import sim_bridge._engine
import sim_bridge._sim_lifecycle as lifecycle
from sim_bridge import Cluster
from sim_bridge._attempt_columns import ATTEMPT_COLUMNS, attempt_columns, job_attempt_columns
from sim_bridge._closed_attempts import ClosedAttempts, DoneMany, pack_closed
from sim_bridge._engine import Simulator
from sim_bridge._jobs import Attempt, Job, Task
from sim_bridge._states import A_FINISHED, A_KILLED, DONE
from sim_bridge.policies import get_policy

PUBLIC = ("uid", "index", "node", "launch_time", "start_fraction", "state", "end_time")


TASK_FIELDS = ("uid", "index", "stage", "phase", "work", "state", "first_launch", "finish_time")


def _run(policy: str, keep_history: bool, check_job=None, box=None) -> Simulator:
    """A crowded run streamed (``keep_history=False``) as ``simulate(trace_sink=...)``
    streams a big cluster: a killed attempt's work done is booked at its close."""
    pol, place = get_policy(policy), get_policy("fair")
    pol.reset()
    place.reset()
    on_done = None if check_job is None else (lambda job: check_job(sim, job))
    sim = Simulator(Cluster(8, 6, 3, keep_paths=True), [crowded_workload(3, 40)], pol, place,
                    seed=5, keep_history=keep_history, on_job_done=on_done)  # fmt: skip
    sim._hold_live = True
    if box is not None:
        box["sim"] = sim
    sim.run()
    return sim


@pytest.mark.parametrize("policy", ["late", "mantri", "sda"])
def test_packed_tasks_read_as_the_objects_did(policy, monkeypatch):
    """Each task packed, against its own objects at that moment (every public field, the
    launch record's offset, the progress read); at each job's end, every done task against
    the same run kept in memory (its fields), and the trace's row reader against its object
    reader. Packed tasks nobody held were dropped and are built again when read."""
    ref = _run(policy, True)
    ref_tasks = {(t.job.uid, t.index): t for j in ref.jobs for t in j.tasks}
    real = closed.pack_closed
    packed: list[tuple[int, ...]] = []  # the attempts' states of each task packed
    seen = {"jobs": 0, "with_packed": 0, "dropped": 0}

    def watched(task):
        before = list(task.attempts)
        view = box["sim"].view
        want = [([getattr(a, f) for f in PUBLIC], a._rec, view.progress(a)) for a in before]
        if not real(task):
            return False
        got = task.attempts
        assert type(task) is DoneMany and type(got) is ClosedAttempts
        assert len(got) == len(before) >= 2
        for i, (a, (fields, rec, prog)) in enumerate(zip(got, want, strict=True)):
            assert type(a) is Attempt and a.task is task and a is not before[i]
            assert [getattr(a, f) for f in PUBLIC] == fields
            assert a._rec == rec and view.progress(a) == prog
        packed.append(tuple(a.state for a in before))
        return True

    def check_job(sim, job):
        for live in [*sim._active.values(), job]:  # dropped packed tasks: None in the storage
            one = live._one  # and minus their count of attempts in their row
            if one is not None:
                items = live.tasks._items
                seen["dropped"] += sum(
                    x is None and one[4 * k + 1] < 0 for k, x in enumerate(items)
                )
        cols, offsets = job_attempt_columns(job)
        atts = [a for t in job.tasks for a in t.attempts]  # the packed ones rebuilt
        want = attempt_columns(atts)
        for k in ATTEMPT_COLUMNS:
            np.testing.assert_array_equal(cols[k], want[k], err_msg=k)
        np.testing.assert_array_equal(offsets, [a._rec for a in atts])
        for task in job.tasks:
            old = ref_tasks[(job.uid, task.index)]
            for f in TASK_FIELDS:
                assert getattr(task, f) == getattr(old, f), (task, f)
                assert type(getattr(task, f)) is type(getattr(old, f)), (task, f)
            assert [a.uid for a in task.attempts] == [a.uid for a in old.attempts]
        seen["jobs"] += 1
        seen["with_packed"] += any(type(t) is DoneMany for t in job.tasks)

    monkeypatch.setattr(lifecycle, "pack_closed", watched)
    monkeypatch.setattr(sim_bridge._engine, "_CHECK_EVERY", 16)  # sweeps of the drop queue
    box: dict = {}
    sim = _run(policy, False, check_job, box)
    assert sim.events == ref.events
    assert seen["jobs"] == 40 and seen["with_packed"] > 3 and len(packed) > 15
    assert seen["dropped"] > 0  # and read again above: built from the rows
    assert any(A_KILLED in k for k in packed)  # copies killed once their task was done


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
    task.attempts, task.state, task.first_launch = [a0, a1], DONE, 2.0
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


def test_a_dropped_packed_task_is_built_again_from_its_rows():
    from array import array

    from sim_bridge._task_list import drop_unheld, set_task_lists

    task = _task_of_two(kill_booked=True)
    job = task.job
    job.spec = type("Spec", (), {"phases": ("map", "reduce")})()
    job.workload, job.submit_time = "SYN", 0.0
    set_task_lists(job, [task], 1)
    task.finish_time = 8.0
    assert pack_closed(task) and type(task) is DoneMany
    fields = [(f, getattr(task, f)) for f in TASK_FIELDS]
    atts = [[getattr(a, f) for f in PUBLIC] for a in task.attempts]
    del task
    left, _ = drop_unheld(list(job.tasks), array("B"))
    assert left == [] and job.tasks._items == [None]
    again = job.tasks[0]  # built from the rows, and kept
    assert type(again) is DoneMany and job.tasks._items == [again]
    assert [(f, getattr(again, f)) for f in TASK_FIELDS] == fields
    assert [[getattr(a, f) for f in PUBLIC] for a in again.attempts] == atts
    cols, offsets = job_attempt_columns(job)
    assert cols["attempt"].tolist() == [0, 1] and offsets.tolist() == [0, 4]
