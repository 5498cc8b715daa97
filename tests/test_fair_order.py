"""The waiting jobs' fair order, kept by the engine, against the order built at each pass.

Oracles: at every pass of real runs, the engine's order (``SimView.fair_waiting_jobs``,
``sim_bridge._fair_order.FairOrder``) is the waiting jobs sorted by ``(len(job.running),
job.uid)``; runs whose placement builds its heap from every waiting job (the view without
the order) give the same tables; and in isolation, under any sequence of jobs starting and
stopping to wait, running counts changing and passes drawing part of the order, the order is
the sorted one.
"""

from __future__ import annotations

import pytest
from _crowded import crowded_workload, simulate_tables
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from sim_bridge._fair_order import FairOrder
from sim_bridge._view import SimView

WORLDS = [
    pytest.param(crowded_workload(3, 30), dict(nodes=3, slots=8, policy="late"), id="crowd-late"),
    pytest.param(crowded_workload(3, 30), dict(nodes=2, slots=20, policy="mantri"), id="mantri"),
    pytest.param("SYN", dict(hours=0.1, nodes=4, slots=4, policy="late"), id="syn-late"),
    pytest.param("SYN", dict(hours=0.1, nodes=4, slots=4, policy="dolly"), id="syn-dolly"),
    pytest.param(
        "SYN", dict(hours=0.1, nodes=4, slots=4, policy="shed", placement="fair"), id="syn-shed"
    ),
]


def _key(job) -> tuple[int, int]:
    return (len(job.running), job.uid)


@pytest.mark.parametrize(("workload", "kw"), WORLDS)
def test_the_kept_order_is_the_sorted_order_at_every_pass(monkeypatch, workload, kw):
    real = SimView.fair_waiting_jobs
    passes = {"n": 0, "long": 0}

    def checked(self):
        got = list(real(self))
        want = sorted(self._sim._waiting.values(), key=_key)
        assert [j.uid for j in got] == [j.uid for j in want]
        assert all(a is b for a, b in zip(got, want, strict=True))
        passes["n"] += 1
        passes["long"] += len(got) > 3
        return iter(got)

    monkeypatch.setattr(SimView, "fair_waiting_jobs", checked)
    r = sim_bridge.simulate(workload, progress=False, **kw)
    assert len(r.tasks) > 0 and passes["n"] > 0
    assert passes["long"] > 0  # passes with several jobs waiting were checked


def _run(monkeypatch, tmp_path, kept: bool, workload, kw, stream: bool):
    with monkeypatch.context() as m:
        if not kept:  # the placement builds its heap from every waiting job at each pass
            m.setattr(SimView, "fair_waiting_jobs", None)
        out = tmp_path / f"{'kept' if kept else 'built'}.parquet" if stream else None
        return simulate_tables(workload, kw, out)


@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
@pytest.mark.parametrize(("workload", "kw"), WORLDS)
def test_a_run_with_the_kept_order_is_the_same_run(monkeypatch, tmp_path, workload, kw, stream):
    kept = _run(monkeypatch, tmp_path, True, workload, kw, stream)
    built = _run(monkeypatch, tmp_path, False, workload, kw, stream)
    assert len(kept[0]) > 0
    assert kept[0].equals(built[0])
    if not stream:
        assert kept[1].equals(built[1])


def test_real_alibaba_jobs_on_a_full_cluster_are_the_same_run(monkeypatch, shared_data_dir):
    kw = dict(hours=0.05, nodes=2, slots=176, policy="none", data_dir=shared_data_dir)
    kept = _run(monkeypatch, None, True, "ALI2017", kw, False)
    built = _run(monkeypatch, None, False, "ALI2017", kw, False)
    assert len(kept[0]) > 0 and kept[0].equals(built[0]) and kept[1].equals(built[1])


class _Job:
    def __init__(self, uid: int):
        self.uid = uid
        self.running: list[int] = []


class _Owner:
    def __init__(self):
        self._waiting: dict[int, _Job] = {}


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["wait", "leave", "run", "end", "pass", "quiet"]),
        st.integers(0, 11),
        st.integers(0, 12),
    ),
    max_size=120,
)


@settings(max_examples=300, deadline=None)
@given(ops=_OPS, built_after=st.integers(0, 30))
def test_under_any_changes_the_order_is_the_sorted_one(ops, built_after):
    """Jobs start and stop waiting, their running counts change (each change marked, as the
    engine marks it, except ``quiet`` changes of jobs not waiting, which the engine never
    makes), and passes draw the first ``k`` jobs of the order; the order is made at some
    point of the run (``built_after``), as the engine makes it at its first fair pass."""
    owner = _Owner()
    jobs = [_Job(i) for i in range(12)]
    order: FairOrder[_Job] | None = None
    for step, (op, i, k) in enumerate(ops):
        if order is None and step >= built_after:
            order = FairOrder(owner._waiting)
        job = jobs[i]
        if op == "wait" and i not in owner._waiting:
            owner._waiting[i] = job
            if order is not None:
                order.mark(job)
        elif op == "leave":
            owner._waiting.pop(i, None)
        elif op in ("run", "end"):
            if op == "run":
                job.running.append(0)
            elif job.running:
                job.running.pop()
            if order is not None:
                order.mark(job)
        elif op == "quiet" and i not in owner._waiting:
            job.running.append(0)  # marked or not: it does not wait
        elif op == "pass" and order is not None:
            want = sorted(owner._waiting.values(), key=_key)[:k]
            it = order.ascending(owner._waiting)
            got = [j for _, j in zip(range(k), it, strict=False)]
            assert [j.uid for j in got] == [j.uid for j in want]
    if order is not None:
        assert [j.uid for j in order.ascending(owner._waiting)] == [
            j.uid for j in sorted(owner._waiting.values(), key=_key)
        ]
        assert len(order) <= 4 * len(owner._waiting) + 64 + len(jobs) + 1


def test_a_new_pass_ends_the_last_pass_s_order():
    owner = _Owner()
    for i in range(3):
        owner._waiting[i] = _Job(i)
    order: FairOrder[_Job] = FairOrder(owner._waiting)
    first = order.ascending(owner._waiting)
    assert next(first).uid == 0
    second = order.ascending(owner._waiting)
    assert [j.uid for j in second] == [0, 1, 2]  # the first pass's job is back in its place
    with pytest.raises(RuntimeError, match="new pass"):
        next(first)
