"""Issue 13: a streaming run's big jobs make their task objects only when something reads a
task (``sim_bridge._waiting_tasks``).

Oracles:

- :class:`WaitingTasks` against a plain dict of the same tasks under any sequence of what the
  engine does to a job's waiting tasks (hypothesis): the same keys, tasks and order;
- whole runs with every job made lazily (``LAZY_MIN_TASKS = 1``) against the same runs with
  the switch off: the same trace and job table, bit for bit, for every speculation policy and
  both placements that read a job's waiting tasks in different ways;
- the tasks a run made are the ones the arrival would have made, field for field.
"""

from __future__ import annotations

from array import array

import pytest
from _crowded import assert_same_tables, crowded_workload, run_tables
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
import sim_bridge._waiting_tasks as waiting
from sim_bridge._jobs import Job, Task
from sim_bridge._states import BLOCKED, WAITING
from sim_bridge._task_list import TaskList, set_task_lists, task_works
from sim_bridge._waiting_tasks import UNBUILT, TaskMaker, WaitingTasks


def _job(n: int, n0: int) -> Job:
    job = Job()
    job.job_id, job.uid, job.n_tasks, job.stage, job.finish_time = "j", 3, n, 0, None
    job.spec = type("Spec", (), {"phases": ("map", "reduce")})()
    job._maker = TaskMaker(1000, array("d", [float(k) + 0.5 for k in range(n)]), None)
    set_task_lists(job, [UNBUILT] * n, n0)
    job.pending = WaitingTasks(job.tasks, 0, n0)  # type: ignore[assignment]
    return job


# what the engine does: launch a waiting task (delete it), put a task back first (requeue),
# open the second stage (its tasks go last), read a task
_OPS = st.lists(
    st.tuples(st.sampled_from(["launch", "requeue", "open", "read"]), st.integers(0, 10**6)),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(n0=st.integers(0, 12), n1=st.integers(0, 8), ops=_OPS)
def test_waiting_tasks_behave_as_the_dict_of_them(n0, n1, ops):
    job = _job(n0 + n1, n0)
    lazy = job.pending
    oracle: dict[int, Task] = {k: job.tasks[k] for k in range(n0)} if n0 else {}
    # (reading every first-stage task made them: run the same ops on a second, untouched
    # job to check that reads in any order make the same tasks)
    fresh = _job(n0 + n1, n0)
    launched: list[int] = []
    opened = False
    for op, r in ops:
        if op == "launch" and oracle:
            k = list(oracle)[r % len(oracle)]
            del oracle[k], lazy[k], fresh.pending[k]
            launched.append(k)
        elif op == "requeue" and launched:
            k = launched.pop(r % len(launched))
            oracle = {k: job.tasks[k], **oracle}
            lazy.push_front(job.tasks[k])
            fresh.pending.push_front(fresh.tasks[k])  # type: ignore[attr-defined]
        elif op == "open" and not opened and n1:
            opened = True
            for j in (job, fresh):
                j.stage = 1
                j.pending.extend_run(n0, n0 + n1)  # type: ignore[attr-defined]
            oracle.update((k, job.tasks[k]) for k in range(n0, n0 + n1))
        elif op == "read" and n0 + n1:
            k = r % (n0 + n1)
            assert fresh.tasks[k].uid == job.tasks[k].uid == 1000 + k
        assert list(lazy) == list(oracle) == list(fresh.pending)
        assert list(lazy.values()) == list(oracle.values())
        assert [t.uid for t in fresh.pending.values()] == [t.uid for t in oracle.values()]
        assert len(lazy) == len(oracle) == len(fresh.pending)
        assert bool(lazy) == bool(oracle)
        for k in range(-1, n0 + n1 + 1):
            assert (k in lazy) == (k in oracle)
    assert dict(lazy) == oracle


def test_a_task_is_made_with_the_fields_the_arrival_gives_it():
    job = _job(5, 3)
    items = job.tasks._items  # type: ignore[attr-defined]
    assert all(x is UNBUILT for x in items)
    t = job.stages[1][0]
    assert (t.uid, t.index, t.stage, t.phase, t.work, t.state) == (
        1003,
        3,
        1,
        "reduce",
        3.5,
        BLOCKED,
    )
    assert items[3] is t and job.tasks[3] is t and sum(x is UNBUILT for x in items) == 4
    w = job.pending[1]
    assert (w.state, w.stage, w.phase, w._u0, w.attempts, w.n_live) == (
        WAITING,
        0,
        "map",
        0.0,
        (),
        0,
    )


def test_changing_the_waiting_tasks_while_iterating_raises_as_a_dict_does():
    job = _job(4, 4)
    it = iter(job.pending.values())
    next(it)
    del job.pending[2]
    with pytest.raises(RuntimeError, match="changed size during iteration"):
        next(it)
    with pytest.raises(KeyError):
        del job.pending[2]


POLICIES = ["late", "mantri", "dolly", "pi_kill", "hopper", "sca", "shed", "ese", "spark", "none"]


def _tables(tmp_path, policy: str, placement: str, lazy: bool, made: list) -> dict:
    real = waiting.TaskMaker.make

    def make(self, job, k, n0):
        made.append(k)
        return real(self, job, k, n0)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(waiting, "LAZY_TASKS", lazy)
        mp.setattr(waiting, "LAZY_MIN_TASKS", 1)
        mp.setattr(waiting.TaskMaker, "make", make)
        res = sim_bridge.simulate(
            crowded_workload(4, 14),
            policy,
            placement,
            nodes=5,
            slots=3,
            seed=11,
            progress=False,
            trace_sink=tmp_path / f"{policy}-{placement}-{lazy}.parquet",
        )
    return run_tables(res)


@pytest.mark.parametrize("placement", ["fair", "fifo"])
@pytest.mark.parametrize("policy", POLICIES)
def test_the_trace_does_not_depend_on_making_tasks_when_read(tmp_path, policy, placement):
    made: list = []
    on = _tables(tmp_path, policy, placement, True, made)
    off = _tables(tmp_path, policy, placement, False, [])
    assert_same_tables(on["tasks"], on.get("jobs"), off["tasks"], off.get("jobs"))
    assert made, "no task was made when read: the lazy path did not run"


@pytest.mark.parametrize("policy", ["none", "sca", "sda", "ese", "dolly", "shed"])
def test_a_queue_of_waiting_tasks_holds_no_task_objects(tmp_path, policy):
    """On a cluster too small for a big job, its waiting tasks stay unmade until launched,
    whichever policy runs: the slot schedulers' and Shed's mean work of a job's tasks reads
    the works without making the tasks (``task_works``; until 2026-11-30 it made them all at
    the job's arrival)."""
    spec = sim_bridge.JobSpec("big", 0.0, [30.0] * 3000, [5.0] * 10, workload="SYN")
    seen: list[int] = []

    class Probe(sim_bridge.get_policy(policy).__class__):  # type: ignore[misc]
        def on_attempt_finished(self, view, attempt):
            job = attempt.task.job
            items = job.tasks._items
            seen.append(sum(1 for k in range(len(items)) if items[k] is UNBUILT))
            return super().on_attempt_finished(view, attempt)

    sim_bridge.simulate(
        sim_bridge.Workload("SYN", [spec]),
        Probe(),
        "fair",
        nodes=2,
        slots=2,
        seed=1,
        progress=False,
        trace_sink=tmp_path / "big.parquet",
    )
    # at the first finish, 4 maps were launched (made): the other 2,996 maps and the 10
    # reduces are not objects (a policy's copy takes a slot but makes no task)
    if policy == "none":
        assert seen[0] == 3010 - 4
    else:
        assert 3010 - 4 <= seen[0] < 3010
    assert seen[-1] == 0  # every task was made by the end


def _probe(cls: type, passes: list[tuple[int, int]], read: list[int]) -> type:
    """``cls`` noting, per call of a hook, the tasks read from waiting queues (``read[0]``,
    counted by the test's patch) and the launches it returned."""

    def noted(out: list) -> list:
        passes.append((read[0], sum(type(a).__name__ == "Launch" for a in out)))
        read[0] = 0
        return out

    class Probe(cls):  # type: ignore[misc, valid-type]
        def on_job_arrival(self, view, job):
            read[0] = 0
            return noted(super().on_job_arrival(view, job))

        def on_attempt_finished(self, view, attempt):
            read[0] = 0
            return noted(super().on_attempt_finished(view, attempt))

        def on_tick(self, view):
            read[0] = 0
            return noted(super().on_tick(view))

    return Probe


@pytest.mark.parametrize("policy", ["sca", "sda", "ese"])
def test_a_policys_pass_reads_the_waiting_queue_only_as_far_as_it_launches(
    tmp_path, monkeypatch, policy
):
    """The slot schedulers read a big job's waiting tasks as far as their pass launches (a
    copy of the whole queue at every pass was 81% of ESE's CPU on FB-2010's first quarter
    hour on 1,000 x 10); the run is the one passes over copies give."""
    big = sim_bridge.JobSpec("big", 0.0, [30.0] * 3000, [5.0] * 10, workload="SYN")
    small = [
        sim_bridge.JobSpec(f"s{i}", 20.0 * i, [10.0] * 3, [4.0], workload="SYN") for i in range(8)
    ]
    read = [0]
    iter_tasks = WaitingTasks._iter_tasks

    def counted(self):
        for t in iter_tasks(self):
            read[0] += 1
            yield t

    def run(tag: str) -> tuple:
        passes: list[tuple[int, int]] = []
        policy_cls = _probe(sim_bridge.get_policy(policy).__class__, passes, read)
        res = sim_bridge.simulate(
            sim_bridge.Workload("SYN", [big, *small]),
            policy_cls(),
            "fair",
            nodes=2,
            slots=2,
            seed=1,
            progress=False,
            trace_sink=tmp_path / f"{tag}.parquet",
        )
        return res, passes

    monkeypatch.setattr(WaitingTasks, "_iter_tasks", counted)
    lazy, passes = run("lazy")
    assert sum(n for _r, n in passes) > 0  # the policy's passes launched tasks
    # a pass reads at most one task past each job it launches from (a full cluster: 4
    # slots), never the big job's whole queue
    assert max(r for r, _n in passes) <= 4 + 1 + len(small)
    # passes over copies of the queues (every reader copies them first) read it whole, and
    # give the same run
    monkeypatch.setattr(
        waiting._Values, "__iter__", lambda self: iter(list(counted(self._mapping)))
    )
    copied, passes = run("copied")
    assert max(r for r, _n in passes) >= 3000 - 4
    ta, tb = run_tables(lazy), run_tables(copied)
    assert ta.keys() == tb.keys()
    for name, table in ta.items():
        assert table.equals(tb[name]), name


def test_task_works_equal_the_tasks_works_without_making_them(tmp_path, monkeypatch):
    """``task_works(job)`` gives each task's ``work`` in order, as reading every task does,
    for tasks made, not yet made and dropped as rows, and makes or builds none of them."""
    seen = {"unbuilt": 0, "dropped": 0, "checked": 0}

    class Probe(sim_bridge.get_policy("late").__class__):  # type: ignore[misc]
        def on_attempt_finished(self, view, attempt):
            job = attempt.task.job
            items = job.tasks._items
            if attempt.uid % 5 == 0 and isinstance(job.tasks, TaskList):
                kinds = [items[k] for k in range(len(job.tasks))]
                works = list(task_works(job))
                assert [items[k] for k in range(len(job.tasks))] == kinds  # none made
                assert works == [t.work for t in job.tasks]
                seen["unbuilt"] += sum(x is UNBUILT for x in kinds)
                seen["dropped"] += sum(x is None for x in kinds)
                seen["checked"] += 1
            return super().on_attempt_finished(view, attempt)

    monkeypatch.setattr(waiting, "LAZY_MIN_TASKS", 1)
    sim_bridge.simulate(
        crowded_workload(4, 14),
        Probe(),
        nodes=5,
        slots=3,
        seed=11,
        progress=False,
        trace_sink=tmp_path / "works.parquet",
    )
    assert seen["checked"] > 20 and seen["unbuilt"] > 0 and seen["dropped"] > 0
