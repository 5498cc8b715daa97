"""Stale heap entries of closed attempts let go of them (:mod:`sim_bridge._closed_events`):
the heaps replace objects alike and keep their order, a pass leaves no entry holding a closed
attempt, and streamed runs give the traces of runs that keep them, bit for bit."""

from __future__ import annotations

import pandas as pd
import pytest
from _crowded import crowded_workload
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
import sim_bridge._engine
from sim_bridge import _closed_events
from sim_bridge._closed_events import CLOSED, release_closed
from sim_bridge._event_heap import HEAP_IN_C, PyEventHeap
from sim_bridge._jobs import Attempt
from sim_bridge._states import (
    A_FINISHED,
    A_KILLED,
    A_RUNNING,
    EV_ARRIVAL,
    EV_CHECK,
    EV_FINISH,
    EV_SOLVE,
    EV_TICK,
    EV_WAKE,
)

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.integers(0, 20), st.integers(0, 5), st.integers(0, 9)),
        st.tuples(st.just("pop")),
        st.tuples(st.just("replace"), st.integers(0, 9)),
    ),
    max_size=80,
)


@pytest.mark.skipif(not HEAP_IN_C, reason="the compiled heap is not built")
@settings(max_examples=200, deadline=None)
@given(ops=_OPS)
def test_the_compiled_heap_replaces_objects_as_its_reference(ops):
    from sim_bridge._heap_core import EventHeap

    heaps = (EventHeap(), PyEventHeap())
    seq = 0
    for op in ops:
        if op[0] == "push":
            seq += 1
            for h in heaps:
                h.push(float(op[1]), seq, op[2], ("obj", op[3]))
        elif op[0] == "pop":
            got = [h.pop_next() if len(h) else None for h in heaps]
            assert got[0] == got[1]
        else:
            # replace the objects of one kind's entries (a new object each time)
            k = op[1] % 6
            counts = [
                h.replace_objects(lambda kind, obj, k=k: ("new", obj[1]) if kind == k else obj)
                for h in heaps
            ]
            assert counts[0] == counts[1] == sum(1 for e in heaps[1] if e[2] == k)
    rest = [[h.pop_next() for _ in range(len(h))] for h in heaps]
    assert rest[0] == rest[1]
    assert [e[:2] for e in rest[0]] == sorted(e[:2] for e in rest[0])


def _attempt(state: int) -> Attempt:
    a = Attempt.__new__(Attempt)
    a.state = state
    return a


def test_only_closed_attempts_own_events_get_the_stand_in():
    running, done, killed = _attempt(A_RUNNING), _attempt(A_FINISHED), _attempt(A_KILLED)
    for kind in (EV_FINISH, EV_SOLVE):
        assert release_closed(kind, running) is running
        assert release_closed(kind, done) is CLOSED
        assert release_closed(kind, killed) is CLOSED
    pair = (running, object())
    assert release_closed(EV_CHECK, pair) is pair
    assert release_closed(EV_CHECK, (killed, object())) == (CLOSED, None)
    for kind, obj in ((EV_WAKE, (killed, "tag")), (EV_TICK, None), (EV_ARRIVAL, 3)):
        assert release_closed(kind, obj) is obj
    # what the loop and _solve_deferred read of the stand-in: not running, nothing pending
    assert CLOSED.state != A_RUNNING and CLOSED._solve is None and CLOSED._ckpt is None


@pytest.mark.parametrize("policy", ["late", "mantri", "none"])
def test_streamed_runs_give_the_traces_of_runs_that_keep_them(tmp_path, monkeypatch, policy):
    w = crowded_workload(3, 40)
    monkeypatch.setattr(sim_bridge._engine, "_CHECK_EVERY", 16)  # upkeeps: often
    monkeypatch.setattr(_closed_events, "RELEASE_EVERY", 1)
    passes: list[int] = []
    real = _closed_events.release_closed

    def watched(kind, obj):
        new = real(kind, obj)
        # after the pass, no attempt's own event holds a closed attempt
        held = new[0] if kind == EV_CHECK and type(new) is tuple else new
        if kind in (EV_FINISH, EV_SOLVE, EV_CHECK) and isinstance(held, Attempt):
            assert held.state == A_RUNNING
        passes.append(new is not obj)
        return new

    monkeypatch.setattr(_closed_events, "release_closed", watched)
    out = {}
    for on in (False, True):
        monkeypatch.setattr(_closed_events, "RELEASE_CLOSED", on)
        passes.clear()
        path = tmp_path / f"{on}.parquet"
        # a bound, so a pass that lost a live event stops (incomplete) instead of ticking on
        bound = 2 * out[False][2] if on else None
        res = sim_bridge.simulate(w, policy, "fair", nodes=8, slots=6, seed=1, progress=False,
                                  engine="python", trace_sink=path, max_events=bound)  # fmt: skip
        assert res.summary["complete"], res.summary.get("stop_reason")
        out[on] = (pd.read_parquet(path), res.jobs, res.summary["events"])
        if on:
            assert len(passes) > 1_000  # entries looked at
            if policy != "none":
                assert sum(passes) > 10  # killed copies' and originals' events let go
        else:
            assert not passes
    pd.testing.assert_frame_equal(out[True][0], out[False][0], check_exact=True)
    pd.testing.assert_frame_equal(out[True][1], out[False][1], check_exact=True)
    assert out[True][2] == out[False][2]
