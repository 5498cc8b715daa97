"""Issue 13: a task holds the count of its running attempts (``Task.n_live``), not a dict of
them; ``Task.live`` is built from ``Task.attempts`` when read.

Oracles: after every launch and close of whole runs (every policy that launches copies,
kills or restarts), each task of the job counts exactly the attempts of its list that run,
``live`` is the dict the engine used to keep (the running attempts by uid, in launch order),
and the job's running attempts are those of its tasks. The shared read-only empties stay:
``NOT_LAUNCHED`` before the first launch, ``NO_LIVE`` once done.
"""

from __future__ import annotations

import pytest
from _crowded import crowded_workload

import sim_bridge
import sim_bridge._sim_lifecycle as lifecycle
from sim_bridge._jobs import NO_LIVE, NOT_LAUNCHED, Job, Task
from sim_bridge._states import A_RUNNING, DONE

#: policies that launch copies or clones, kill, restart, or none of these
POLICIES = ["late", "mantri", "dolly", "pi_kill", "pi_keep", "hopper", "sca", "backup", "none"]


def _check_job(job: Job) -> int:
    """Assert the invariants for every task of ``job`` still held as an object; returns the
    running attempts counted."""
    counted = 0
    for task in list(getattr(job.tasks, "_items", job.tasks)):
        if task is None:  # a done task dropped as its job's row: no running attempt
            continue
        atts = task.attempts
        running = [a for a in atts if a.state == A_RUNNING] if isinstance(atts, list) else []
        assert task.n_live == len(running), (task, task.n_live, running)
        live = task.live
        assert list(live.items()) == [(a.uid, a) for a in running]
        if task.state == DONE:
            assert live is NO_LIVE
        elif not atts:
            assert live is NOT_LAUNCHED
        counted += len(running)
    return counted


def _watch(monkeypatch, seen: dict) -> None:
    """Count the closes; check the job's tasks after each launch, kill and finish (a finish
    closes the task's other attempts one by one: between those closes the task is done with
    attempts still running)."""
    cls = lifecycle.AttemptLifecycle
    launch, close, kill, finish = cls._launch, cls._close, cls._kill, cls._finish

    def launched(self, act, policy):
        launch(self, act, policy)
        job = act.task.job
        assert _check_job(job) == len(job.running)
        seen["launches"] += 1

    def closed(self, att, state):
        close(self, att, state)
        seen["closes"] += 1
        seen["copies"] += att.index > 0

    def ended(real):
        def wrapped(self, att):
            real(self, att)
            job = att.task.job
            assert _check_job(job) == len(job.running)
            seen["checked ends"] += 1

        return wrapped

    monkeypatch.setattr(cls, "_launch", launched)
    monkeypatch.setattr(cls, "_close", closed)
    monkeypatch.setattr(cls, "_kill", ended(kill))
    monkeypatch.setattr(cls, "_finish", ended(finish))


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("policy", POLICIES)
def test_live_is_the_running_attempts_at_every_launch_and_close(
    tmp_path, monkeypatch, policy, stream
):
    seen = {"launches": 0, "closes": 0, "copies": 0, "checked ends": 0}
    _watch(monkeypatch, seen)
    kw = {"nodes": 6, "slots": 4, "seed": 3, "progress": False}
    if stream:
        kw["trace_sink"] = tmp_path / "t.parquet"
    res = sim_bridge.simulate(crowded_workload(5, 14), policy, "fair", **kw)
    assert seen["launches"] == seen["closes"] == res.summary["attempts"]
    assert seen["checked ends"] > 0
    if policy != "shed+":  # Shed+ copies nothing on this workload
        assert (seen["copies"] > 0) == (policy != "none")  # the copies' paths ran


def test_the_empties_are_shared_and_read_only():
    job = Job()
    job.job_id, job.uid, job.finish_time = "j", 0, None
    task = Task(0, job, 0, 0, "map", 1.0, 0.5)
    assert task.live is NOT_LAUNCHED and task.n_live == 0
    with pytest.raises(TypeError, match="never launched"):
        task.live[1] = None  # type: ignore[index]
    task.state = DONE
    assert task.live is NO_LIVE
    with pytest.raises(TypeError, match="done task"):
        task.live[1] = None  # type: ignore[index]


def test_a_read_is_a_new_dict_that_does_not_reach_the_engine():
    from sim_bridge._jobs import Attempt

    job = Job()
    job.job_id, job.uid, job.finish_time = "j", 0, None
    task = Task(0, job, 0, 0, "map", 1.0, 0.5)
    a0 = Attempt(4, task, 0, node=1, launch_time=0.0, start_fraction=0.0)
    a1 = Attempt(9, task, 1, node=2, launch_time=1.0, start_fraction=0.0)
    task.attempts, task.n_live = [a0, a1], 2
    live = task.live
    assert list(live) == [4, 9] and live is not task.live
    live.clear()
    assert list(task.live) == [4, 9] and task.n_live == 2
    a0.state = 2  # killed (the engine also counts it down)
    task.n_live = 1
    assert task.live == {9: a1}
