"""A streaming run keeps a done task's one finished attempt as three integers of its job's
rows (:class:`~sim_bridge._jobs.OneFinished`), and a task never launched shares empty
containers.

Oracles: the same simulation kept in memory (``keep_history=True``: every attempt object
stays) gives, task by task, attempts equal in every public field to the rebuilt ones; the
trace sink's column reader (:func:`job_attempt_columns`) gives row for row what the object
reader (:func:`attempt_columns`) reads from the rebuilt attempts, with the same launch
records. The trace of a streamed run that keeps every attempt object (compaction turned off)
is identical to the one that compacts.
"""

from __future__ import annotations

import numpy as np
import pytest
from _crowded import mapreduce_workload

import sim_bridge._jobs
from sim_bridge import Cluster, JobSpec, Workload
from sim_bridge._attempt_columns import ATTEMPT_COLUMNS, attempt_columns, job_attempt_columns
from sim_bridge._engine import Simulator
from sim_bridge._jobs import NO_LIVE, NOT_LAUNCHED, DoneOne, OneFinished, Task
from sim_bridge._states import A_FINISHED, A_RUNNING, DONE
from sim_bridge._trace_sink import TraceSink
from sim_bridge.policies import get_policy

PUBLIC = ("uid", "index", "node", "launch_time", "start_fraction", "state", "end_time")
TASK_FIELDS = ("uid", "index", "stage", "phase", "work", "state", "first_launch", "finish_time")


def _workload(n_jobs: int = 30, seed: int = 4) -> Workload:
    """Jobs of 1 to ~50 tasks arriving faster than 4 x 2 slots serve them (jobs stay alive
    with done tasks while later ones run)."""
    return mapreduce_workload(n_jobs, seed, gap=30.0, max_maps=50, map_mu=3.3)


def _run(policy: str, keep_history: bool, check=None, **kw) -> Simulator:
    """Run the workload; ``check(sim, job)`` is called with each job done."""
    pol, place = get_policy(policy), get_policy("fair")
    pol.reset()
    place.reset()
    on_done = None if check is None else (lambda job: check(sim, job))
    sim = Simulator(Cluster(4, 2, 3), [_workload()], pol, place, seed=5,
                    keep_history=keep_history, on_job_done=on_done, **kw)  # fmt: skip
    sim.run()
    return sim


@pytest.mark.parametrize(
    "policy, kw", [("late", {}), ("mantri", {"record_truth": True}), ("none", {})]
)
def test_rebuilt_attempts_equal_the_ones_that_ran(policy, kw):
    ref = _run(policy, True, **kw)
    by_uid = {a.uid: a for a in ref.attempts}
    ref_tasks = {t.uid: t for j in ref.jobs for t in j.tasks}
    seen = {"kept": 0, "objects": 0, "live_jobs_kept": 0}

    def check(sim, done_job):
        for job in [*sim._active.values(), done_job]:
            for task in job.tasks:
                if task.state == DONE:  # its fields read from the rows: the same values
                    old_t = ref_tasks[task.uid]
                    assert type(task) is (DoneOne if type(task.attempts) is OneFinished else Task)
                    for f in TASK_FIELDS:
                        assert getattr(task, f) == getattr(old_t, f), (task, f)
                        assert type(getattr(task, f)) is type(getattr(old_t, f)), (task, f)
                atts = task.attempts
                if type(atts) is OneFinished:
                    seen["kept"] += 1
                    seen["live_jobs_kept"] += job is not done_job
                    assert task.state == DONE and len(atts) == 1
                    assert [type(a) for a in atts[:]] == [sim_bridge._jobs.Attempt]
                    with pytest.raises(IndexError, match="one attempt"):
                        atts[1]
                else:
                    seen["objects"] += len(atts)
                for i, a in enumerate(atts):
                    old = by_uid[a.uid]
                    assert a.task is task and old.task.uid == task.uid and a.index == i
                    for f in PUBLIC if a.state != A_RUNNING else PUBLIC[:5]:
                        assert getattr(a, f) == getattr(old, f), (task, f)
                    assert list(atts)[i].uid == atts[-len(atts) + i].uid == a.uid

    sim = _run(policy, False, check, **kw)
    assert sim.events == ref.events
    # most done tasks ran one attempt; jobs alive held some of them as rows
    assert seen["kept"] > 5 * max(seen["objects"], 1) or policy == "mantri"
    assert seen["kept"] > 300 and seen["live_jobs_kept"] > 50
    if policy != "none":
        assert seen["objects"] > 0  # tasks with copies keep their objects


@pytest.mark.parametrize("policy, kw", [("late", {}), ("mantri", {"record_truth": True})])
def test_the_row_reader_equals_the_object_reader(policy, kw):
    checked = {"jobs": 0, "mixed": 0}
    width = 4 + 4 + 4 * bool(kw.get("record_truth"))  # tenancy on by default

    def check(_sim, job):
        cols, offsets = job_attempt_columns(job)
        atts = [a for t in job.tasks for a in t.attempts]  # the kept ones rebuilt
        ref = attempt_columns(atts)
        for k in ATTEMPT_COLUMNS:
            assert cols[k].dtype == ref[k].dtype, k
            np.testing.assert_array_equal(cols[k], ref[k], err_msg=k)
        np.testing.assert_array_equal(offsets, [a._rec for a in atts])
        assert len(job._recs) == width * len(atts)
        assert sorted(offsets.tolist()) == list(range(0, width * len(atts), width))
        checked["jobs"] += 1
        kinds = {type(t.attempts) for t in job.tasks}
        checked["mixed"] += len(kinds) > 1

    _run(policy, False, check, **kw)
    assert checked["jobs"] == 30 and checked["mixed"] > 0


def test_a_streamed_trace_does_not_depend_on_keeping_rows(monkeypatch):
    def stream():
        cluster = Cluster(4, 2, 3)
        sink = TraceSink(cluster, row_group_rows=64)
        pol, place = get_policy("late"), get_policy("fair")
        pol.reset()
        place.reset()
        sim = Simulator(cluster, [_workload()], pol, place, seed=5, keep_history=False,
                        on_job_done=sink.add_job)  # fmt: skip
        sink.tenancy = sim._tenancy
        sim.run()
        return sim, *sink.close()

    sim, jobs, tasks = stream()
    # no row kept: each done task keeps its attempt objects (an exact-size list)
    monkeypatch.setattr(sim_bridge._jobs, "ONE_AS_ROW", False)
    sim0, jobs0, tasks0 = stream()
    assert sim.events == sim0.events and len(tasks) > 500
    assert tasks.equals(tasks0) and jobs.equals(jobs0)


def test_a_task_never_launched_shares_read_only_empties():
    job_done = []
    sim = Simulator(Cluster(1, 1, 0, ideal=True), [Workload("SYN", [JobSpec("j", 0.0, [1.0] * 3)])],
                    get_policy("none"), get_policy("fifo"), noise=False, skew=(0, 0),
                    keep_history=False, on_job_done=job_done.append)  # fmt: skip
    job = sim._arrive(0)
    for task in job.tasks:
        assert task.attempts == () and task.live is NOT_LAUNCHED and not task.live
    with pytest.raises(TypeError, match="never launched"):
        job.tasks[0].live[1] = None
    with pytest.raises(TypeError, match="done task"):
        NO_LIVE[1] = None
    from sim_bridge.policies.base import Launch

    sim._launch(Launch(job.tasks[1], node=0), sim.placement)
    t1 = job.tasks[1]
    assert type(t1.attempts) is list and len(t1.attempts) == 1
    assert type(t1.live) is dict and list(t1.live) == [t1.attempts[0].uid]
    assert job.tasks[0].live is NOT_LAUNCHED and job.tasks[2].attempts == ()
    sim.now = t1.attempts[0]._end
    sim._finish(t1.attempts[0])
    assert t1.live is NO_LIVE and type(t1.attempts) is OneFinished
    assert t1.attempts[0].state == A_FINISHED and t1.attempts[0].end_time == sim.now


def test_jobs_share_their_task_indices():
    """Every job's task ``index`` objects are the same ints (``task_indices``): past 256 an
    int is an object of its own, 32 bytes a task alive; the values are the indices."""
    specs = [JobSpec(f"j{i}", 10.0 * i, [5.0] * 300, [3.0] * 20) for i in range(2)]
    sim = Simulator(
        Cluster(2, 1, seed=0), [Workload("SYN", specs)], get_policy("none"), get_policy("fifo")
    )
    a, b = sim._arrive(0), sim._arrive(1)
    assert [t.index for t in a.tasks] == list(range(320)) == [t.index for t in b.tasks]
    assert all(x.index is y.index for x, y in zip(a.tasks, b.tasks, strict=True))
    assert list(a.pending) == list(range(300)) and a.tasks[299].index is next(reversed(b.pending))
