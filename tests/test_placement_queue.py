"""The placement pass's data structures against slow, obvious oracles.

``TaskQueue`` (fair and FIFO orders, single holds and ``hold_while`` runs) gives the tasks a
from-scratch rescan gives: at every step the job with the fewest running-plus-launched
attempts (fair, ties by arrival) or the first job in arrival order (FIFO) among those with a
task left and fewer holds than free slots. ``HeldDeadlines`` against the rule it states;
``refuse_again`` of both pickers against asking ``acceptable`` again. And whole simulations:
the predictor placement holding a blocked job's tasks as one run (``hold_while``) gives the
tables and counts of a per-task loop written the obvious way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from sim_bridge import JobSpec, PredictorPlacement, Workload
from sim_bridge.policies import Launch
from sim_bridge.policies._placement import HeldDeadlines, TaskQueue
from sim_bridge.policies._predictor import _FirstFit, _node_index, _Ranked


@dataclass(eq=False)
class _Task:
    uid: int
    done: bool = False
    n_live: int = 0


@dataclass(eq=False)
class _Job:
    uid: int
    running: list
    pending: dict = field(default_factory=dict)


class _View:
    def __init__(self, jobs):
        self.jobs = jobs

    def waiting_jobs(self):
        return [j for j in self.jobs if j.pending]


def _slow_pass(jobs, n_free: int, order: str, hold: set) -> list[tuple[int, str]]:
    """(task uid, "launch" / "hold") in the order a from-scratch rescan takes the tasks."""
    left = {j.uid: list(j.pending.values()) for j in jobs}
    launched = dict.fromkeys(left, 0)
    held = dict.fromkeys(left, 0)
    out = []
    while n_free:
        ready = [j for j in jobs if left[j.uid] and held[j.uid] < n_free]
        if not ready:
            break
        if order == "fair":
            job = min(ready, key=lambda j: (len(j.running) + launched[j.uid], j.uid))
        else:
            job = ready[0]
        task = left[job.uid].pop(0)
        if task.uid in hold:
            held[job.uid] += 1
            out.append((task.uid, "hold"))
        else:
            launched[job.uid] += 1
            n_free -= 1
            out.append((task.uid, "launch"))
    return out


@st.composite
def _queues(draw):
    n_jobs = draw(st.integers(0, 6))
    jobs, uid = [], 0
    for j in range(n_jobs):
        k = draw(st.integers(1, 6))
        job = _Job(j, [0] * draw(st.integers(0, 3)))
        for _ in range(k):
            job.pending[uid] = _Task(uid)
            uid += 1
        jobs.append(job)
    hold = set(draw(st.lists(st.integers(0, max(uid - 1, 0)), unique=True)))
    return jobs, draw(st.integers(0, 7)), draw(st.sampled_from(["fair", "fifo"])), hold


@settings(max_examples=300, deadline=None)
@given(_queues(), st.booleans())
def test_queue_gives_the_tasks_a_rescan_gives(case, in_runs):
    """Single holds and hold_while runs both give the rescan's sequence (a run's held tasks
    are the ones ``may_wait`` accepted), and ``n_free`` ends at the slots left."""
    jobs, n_free, order, hold = case
    want = _slow_pass(jobs, n_free, order, hold)
    queue = TaskQueue(_View(jobs), order, n_free)
    got: list[tuple[int, str]] = []
    for _job, task in queue:
        if in_runs:
            asked: list[int] = []

            def may_wait(t, asked=asked):
                if t.uid in hold:
                    asked.append(t.uid)
                    return True
                return False

            n = queue.hold_while(may_wait)
            assert n == len(asked)
            got.extend((u, "hold") for u in asked)
            if n:
                continue
        elif task.uid in hold:
            queue.hold()
            got.append((task.uid, "hold"))
            continue
        queue.launched()
        got.append((task.uid, "launch"))
    assert got == want
    assert queue.n_free == n_free - sum(d == "launch" for _u, d in want)


def test_bad_order_is_named():
    with pytest.raises(ValueError, match="parameter order must be one of fifo, fair, got 'lifo'"):
        TaskQueue(_View([]), "lifo", 1)


# ----------------------------------------------------------------- deadlines
@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([0.0, 1.0, 5.0]),
    st.lists(st.tuples(st.integers(0, 4), st.floats(0.0, 3.0)), min_size=1, max_size=30),
)
def test_deadlines_follow_the_first_hold(max_wait, asks):
    """A task may wait until ``max_wait`` after the first time it was held, never with
    ``max_wait=0``; ``earliest`` is the smallest due among the pass's held tasks."""
    d = HeldDeadlines(max_wait)
    tasks = [_Task(i) for i in range(5)]
    first: dict[int, float] = {}
    now = 0.0
    for uid, step in asks:
        now += step
        d.start(now)
        ok = d.may_wait(tasks[uid])
        due = first.get(uid, now + max_wait)
        assert ok == (due > now)
        if ok:
            first.setdefault(uid, due)
            assert d[uid][1] == due and d.earliest == due
        else:
            assert d.earliest == math.inf
        if not ok and uid in first:  # launched at its deadline: forgotten
            d.pop(uid)
            first.pop(uid)


def test_deadlines_prune_only_tasks_no_longer_waiting():
    d = HeldDeadlines(10.0)
    d.start(0.0)
    tasks = [_Task(i) for i in range(100)]
    for t in tasks:
        assert d.may_wait(t)
    for t in tasks[::2]:
        t.n_live = 1  # launched meanwhile (e.g. by a speculator)
    d.prune(lambda: 1000)  # few stale entries compared with the waiting tasks: kept
    assert len(d) == 100
    d.prune(lambda: 5)  # 100 > 4 * (5 + 16): pruned
    assert list(d) == [t.uid for t in tasks[1::2]]


# ----------------------------------------------------------------- refuse_again
class _Scores:
    def __init__(self, table):
        self.table = table

    def score(self, node, running, workload):
        return self.table[(node, workload)]

    def scores(self, nodes, running, workload):
        return [self.table[(n, workload)] for n in nodes]


class _NoRunning:
    def node_running(self, node):
        return 0


@pytest.mark.parametrize("picker", [_FirstFit, _Ranked], ids=["threshold", "rank"])
@pytest.mark.parametrize("seed", range(20))
def test_refuse_again_counts_as_asking_again(picker, seed):
    rng = np.random.default_rng(seed)
    nodes = [int(n) for n in rng.permutation(12)[: rng.integers(1, 8)]]
    free = {n: int(rng.integers(1, 3)) for n in nodes}
    table = {(n, w): float(rng.choice([0.2, 0.5, 0.8])) for n in nodes for w in "ab"}
    a = picker(_Scores(table), _NoRunning(), free, 0.5)
    b = picker(_Scores(table), _NoRunning(), free, 0.5)
    for _ in range(10):
        w = str(rng.choice(["a", "b"]))
        got_a, got_b = a.acceptable(w), b.acceptable(w)
        assert got_a == got_b
        if got_a is None:
            times = int(rng.integers(0, 4))
            a.refuse_again(w, times)
            for _ in range(times):
                assert b.acceptable(w) is None
        else:
            a.take(got_a)
            b.take(got_b)
        assert (a.checks, a.refusals, a.n_free) == (b.checks, b.refusals, b.n_free)
        if not a.n_free:
            break


# ----------------------------------------------------------------- whole simulations
class _PerTask(PredictorPlacement):
    """The predictor placement's pass written the obvious way: every task asks the nodes."""

    def assign(self, view, free):
        nodes = self._free_nodes(view, free)
        queue = TaskQueue(view, self.order, nodes.n_free)
        deadlines = self._deadline
        deadlines.start(view.now)
        out: list = []
        held = forced = 0
        for job, task in queue:
            node = nodes.acceptable(job.workload)
            if node is None:
                if deadlines.may_wait(task):
                    queue.hold()
                    held += 1
                    continue
                node = nodes.least_risky(job.workload)
                forced += 1
            deadlines.pop(task.uid, None)
            out.append(Launch(task, node))
            queue.launched()
            nodes.take(node)
        self._count(len(out), held, forced, nodes)
        deadlines.prune(view.waiting_count)
        self._wake(view.now, deadlines.earliest, nodes.n_free, out)
        return out


class _NodeTable:
    """Probability a fixed random function of (node, workload): many nodes refuse."""

    feature_names = ("c_running_tasks",)
    threshold = 0.5

    def __init__(self, n_nodes: int, seed: int):
        rng = np.random.default_rng(seed)
        self.table = {w: rng.integers(0, 8, n_nodes) / 8.0 for w in ("A", "B")}

    def straggler_probability(self, node, workload, counters):
        return float(self.table[workload][_node_index(node)])


def _workloads() -> list[Workload]:
    out = []
    for k, name in enumerate(("A", "B")):
        rng = np.random.default_rng([k, 7])
        jobs, t = [], 0.0
        for i in range(25):
            t += float(rng.exponential(20.0))
            maps = rng.uniform(10, 40, int(rng.integers(3, 12)))
            jobs.append(JobSpec(f"{name}{i}", t, maps, rng.uniform(5, 20, 2), name))
        out.append(Workload(name, jobs))
    return out


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(mode="rank"),
        dict(order="fifo", max_wait=5.0),
        dict(mode="rank", order="fifo", max_wait=0.0),
        dict(threshold=0.3, refresh=0.0),
    ],
)
def test_held_runs_equal_the_per_task_loop(kw):
    sim = dict(nodes=8, slots=2, seed=3, progress=False)
    a = PredictorPlacement(_NodeTable(8, 1), **kw)
    b = _PerTask(_NodeTable(8, 1), **kw)
    ra = sim_bridge.simulate(_workloads(), "late", a, **sim)
    rb = sim_bridge.simulate(_workloads(), "late", b, **sim)
    pd.testing.assert_frame_equal(ra.tasks, rb.tasks)
    pd.testing.assert_frame_equal(ra.jobs, rb.jobs)
    assert a.stats_ == b.stats_
    # the runs do refuse many nodes: held tasks (forced launches when there is no wait)
    refused = a.stats_["forced" if kw.get("max_wait") == 0.0 else "refused"]
    assert refused > a.stats_["launches"] // 4
