"""The attempt lifecycle's compiled parts (``sim_bridge._lifecycle_core``) against their
references.

The oracles are ``AttemptLifecycle._close_py`` and ``AttemptPhysics._solve_launch_py``, the
Python close and launch physics, which the compiled ones replace where they were built: the
same runs with either must leave every attempt's fields (its private ones included: what the
compiled parts write in place) the same after each close and each launch, and give equal
tables, in memory and streamed (where a closed attempt is shed and packed into its job's rows,
a killed one's progress booked, a done task dropped), with speculation that copies and kills,
and with co-located contention on and off. Attempts of another class (the reference
``PyAttempt``) go to the reference.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from _crowded import crowded_workload

import sim_bridge
import sim_bridge._sim_lifecycle as lifecycle
from sim_bridge import Cluster
from sim_bridge._attempt_columns import ATTEMPT_COLUMNS, job_attempt_columns
from sim_bridge._engine import Simulator
from sim_bridge._jobs import Attempt, PyAttempt
from sim_bridge.policies import get_policy
from sim_bridge.world import AttemptPhysics

core = pytest.importorskip("sim_bridge._lifecycle_core")

FIELDS = [f for f in PyAttempt.__slots__ if f not in ("task", "_step_rate", "_ckpt")]


def _sim(
    monkeypatch, reference: bool, policy: str, keep_history: bool, ideal: bool = False, **kw
) -> Simulator:
    """A crowded run (jobs queue, speculation copies and kills) closed by the compiled close
    or by the reference, each attempt's fields and its task's class kept as each close left
    them (``closed``); a streamed one (``keep_history=False``) keeps each finished job's
    attempt columns (``done_jobs``)."""
    close = lifecycle.AttemptLifecycle._close_py if reference else core.close
    launch = AttemptPhysics._solve_launch_py if reference else core.solve_launch
    closed: list = []

    def watched(sim, att, state):
        close(sim, att, state)
        closed.append((att.uid, type(att.task).__name__, [getattr(att, f) for f in FIELDS]))

    def watched_launch(sim, att, *args):
        end = launch(sim, att, *args)
        closed.append((att.uid, "launch", [end, *(getattr(att, f) for f in FIELDS)]))
        return end

    with monkeypatch.context() as m:
        m.setattr(lifecycle.AttemptLifecycle, "_close", watched)
        m.setattr(AttemptPhysics, "_solve_launch", watched_launch)
        pol, place = get_policy(policy), get_policy("fair")
        pol.reset()
        place.reset()
        done: list = []

        def on_done(job):
            cols, offsets = job_attempt_columns(job)
            done.append((job.uid, {k: cols[k].tolist() for k in ATTEMPT_COLUMNS}, offsets))

        sim = Simulator(
            Cluster(8, 6, 3, keep_paths=True, ideal=ideal), [crowded_workload(3, 40)], pol, place,
            seed=5, keep_history=keep_history, on_job_done=None if keep_history else on_done,
            **kw,
        )  # fmt: skip
        sim._hold_live = True  # (a killed attempt's progress booked at its close)
        sim.run()
        sim.done_jobs = done  # type: ignore[attr-defined]
        sim.closed = closed  # type: ignore[attr-defined]
        return sim


def _run(monkeypatch, reference: bool, policy: str, tmp_path):
    with monkeypatch.context() as m:
        if reference:
            m.setattr(lifecycle.AttemptLifecycle, "_close", lifecycle.AttemptLifecycle._close_py)
            m.setattr(AttemptPhysics, "_solve_launch", AttemptPhysics._solve_launch_py)
        common = dict(nodes=12, slots=4, hours=0.4, seed=3, progress=False, engine="python")
        return sim_bridge.simulate(
            "SYN", policy, **common, trace_sink=tmp_path / f"{reference}.parquet"
        )


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return a == b


def _same_closes(got: list, want: list) -> None:
    assert len(got) == len(want) > 0
    for (uid, cls, fields), (uid_w, cls_w, fields_w) in zip(got, want, strict=True):
        assert (uid, cls) == (uid_w, cls_w)
        names = ["end", *FIELDS] if cls == "launch" else FIELDS
        for f, a, b in zip(names, fields, fields_w, strict=True):
            assert _same(a, b), (uid, f, a, b)


def test_the_compiled_parts_replace_the_references():
    assert lifecycle.AttemptLifecycle._close is core.close
    assert lifecycle.AttemptLifecycle._close_py is not core.close
    assert AttemptPhysics._solve_launch is core.solve_launch
    assert AttemptPhysics._solve_launch_py is not core.solve_launch


WORLDS = {
    "default": {},
    "no co-tenants": {"interference": 0.0},
    "no noise": {"noise": False},
    "ideal nodes": {"ideal": True},
}


@pytest.mark.parametrize("policy", ["late", "mantri", "none"])
@pytest.mark.parametrize("world", list(WORLDS))
def test_in_memory_every_attempt_is_closed_as_the_reference_closes_it(monkeypatch, policy, world):
    kw = WORLDS[world]
    got = _sim(monkeypatch, False, policy, True, **kw)
    want = _sim(monkeypatch, True, policy, True, **kw)
    assert got.events == want.events
    _same_closes(got.closed, want.closed)
    assert len(got.attempts) == len(want.attempts) > 0
    assert any(a.index for a in got.attempts) or policy == "none"
    for a, b in zip(got.attempts, want.attempts, strict=True):
        assert type(a) is Attempt
        for f in FIELDS:
            assert _same(getattr(a, f), getattr(b, f)), (a, f, getattr(a, f), getattr(b, f))
    assert got._load == want._load and got._load_t == want._load_t
    assert got._free == want._free and got._n_free == want._n_free


@pytest.mark.parametrize("policy", ["late", "mantri", "sda"])
def test_a_streamed_run_sheds_and_packs_as_the_reference(monkeypatch, policy):
    got = _sim(monkeypatch, False, policy, False)
    want = _sim(monkeypatch, True, policy, False)
    assert got.events == want.events
    _same_closes(got.closed, want.closed)
    assert any(cls != "Task" for _, cls, _ in got.closed)  # tasks shed into rows
    assert len(got.done_jobs) == len(want.done_jobs) > 0
    for (uid, cols, offsets), (uid_w, cols_w, offsets_w) in zip(
        got.done_jobs, want.done_jobs, strict=True
    ):
        assert uid == uid_w
        np.testing.assert_array_equal(offsets, offsets_w)
        for k in ATTEMPT_COLUMNS:
            np.testing.assert_array_equal(cols[k], cols_w[k], err_msg=k)


@pytest.mark.parametrize("policy", ["late", "sda"])
def test_streamed_runs_give_the_references_trace(monkeypatch, tmp_path, policy):
    got = _run(monkeypatch, False, policy, tmp_path)
    want = _run(monkeypatch, True, policy, tmp_path)
    a = pd.read_parquet(tmp_path / "False.parquet")
    b = pd.read_parquet(tmp_path / "True.parquet")
    assert len(a) > 0 and a.equals(b)
    assert got.jobs.equals(want.jobs)
    assert got.summary["events"] == want.summary["events"]


def test_an_attempt_of_another_class_goes_to_the_reference(monkeypatch):
    seen = []

    def reference(sim, att, state):
        seen.append((type(att), state))

    core.set_reference(reference, lifecycle)
    try:
        att = PyAttempt(0, None, 0, 0, 0.0, 0.0)
        core.close(object(), att, 2)
    finally:
        core.set_reference(lifecycle.AttemptLifecycle._close_py, lifecycle)
    assert seen == [(PyAttempt, 2)]
