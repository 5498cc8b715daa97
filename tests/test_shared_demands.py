"""Co-tenants' demands of equal bits share one tuple
(:mod:`sim_bridge.world._shared_demands`): the compiled loop equals its reference, a shared
demand has the bits of the one it replaced, and whole runs give the traces of runs that
share nothing, bit for bit."""

from __future__ import annotations

import struct

import pandas as pd
import pytest
from _crowded import assert_same_tables, mapreduce_workload
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from sim_bridge.world import _shared_demands
from sim_bridge.world._shared_demands import share_demands, share_demands_py

_FLOATS = st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, float("nan"), float("inf"), 1e-300])
_DEMAND = st.one_of(
    st.none(),
    st.tuples(_FLOATS, _FLOATS, _FLOATS, _FLOATS),
    st.tuples(_FLOATS, _FLOATS),  # not four: left alone
    st.tuples(st.integers(0, 2), _FLOATS, _FLOATS, _FLOATS),  # not all floats: left alone
)


def _bits(dem) -> bytes | None:
    if type(dem) is tuple and all(type(x) is float for x in dem):
        return struct.pack(f"<{len(dem)}d", *dem)
    return None


def _shareable(dem) -> bool:
    return (
        type(dem) is tuple
        and len(dem) == 4
        and all(type(x) is float for x in dem)
        and all(x == x and not (x == 0.0 and struct.pack("<d", x)[-1] & 0x80) for x in dem)
    )


@settings(max_examples=300, deadline=None)
@given(
    calls=st.lists(st.lists(st.tuples(_DEMAND, st.booleans()), max_size=12), max_size=6),
    cap=st.integers(1, 6),
)
def test_shared_demands_keep_their_bits_and_equal_ones_are_one_tuple(calls, cap):
    pools: dict[str, dict] = {"c": {}, "py": {}}
    for items in calls:
        # new tuples (equal values, distinct objects, as re-solves make them), or runs of
        # one object (co-tenants given one sum)
        fresh: list = []
        for d, again in items:
            fresh.append(fresh[-1] if again and fresh else d if d is None else tuple([*d]))
        out = {}
        for name, fn in (("c", share_demands), ("py", share_demands_py)):
            got = list(fresh)
            fn(got, pools[name], cap)
            out[name] = got
            assert len(pools[name]) <= cap
            for before, after in zip(fresh, got, strict=True):
                if _shareable(before):
                    assert _bits(after) == _bits(before) and after == before
                else:
                    assert after is before  # left alone
            # equal shareable demands met in one call share a tuple, unless the pool was
            # emptied between them (at most cap distinct values stay together)
            seen: dict[bytes, object] = {}
            for before, after in zip(fresh, got, strict=True):
                if _shareable(before):
                    key = _bits(before)
                    assert key is not None
                    if key in seen and len({_bits(d) for d in fresh if _shareable(d)}) <= cap:
                        assert seen[key] is after
                    seen.setdefault(key, after)
        # the compiled loop and its reference: the same values, the same sharing pattern
        assert [_bits(d) for d in out["c"]] == [_bits(d) for d in out["py"]]
        ids_c = [id(d) for d in out["c"]]
        ids_py = [id(d) for d in out["py"]]
        same_c = {(i, j) for i in range(len(ids_c)) for j in range(i) if ids_c[i] == ids_c[j]}
        same_py = {(i, j) for i in range(len(ids_py)) for j in range(i) if ids_py[i] == ids_py[j]}
        assert same_c == same_py
        assert [_bits(k) for k in pools["c"]] == [_bits(k) for k in pools["py"]]


def test_a_full_pool_is_emptied_before_it_grows():
    pool: dict = {}
    dems = [(float(i), 0.0, 0.0, 0.0) for i in range(5)]
    share_demands(dems, pool, 3)
    assert list(pool) == [(3.0, 0.0, 0.0, 0.0), (4.0, 0.0, 0.0, 0.0)]


@pytest.mark.parametrize("policy", ["late", "mantri", "none"])
@pytest.mark.parametrize("streamed", [False, True])
def test_runs_give_the_traces_of_runs_that_share_nothing(tmp_path, monkeypatch, policy, streamed):
    w = mapreduce_workload(40, 5, gap=60.0, max_maps=40, map_mu=4.0)
    common = dict(nodes=3, slots=8, seed=4, progress=False, engine="python")
    replaced = [0]
    real = _shared_demands.share_demands

    def counting(dems, pool, cap=_shared_demands.SHARED_DEMANDS_MAX):
        before = list(dems)
        real(dems, pool, cap)
        replaced[0] += sum(a is not b for a, b in zip(before, dems, strict=True))

    def run(share: bool, name: str):
        monkeypatch.setattr(_shared_demands, "SHARE_DEMANDS", share)
        if not streamed:
            res = sim_bridge.simulate(w, policy, **common)
            return res.tasks, res.jobs
        path = tmp_path / f"{name}.parquet"
        res = sim_bridge.simulate(w, policy, trace_sink=path, row_group_rows=40, **common)
        return pd.read_parquet(path), res.jobs

    monkeypatch.setattr(_shared_demands, "share_demands", counting)
    tasks, jobs = run(True, "shared")
    assert replaced[0] > 100  # demands were shared
    tasks0, jobs0 = run(False, "own")
    assert_same_tables(tasks, jobs, tasks0, jobs0)
    assert len(tasks) > 300
