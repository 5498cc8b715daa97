"""The compiled heap passes over the entries the engine's loop would pass over.

``EventHeap.pop_live`` drops stale finishes and deferred solves of closed attempts and
re-queues older deferrals' solves itself, where the loop popped each and handed it to
Python (``Simulator._loop``, ``AttemptPhysics._solve_deferred``). Oracles: the loop's own
logic written plainly over the reference heap (``PyEventHeap``), entry by entry under any
mix of entries; and whole runs with it off (``_closed_events.SKIP_STALE_IN_C``), which must
give the same tables, in memory and streamed, while the heap did handle entries.
"""

from __future__ import annotations

import math

import pytest
from _crowded import crowded_workload, simulate_tables
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge._closed_events as closed_mod
import sim_bridge._sim_setup as setup_mod
from sim_bridge._closed_events import CLOSED
from sim_bridge._event_heap import PyEventHeap
from sim_bridge._jobs import Attempt
from sim_bridge._states import A_FINISHED, A_KILLED, A_RUNNING, EV_CHECK, EV_FINISH, EV_SOLVE
from sim_bridge.world._attempts import _LOWER

heap_core = pytest.importorskip("sim_bridge._heap_core")


def _ref_pop_live(heap, before: float, limited: bool, speed: list[float]):
    """The loop's passes written plainly: what it acts on next, or None. An entry whose
    object is not an ``Attempt`` (but the closed attempts' stand-in) or holds fields of other
    types is handed back for the loop to read in Python, as it read every entry before."""
    while heap:
        if limited and before <= heap.next_time():
            return None
        t, seq, kind, obj = entry = heap.pop_next()
        if kind not in (EV_SOLVE, EV_FINISH):
            return entry
        if obj is CLOSED:
            continue  # not running, nothing pending: passed over either way
        if type(obj) is not Attempt or type(obj.state) is not int:
            return entry
        if kind == EV_FINISH:
            if type(obj._end) is not float:
                return entry
            if obj.state != A_RUNNING or obj._end != t or obj._ckpt is not None:
                continue  # a stale finish
            return entry
        pend = obj._solve
        if obj.state != A_RUNNING or pend is None:
            continue  # _solve_deferred returns
        if not (
            type(pend) is tuple
            and len(pend) == 3
            and type(pend[0]) is int
            and type(pend[1]) is float
            and type(pend[2]) is float
        ):
            return entry
        if pend[0] == seq:
            return entry  # its solve
        if type(obj.node) is not int or not 0 <= obj.node < len(speed):
            return entry
        # an older deferral: re-queued at the pending one's due (AttemptPhysics._due)
        heap.push(pend[1] + pend[2] * speed[obj.node] * _LOWER, pend[0], EV_SOLVE, obj)
    return None


def _key(entry):
    """An entry by value, its object by identity (NaN times alike)."""
    return None if entry is None else (repr(entry[0]), entry[1], entry[2], id(entry[3]))


class _Other:
    """Not the attempts' type: handed back whatever it holds."""

    state = A_KILLED
    _solve = None
    _ckpt = None
    _end = math.nan
    node = 0


_TIMES = st.one_of(st.floats(0.0, 50.0), st.sampled_from([1.0, 2.0, math.inf]))


def _attempt(draw, node_n: int, seqs: list[int]) -> Attempt:
    """An attempt in any state the loop may meet, its pending solve's ``seq`` one of its own
    entries' (``seqs``) or a fresh one: the engine's seqs are unique, but for re-queues,
    which push the same object again (heap entries never compare two objects)."""
    a = Attempt(0, None, 0, draw(st.integers(0, node_n - 1)), 0.0, 0.0)  # type: ignore[arg-type]
    a.state = draw(st.sampled_from([A_RUNNING, A_RUNNING, A_FINISHED, A_KILLED]))
    a._end = draw(st.one_of(_TIMES, st.just(math.nan), st.just(3)))  # an int: handed back
    a._ckpt = draw(st.sampled_from([None, None, "check"]))
    seq = st.sampled_from([*seqs, 1000 + len(seqs)])
    a._solve = draw(
        st.one_of(
            st.none(),
            st.tuples(seq, st.floats(0.0, 40.0), st.floats(0.0, 40.0)),
            st.tuples(seq, st.just(2), st.just(3.0)),  # not floats: handed back
        )
    )
    return a


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_pop_live_acts_as_the_loop_entry_by_entry(data):
    speed = data.draw(st.lists(st.floats(0.5, 2.0), min_size=1, max_size=4))
    n = data.draw(st.integers(1, 6))
    entries = data.draw(
        st.lists(
            st.tuples(
                _TIMES,
                st.integers(0, 60),
                st.sampled_from([EV_SOLVE, EV_SOLVE, EV_FINISH, EV_FINISH, EV_CHECK]),
                st.integers(0, n + 1),
            ),
            max_size=25,
            unique_by=lambda e: e[1],
        )
    )
    objs: list = [
        _attempt(data.draw, len(speed), [e[1] for e in entries if e[3] == i]) for i in range(n)
    ]
    objs += [CLOSED, _Other()]
    c, py = heap_core.EventHeap(), PyEventHeap()
    assert c.skip_stale(Attempt, CLOSED, speed, _LOWER, EV_SOLVE, EV_FINISH, A_RUNNING)
    for t, seq, kind, i in entries:
        c.push(t, seq, kind, objs[i])
        py.push(t, seq, kind, objs[i])
    limits = data.draw(st.lists(st.one_of(_TIMES, st.none()), min_size=1, max_size=40))
    for lim in limits:
        limited = lim is not None
        before = 0.0 if lim is None else lim
        got = c.pop_live(before, limited)
        want = _ref_pop_live(py, before, limited, speed)
        assert _key(got) == _key(want)
        assert len(c) == len(py)
    assert sorted(map(_key, c)) == sorted(map(_key, py))


def test_without_skip_stale_pop_live_is_pop_next():
    h = heap_core.EventHeap()
    a = Attempt(0, None, 0, 0, 0.0, 0.0)  # type: ignore[arg-type]
    a.state = A_KILLED
    h.push(2.0, 1, EV_FINISH, a)
    h.push(1.0, 2, EV_SOLVE, CLOSED)
    assert h.pop_live(1.0, True) is None  # an arrival at 1.0 goes first
    assert h.pop_live(1.5, True) == (1.0, 2, EV_SOLVE, CLOSED)
    assert h.pop_live(0.0, False) == (2.0, 1, EV_FINISH, a)
    assert h.pop_live(0.0, False) is None and h.requeued == h.skipped == 0
    assert not h.skip_stale(object, CLOSED, [1.0], _LOWER, EV_SOLVE, EV_FINISH, 0)


WORLDS = [
    pytest.param(crowded_workload(8, 14), dict(nodes=1, slots=176, policy="late"), id="crowd-176"),
    pytest.param(crowded_workload(8, 14), dict(nodes=3, slots=20, policy="mantri"), id="mantri"),
    pytest.param("SYN", dict(hours=0.1, nodes=6, slots=8, policy="late"), id="syn-late"),
    pytest.param(
        "SYN",
        dict(hours=0.05, nodes=6, slots=12, bad_node_share=0.3, record_truth=True, seed=4),
        id="bad-nodes-truth",
    ),
]


def _run(monkeypatch, tmp_path, on: bool, workload, kw, stream: bool):
    heaps: list = []
    real = setup_mod.new_event_heap

    def recorded():
        heaps.append(real())
        return heaps[-1]

    with monkeypatch.context() as m:
        m.setattr(closed_mod, "SKIP_STALE_IN_C", on)
        m.setattr(setup_mod, "new_event_heap", recorded)
        tables = simulate_tables(workload, kw, tmp_path / f"{on}.parquet" if stream else None)
    handled = sum(getattr(h, "requeued", 0) + getattr(h, "skipped", 0) for h in heaps)
    return tables, handled


@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
@pytest.mark.parametrize(("workload", "kw"), WORLDS)
def test_runs_are_the_same_with_the_heap_passing_over_entries(
    monkeypatch, tmp_path, workload, kw, stream
):
    (on, handled), (off, none) = (
        _run(monkeypatch, tmp_path, flag, workload, kw, stream) for flag in (True, False)
    )
    assert handled > 0 and none == 0
    assert len(on[0]) > 0 and on[0].equals(off[0])
    if not stream:
        assert on[1].equals(off[1])


def test_real_alibaba_and_fb2010_are_the_same_runs(monkeypatch, tmp_path, shared_data_dir):
    for name, kw in (
        ("ALI2017", dict(hours=0.003, nodes=3, slots=176, policy="none")),
        ("FB2010", dict(hours=0.01, nodes=40, slots=10, policy="late")),
    ):
        kw = dict(kw, data_dir=shared_data_dir)
        (on, handled), (off, _) = (
            _run(monkeypatch, tmp_path, flag, name, kw, False) for flag in (True, False)
        )
        assert handled > 0, name
        assert on[0].equals(off[0]) and on[1].equals(off[1]), name
