"""A big job's task storage in chunks (``sim_bridge._chunked_items``): it reads and writes
like the plain list it replaces, lets a chunk of dropped tasks go, and changes no row."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_task_list import _Holder, _job_of_rows, _run

import sim_bridge._chunked_items
import sim_bridge._engine
from sim_bridge._chunked_items import ChunkedItems

OPS = st.lists(
    st.tuples(st.sampled_from(["none", "set", "get"]), st.integers(0, 40), st.integers(0, 9)),
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 25), chunk=st.integers(1, 6), ops=OPS, start_none=st.data())
def test_chunked_items_read_and_write_like_a_list(n, chunk, ops, start_none):
    nones = start_none.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    ref: list = [None if z else f"t{k}" for k, z in enumerate(nones)]
    items = ChunkedItems(list(ref), chunk)
    for op, k, v in ops:
        if not n:
            break
        k %= n
        if op == "none":
            items[k] = ref[k] = None
        elif op == "set":
            items[k] = ref[k] = f"v{v}"
        else:
            assert items[k] == ref[k]
        # a chunk is held exactly when one of its items is not None
        want = sum(any(x is not None for x in ref[i : i + chunk]) for i in range(0, n, chunk))
        assert items.chunks_held == want
    assert len(items) == n and list(items) == ref
    assert [items[k] for k in range(n)] == ref
    for bad in (-1, n):
        with pytest.raises(IndexError, match=f"item {bad} out of range"):
            items[bad]


def test_a_bad_chunk_size_is_named():
    with pytest.raises(ValueError, match="parameter chunk must be an int >= 1, got 0"):
        ChunkedItems([1], 0)


@pytest.fixture
def small_chunks(monkeypatch):
    """Every job's storage in chunks of 4, and a drop sweep after every event."""
    monkeypatch.setattr(sim_bridge._chunked_items, "CHUNKED_MIN_TASKS", 1)
    monkeypatch.setattr(sim_bridge._chunked_items, "CHUNK", 4)
    monkeypatch.setattr(sim_bridge._engine, "_CHECK_EVERY", 1)


@pytest.mark.parametrize("policy", ["late", "mantri", "none", "hopper"])
def test_chunked_storage_changes_no_row_and_lets_chunks_go(small_chunks, monkeypatch, policy):
    seen = {"went": 0, "chunked": 0}

    def check(sim, done_job):
        for job in sim._active.values():
            items = job.tasks._items
            assert type(items) is ChunkedItems
            seen["chunked"] += 1
            seen["went"] += (len(items) + 3) // 4 - items.chunks_held

    sim, jobs, tasks = _run(policy, False, check, sink=True)
    monkeypatch.setattr(sim_bridge._chunked_items, "CHUNKED_MIN_TASKS", 10**9)
    sim0, jobs0, tasks0 = _run(policy, False, sink=True)
    assert sim.events == sim0.events and len(tasks) > 500
    assert tasks.equals(tasks0) and jobs.equals(jobs0)
    assert seen["chunked"] > 100 and seen["went"] > 50  # chunks of dropped tasks went


def test_a_task_someone_holds_is_never_dropped_from_a_chunk(small_chunks):
    pol = _Holder()
    (sim,) = _run(pol, False)
    assert pol.checked > 100 and pol.dropped_seen > 100


@pytest.mark.parametrize("n, n0", [(1, 1), (5, 5), (9, 4), (13, 6), (13, 0)])
def test_task_list_views_of_chunks_read_like_lists(small_chunks, n, n0):
    job = _job_of_rows(n, n0)
    items = job.tasks._items
    assert type(items) is ChunkedItems
    ref = list(items)
    for lst, want in ((job.tasks, ref), (job.stages[0], ref[:n0]), (job.stages[1], ref[n0:])):
        assert list(lst) == want and [lst[i] for i in range(len(want))] == want
