"""The compiled co-tenants' re-solve rewrites a tenant's work done and pending solve in place.

``sim_bridge._retenant_core.retenant`` sets each re-solved tenant's ``_seg_done`` (a float)
and ``_solve`` (a tuple ``(seq, t0, work)``); when the attempt's slot holds the only
reference to the old object, it rewrites that object instead of allocating a new one
(``set_in_place``). The oracles:

* the same runs with the rewrite off give equal tables, in memory and streamed, on nodes of
  many slots (every departure re-solves dozens of co-tenants), with and without speculation;
* the rewrite happens (some tenant keeps its tuple's identity with it on, none with it off),
  and never to an object something else holds: a tuple or float held outside the attempt
  keeps its values (a mutant without the reference-count test fails here).
"""

from __future__ import annotations

import pytest
from _crowded import assert_same_tables, crowded_workload, simulate_tables

import sim_bridge
import sim_bridge.world._attempts as attempts_mod

core = pytest.importorskip("sim_bridge._retenant_core")

WORLDS = [
    pytest.param(crowded_workload(5, 14), dict(nodes=1, slots=176, policy="none"), id="crowd-176"),
    pytest.param(crowded_workload(7, 12), dict(nodes=2, slots=88, policy="late"), id="crowd-late"),
    pytest.param(
        crowded_workload(8, 12), dict(nodes=2, slots=64, policy="mantri"), id="crowd-mantri"
    ),
    pytest.param("SYN", dict(hours=0.05, nodes=6, slots=8, policy="late"), id="syn-late"),
    pytest.param(
        "SYN",
        dict(hours=0.05, nodes=6, slots=12, bad_node_share=0.3, record_truth=True, seed=4),
        id="bad-nodes-truth",
    ),
]


@pytest.fixture
def in_place():
    """A setter of the rewrite for one test, set back as it was afterwards."""
    was = core.set_in_place(True)
    yield core.set_in_place
    core.set_in_place(was)


def test_set_in_place_returns_the_previous_setting(in_place):
    assert in_place(False) is True
    assert in_place(True) is False


@pytest.mark.parametrize("streamed", [False, True], ids=["memory", "streamed"])
@pytest.mark.parametrize(("workload", "kw"), WORLDS)
def test_runs_with_and_without_the_rewrite_are_equal(tmp_path, in_place, workload, kw, streamed):
    tasks, jobs = simulate_tables(workload, kw, tmp_path / "a.parquet" if streamed else None)
    in_place(False)
    tasks0, jobs0 = simulate_tables(workload, kw, tmp_path / "b.parquet" if streamed else None)
    if streamed:
        assert jobs is None and jobs0 is None
        jobs = jobs0 = tasks.iloc[:0]
    assert_same_tables(tasks, jobs, tasks0, jobs0)


def _watch(monkeypatch, hold: bool) -> dict:
    """Wrap the re-solve: count the tenants whose ``_solve`` tuple is the same object after
    it as before; with ``hold``, keep a reference to each old tuple and ``_seg_done`` float
    (with their values: the tuple's items, the float's ``hex``), and check after the call
    that they kept their values."""
    seen = {"kept": 0, "pending": 0, "held": 0}
    real = attempts_mod.AttemptPhysics._retenant

    def watched(self, atts, now, dems):
        before = [id(a._solve) if a._solve is not None else None for a in atts]
        held = []
        if hold:
            for a in atts:
                if a._solve is not None:
                    held.append((a._solve, tuple(a._solve)))
                if type(a._seg_done) is float:
                    held.append((a._seg_done, float.hex(a._seg_done)))
        real(self, atts, now, dems)
        for a, b in zip(atts, before, strict=True):
            if b is not None and a._solve is not None:
                seen["pending"] += 1
                seen["kept"] += id(a._solve) == b
        for obj, values in held:
            if type(obj) is tuple:
                assert tuple(obj) == values  # a held tuple was not rewritten
            else:
                assert float.hex(obj) == values  # nor a held float
            seen["held"] += 1

    monkeypatch.setattr(attempts_mod.AttemptPhysics, "_retenant", watched)
    return seen


@pytest.mark.parametrize("on", [True, False], ids=["on", "off"])
def test_the_rewrite_happens_only_to_what_nothing_else_holds(monkeypatch, in_place, on):
    in_place(on)
    seen = _watch(monkeypatch, hold=False)
    sim_bridge.simulate(crowded_workload(5, 14), "none", nodes=1, slots=176, progress=False)
    assert seen["pending"] > 100
    if on:
        assert seen["kept"] > 0  # rewritten in place: the same tuple
    else:
        assert seen["kept"] == 0  # a new tuple each time


def test_objects_held_elsewhere_keep_their_values(monkeypatch, in_place):
    seen = _watch(monkeypatch, hold=True)
    r = sim_bridge.simulate(crowded_workload(5, 14), "none", nodes=1, slots=176, progress=False)
    assert seen["held"] > 100 and seen["kept"] == 0  # held: never rewritten
    monkeypatch.undo()
    in_place(True)
    r0 = sim_bridge.simulate(crowded_workload(5, 14), "none", nodes=1, slots=176, progress=False)
    assert_same_tables(r.tasks, r.jobs, r0.tasks, r0.jobs)
