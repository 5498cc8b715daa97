"""A streaming run drops the done tasks nobody else holds from its jobs' storage
(:mod:`sim_bridge._task_list`) and builds them again when read.

Oracles: the same simulation kept in memory (every task object stays) gives, task by task,
equal fields to the ones built again; a streamed run that keeps every task object
(``DROP_DONE`` off) writes the identical trace and job table; a task a policy holds is the
object ``job.tasks`` returns, whatever the sweeps did. Sweeps run at every event here
(``_CHECK_EVERY`` = 1), so tasks are dropped as soon as nothing holds them.
"""

from __future__ import annotations

from array import array

import pytest
from _crowded import mapreduce_workload
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge._engine
import sim_bridge._task_list
from sim_bridge import Cluster, Workload
from sim_bridge._engine import Simulator
from sim_bridge._jobs import DoneOne, Job, Task
from sim_bridge._task_list import _TRIES, DropQueue, TaskList, drop_unheld, set_task_lists
from sim_bridge._trace_sink import TraceSink
from sim_bridge.policies import get_policy
from sim_bridge.policies.base import SpeculationPolicy

TASK_FIELDS = ("uid", "index", "stage", "phase", "work", "state", "first_launch", "finish_time")
PUBLIC = ("uid", "index", "node", "launch_time", "start_fraction", "state", "end_time")


def _workload() -> Workload:
    """Jobs of 1 to ~50 tasks arriving faster than 4 x 2 slots serve them: jobs stay alive
    with done tasks while later ones run."""
    return mapreduce_workload(30, 4, gap=30.0, max_maps=50, map_mu=3.3)


def _run(policy, keep_history: bool, on_done=None, sink: bool = False):
    """Run the workload (``policy`` a name or a policy object); with ``sink``, streamed into a
    :class:`TraceSink` whose tables are returned too."""
    pol = get_policy(policy) if isinstance(policy, str) else policy
    place = get_policy("fair")
    pol.reset()
    place.reset()
    cluster = Cluster(4, 2, 3)
    trace = TraceSink(cluster, row_group_rows=64) if sink else None

    def done(job):
        if on_done is not None:
            on_done(sim, job)
        if trace is not None:
            trace.add_job(job)

    sim = Simulator(cluster, [_workload()], pol, place, seed=5, keep_history=keep_history,
                    on_job_done=None if keep_history else done)  # fmt: skip
    if trace is not None:
        trace.tenancy = sim._tenancy
    sim.run()
    return (sim, *trace.close()) if trace is not None else (sim,)


@pytest.fixture
def sweep_every_event(monkeypatch):
    monkeypatch.setattr(sim_bridge._engine, "_CHECK_EVERY", 1)


def _dropped(job) -> int:
    return sum(x is None for x in job.tasks._items)


@pytest.mark.parametrize("policy", ["late", "mantri", "none"])
def test_tasks_built_again_equal_the_ones_that_ran(sweep_every_event, policy):
    (ref,) = _run(policy, True)
    ref_tasks = {t.uid: t for j in ref.jobs for t in j.tasks}
    ref_atts = {a.uid: a for a in ref.attempts}
    seen = {"dropped_live": 0, "dropped_done": 0, "rebuilt": 0}

    def check(sim, done_job):
        seen["dropped_live"] += sum(_dropped(j) for j in sim._active.values())
        seen["dropped_done"] += _dropped(done_job)
        for k, item in enumerate(done_job.tasks._items):
            task = done_job.tasks[k]  # built again where dropped, and kept
            assert done_job.tasks._items[k] is task and done_job.tasks[k] is task
            if item is None:
                seen["rebuilt"] += 1
                assert type(task) is DoneOne and task.job is done_job
            old = ref_tasks[task.uid]
            for f in TASK_FIELDS:
                assert getattr(task, f) == getattr(old, f), (task, f)
                assert type(getattr(task, f)) is type(getattr(old, f)), (task, f)
            assert task.live == {} and task.task_id == old.task_id
            for a in task.attempts:
                assert a.task is task
                for f in PUBLIC:
                    assert getattr(a, f) == getattr(ref_atts[a.uid], f), (task, f)
        n0 = len(done_job.stages[0])
        assert list(done_job.stages[0]) + list(done_job.stages[1]) == list(done_job.tasks)
        assert all(t.stage == (k >= n0) for k, t in enumerate(done_job.tasks))

    (sim,) = _run(policy, False, check)
    assert sim.events == ref.events
    # live jobs held dropped tasks (what the drop is for), and reads built them again
    assert seen["dropped_live"] > 100 and seen["rebuilt"] > 100
    assert not sim._drop_q


@pytest.mark.parametrize("policy", ["late", "mantri", "none", "hopper"])
def test_dropping_tasks_changes_no_row(sweep_every_event, monkeypatch, policy):
    sim, jobs, tasks = _run(policy, False, sink=True)
    monkeypatch.setattr(sim_bridge._task_list, "DROP_DONE", False)
    sim0, jobs0, tasks0 = _run(policy, False, sink=True)
    assert sim.events == sim0.events and len(tasks) > 500
    assert tasks.equals(tasks0) and jobs.equals(jobs0)


class _Holder(SpeculationPolicy):
    """Keeps every third finished attempt's task, and at each tick checks that its job
    returns that very object (and kept it in its storage)."""

    name = "holder"
    interval = 7.0

    def reset(self) -> None:
        self.held: list[Task] = []
        self.checked = 0
        self.dropped_seen = 0

    def on_attempt_finished(self, view, attempt):
        if attempt.uid % 3 == 0:
            self.held.append(attempt.task)
        return []

    def on_tick(self, view):
        for t in self.held:
            job = t.job
            if not job.done:
                assert job.tasks._items[t.index] is t
                assert job.tasks[t.index] is t and job.stages[t.stage][0].job is job
                self.checked += 1
        self.dropped_seen += sum(_dropped(j) for j in view.active_jobs())
        return []


def test_a_task_someone_holds_is_never_dropped(sweep_every_event):
    pol = _Holder()
    (sim,) = _run(pol, False)
    assert pol.checked > 100 and pol.dropped_seen > 100


def _job_of_rows(n: int, n0: int) -> Job:
    job = Job()
    job.job_id, job.uid, job.n_tasks, job.finish_time = "j", 0, n, None
    job.spec = type("Spec", (), {"phases": ("map", "reduce")})()
    tasks = [Task(k, job, k, int(k >= n0), ("map", "reduce")[k >= n0], 1.0, 0.5) for k in range(n)]
    set_task_lists(job, tasks, n0)
    return job


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 12),
    frac=st.floats(0, 1),
    i=st.integers(-14, 14),
    sl=st.tuples(
        st.none() | st.integers(-14, 14),
        st.none() | st.integers(-14, 14),
        st.none() | st.integers(-3, 3).filter(bool),
    ),  # fmt: skip
)
def test_a_task_list_reads_like_a_list(n, frac, i, sl):
    n0 = int(frac * n)
    job = _job_of_rows(n, n0)
    ref = list(job.tasks._items)
    for lst, want in ((job.tasks, ref), (job.stages[0], ref[:n0]), (job.stages[1], ref[n0:])):
        assert isinstance(lst, TaskList) and len(lst) == len(want)
        assert list(lst) == want and list(reversed(lst)) == want[::-1]
        assert lst[slice(*sl)] == want[slice(*sl)]
        if -len(want) <= i < len(want):
            assert lst[i] is want[i]
        else:
            with pytest.raises(IndexError, match=f"task index {i} out of range"):
                lst[i]
        for t in want:
            assert t in lst and lst.index(t) == want.index(t)


def test_the_sweep_carries_held_tasks_then_gives_up():
    job = _job_of_rows(3, 3)
    for t in job.tasks:
        t.__class__ = DoneOne  # as shed_closed leaves a task whose one attempt finished
    held = job.tasks[2]
    queue, tries = list(job.tasks), array("B")
    del t
    for sweep in range(1, _TRIES):
        queue, tries = drop_unheld(queue, tries)
        assert queue == [held] and tries.tolist() == [sweep]
    assert job.tasks._items[:2] == [None, None] and job.tasks._items[2] is held
    queue, tries = drop_unheld(queue, tries)
    assert queue == [] and len(tries) == 0 and job.tasks._items[2] is held  # kept for good
    # a finished job's tasks leave the queue untouched (its release empties the storage)
    job2 = _job_of_rows(2, 2)
    for t in job2.tasks:
        t.__class__ = DoneOne
    del t
    job2.finish_time = 9.0
    queue, tries = drop_unheld(list(job2.tasks), array("B"))
    assert queue == [] and None not in job2.tasks._items


def test_the_drop_queue_backs_off_then_gives_up(monkeypatch):
    """A held task is tried at the first sweep after it was queued, then 1, 3, 7, ... sweeps
    later (``2 ** (n - 1)`` after its ``n``-th try), :data:`_TRIES` times in all (7 here),
    then kept for good; one let go between two tries is dropped at the next; the others at
    once."""
    from sim_bridge import _task_list

    monkeypatch.setattr(_task_list, "_TRIES", 7)

    job = _job_of_rows(3, 3)
    for t in job.tasks:
        t.__class__ = DoneOne
    held, freed = job.tasks[1], job.tasks[2]
    tried: list[int] = []
    real = _task_list.drop_unheld

    def spy(queue, tries):
        if any(t is held for t in queue):
            tried.append(q._sweeps)
        return real(queue, tries)

    monkeypatch.setattr(_task_list, "drop_unheld", spy)
    q = DropQueue()
    q.new.extend(job.tasks)
    del t
    q.sweep()  # sweep 1: task 0 goes; the two held stay queued
    assert job.tasks._items[0] is None and len(q) == 2
    for _ in range(2, 6):
        q.sweep()
    del freed  # let go after sweep 5: dropped at its next try (sweep 8)
    assert job.tasks._items[2] is not None
    for _ in range(6, 200):
        q.sweep()
    assert job.tasks._items[2] is None and job.tasks._items[1] is held  # kept for good
    want, at = [1], 1
    for n in range(1, _task_list._TRIES):
        at += 2 ** (n - 1)
        want.append(at)
    assert tried == want == [1, 2, 4, 8, 16, 32, 64]
    assert not q and len(q) == 0


def test_a_task_held_for_thousands_of_sweeps_is_still_dropped():
    """By default the queue keeps trying, with its back-off: a task let go after 5,000
    sweeps (a straggler's stale heap entry, hours of a big run) is dropped at its next try,
    the 14th (sweep 8,192)."""
    job = _job_of_rows(2, 2)
    for t in job.tasks:
        t.__class__ = DoneOne
    held = job.tasks[1]
    del t
    q = DropQueue()
    q.new.extend(job.tasks)
    for s in range(1, 8193):
        if s == 5000:
            held = None
        q.sweep()
        if s == 8191:
            assert job.tasks._items[1] is not None and len(q) == 1
    assert job.tasks._items[1] is None and not q and held is None
