"""The engine's compiled event heap against its reference (``heapq`` on tuples): the same
pops in the same order under any interleaving of pushes and pops, and a run's events and
trace the same with either."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge import _event_heap
from sim_bridge._event_heap import PyEventHeap, new_event_heap

heap_core = pytest.importorskip("sim_bridge._heap_core", reason="extension not built")
EventHeap = heap_core.EventHeap

# times with many ties (a few values), so the sequence number and the kind decide orders too;
# -0.0 and 0.0 tie as floats do; an int time is stored as the float it equals
_times = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e300, -math.inf, math.inf]),
    st.floats(allow_nan=False, width=64),
    st.integers(-(2**40), 2**40),
)
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("push"), _times, st.integers(0, 6), st.integers(0, 7)),
        st.just(("pop",)),
    ),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(_ops)
def test_pops_match_heapq_on_tuples(ops):
    """Every pop returns what ``heapq`` on the tuples returns; lengths and first times agree.
    Sequence numbers are unique per push (as the engine's are), payloads are fresh objects."""
    ref, got = PyEventHeap(), EventHeap()
    seq = 0
    for op in ops:
        if op[0] == "push":
            _, t, dseq, kind = op
            seq += dseq  # repeats allowed when dseq is 0: then the kind, then the payload decides
            payload = (seq, kind, t)  # ordered, like the tuples an EV_CHECK carries
            ref.push(t, seq, kind, payload)
            got.push(t, seq, kind, payload)
        elif len(ref):
            a, b = ref.pop_next(), got.pop_next()
            assert a == b and type(b[0]) is float
            assert b[3] is a[3]  # the same payload object, not a copy
        else:
            with pytest.raises(IndexError):
                got.pop_next()
        assert len(got) == len(ref) and bool(got) == bool(ref)
        if len(ref):
            assert got.next_time() == ref.next_time()
            assert got[0] == ref[0]
    assert sorted(got) == sorted(ref)  # iteration holds the same entries
    while len(ref):
        assert got.pop_next() == ref.pop_next()
    assert not got


def test_unordered_payloads_raise_as_tuples_do():
    """Two entries equal in time, sequence number and kind compare their payloads, as Python's
    tuples do: objects without an order raise TypeError there and here."""
    h = EventHeap()
    h.push(1.0, 1, 1, object())
    with pytest.raises(TypeError):
        h.push(1.0, 1, 1, object())
    same = object()
    h2 = EventHeap()
    h2.push(1.0, 1, 1, same)
    h2.push(1.0, 1, 1, same)  # identical objects are equal: no comparison, as in a tuple
    assert len(h2) == 2 and h2.pop_next()[3] is same


def test_references_are_held_and_released():
    """The heap holds a reference to each payload until it is popped or the heap goes."""
    import sys

    payload = object()
    base = sys.getrefcount(payload)
    h = EventHeap()
    for i in range(100):
        h.push(float(i), i, 1, payload)
    assert sys.getrefcount(payload) == base + 100
    for _ in range(40):
        h.pop_next()
    assert sys.getrefcount(payload) == base + 60
    del h
    assert sys.getrefcount(payload) == base


def test_empty_heap_errors_and_bad_index():
    h = EventHeap()
    with pytest.raises(IndexError, match="empty"):
        h.next_time()
    with pytest.raises(IndexError, match="empty"):
        h.pop_next()
    with pytest.raises(IndexError, match="out of range"):
        h[0]
    with pytest.raises(TypeError):
        h.push("soon", 1, 1, None)  # a time that is not a number


@pytest.mark.parametrize("policy", ["none", "late", "mantri"])
def test_a_run_gives_the_same_trace_with_either_heap(monkeypatch, policy):
    """The engine on the compiled heap and on ``heapq`` gives the same events and the same
    trace, row for row (contention on, deferred solves re-queued, stale finish events)."""
    import sim_bridge

    def run():
        r = sim_bridge.simulate(
            workload="SYN",
            policy=policy,
            hours=0.4,
            nodes=8,
            slots=4,
            seed=5,
            engine="python",
            progress=False,
        )
        return r.summary["events"], r.tasks

    monkeypatch.setattr(_event_heap, "HEAP_IN_C", True)
    assert type(new_event_heap()) is EventHeap
    ev_c, tasks_c = run()
    monkeypatch.setattr(_event_heap, "HEAP_IN_C", False)
    assert type(new_event_heap()) is PyEventHeap
    ev_py, tasks_py = run()
    assert ev_c == ev_py > 0
    assert tasks_c.equals(tasks_py)


def test_the_collector_sees_the_heaps_references():
    """A cycle through the heap (an object holding the heap that holds it, as a stopped
    simulator's heap holds its attempts) is collected: the heap is traversed by the GC."""
    import gc
    import weakref

    class Holder:
        pass

    holder = Holder()
    holder.heap = EventHeap()
    holder.heap.push(1.0, 1, 1, holder)
    gone = weakref.ref(holder)
    del holder
    gc.collect()
    assert gone() is None
