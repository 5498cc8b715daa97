"""The fused re-solve of a node's co-tenants against the obvious path.

When a node's tenants change, every co-tenant is advanced and re-solved under its new
co-located demand. ``AttemptPhysics._retenant`` does it in one loop (the compiled step walks
inline) and ``others_demand`` sums each tenant's others' demands in C; with
``sim_bridge.world._attempts.FAST_TENANTS`` off the engine makes one ``_advance`` and one
``_resolve`` call per co-tenant and one ``sum_demand`` of the others each. The oracle is that
path: the same runs, in memory and streamed, must give ``DataFrame.equals`` tables, on nodes
of a few slots and of 176 (Alibaba 2017's machines, up to 175 co-tenants). The fused loop runs
compiled (``sim_bridge._retenant_core``) and in Python (``RETENANT_IN_C`` off), and the
compiled one must also leave every co-tenant's fields as the Python one does.
"""

from __future__ import annotations

import random

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
import sim_bridge.world._attempts as attempts_mod
from sim_bridge import JobSpec, Workload
from sim_bridge._jobs import Attempt
from sim_bridge.world import others_demand, others_demand_py, sum_demand

ZEROISH = [(0.0, 0.0, 0.0, 0.0), (-0.0, 0.0, -0.0, 0.0), (0.0, 1e-300, 0.0, 0.0)]
COMMON = [(0.1, 0.0, 0.2, 0.0), (1 / 3, 2 / 7, 0.0, 0.05), (0.02, 0.0, 0.0, 0.3)]


def _owns(rng: random.Random, n: int) -> list[tuple[float, ...]]:
    """Tenants' demands as the engine holds them: runs of a few common profiles' demands,
    zeros of either sign, and odd magnitudes that round differently in different orders."""
    out = []
    for _ in range(n):
        u = rng.random()
        if u < 0.5:
            out.append(rng.choice(COMMON))
        elif u < 0.6:
            out.append(rng.choice(ZEROISH))
        else:
            scale = rng.choice([1.0, 1e-9, 1e9])
            out.append(tuple(rng.random() * scale for _ in range(4)))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_others_demand_is_the_plain_re_summation_bit_for_bit(seed):
    rng = random.Random(seed)
    for n in [0, 1, 2, 3, 10, 176]:
        owns = _owns(rng, n)
        got, want = others_demand(owns), others_demand_py(owns)
        assert len(got) == n
        # repr tells -0.0 from 0.0 and compares every float exactly
        assert repr(got) == repr(want)
        for i, dem in enumerate(got):
            assert repr(dem) == repr(sum_demand(owns[:i] + owns[i + 1 :]))


def test_others_demand_is_none_where_the_others_demand_nothing():
    owns = [(0.3, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0), (-0.0, 0.0, 0.0, 0.0)]
    assert others_demand(owns) == [None, (0.3, 0.0, 0.0, 0.0), (0.3, 0.0, 0.0, 0.0)]
    assert others_demand([]) == []


def _run(monkeypatch, tmp_path, fast: bool, workload, stream: bool, kw, in_c: bool = True):
    with monkeypatch.context() as m:
        m.setattr(attempts_mod, "FAST_TENANTS", fast)
        m.setattr(attempts_mod, "RETENANT_IN_C", in_c)
        if stream:
            out = tmp_path / f"{'fast' if fast else 'plain'}.parquet"
            sim_bridge.simulate(workload, trace_sink=out, progress=False, **kw)
            return pd.read_parquet(out), None
        r = sim_bridge.simulate(workload, progress=False, **kw)
        return r.tasks, r.jobs


def _crowd(n_jobs: int = 6, maps: int = 60, reduces: int = 12) -> Workload:
    """Jobs staggered over a few minutes, enough tasks to fill a node of 176 slots."""
    rng = random.Random(11)
    jobs = [
        JobSpec(
            f"j{i}",
            40.0 * i,
            [rng.uniform(20.0, 900.0) for _ in range(maps)],
            [rng.uniform(30.0, 400.0) for _ in range(reduces)],
        )
        for i in range(n_jobs)
    ]
    return Workload("crowd", jobs)


WORLDS = [
    pytest.param("SYN", dict(hours=0.1, nodes=8, slots=4, policy="late"), id="syn-4-slots"),
    pytest.param(_crowd(), dict(nodes=1, slots=176, policy="late"), id="crowd-176-slots"),
    pytest.param(_crowd(4), dict(nodes=2, slots=100, placement="fifo"), id="crowd-fifo"),
    pytest.param(
        "SYN",
        dict(hours=0.05, nodes=6, slots=12, bad_node_share=0.3, record_truth=True, seed=4),
        id="bad-nodes-truth",
    ),
    pytest.param("SYN", dict(hours=0.05, nodes=5, slots=8, policy="mantri"), id="mantri"),
]


@pytest.mark.parametrize("in_c", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
@pytest.mark.parametrize(("workload", "kw"), WORLDS)
def test_the_fused_re_solve_is_the_plain_one_bit_for_bit(
    monkeypatch, tmp_path, workload, kw, stream, in_c
):
    if in_c and attempts_mod._retenant_c is None:
        pytest.skip("sim_bridge._retenant_core is not built")
    fast = _run(monkeypatch, tmp_path, True, workload, stream, kw, in_c)
    plain = _run(monkeypatch, tmp_path, False, workload, stream, kw)
    assert len(fast[0]) > 0
    assert fast[0].equals(plain[0])
    if not stream:
        assert fast[1].equals(plain[1])


@pytest.mark.parametrize("in_c", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
def test_real_workloads_with_many_co_tenants_are_the_plain_path(
    monkeypatch, tmp_path, shared_data_dir, stream, in_c
):
    if in_c and attempts_mod._retenant_c is None:
        pytest.skip("sim_bridge._retenant_core is not built")
    for name, kw in (
        ("ALI2017", dict(hours=0.002, nodes=3, slots=176, policy="none")),
        ("FB2010", dict(hours=0.01, nodes=40, slots=10, policy="late")),
    ):
        kw = dict(kw, data_dir=shared_data_dir)
        fast = _run(monkeypatch, tmp_path, True, name, stream, kw, in_c)
        plain = _run(monkeypatch, tmp_path, False, name, stream, kw)
        assert len(fast[0]) > 0 and fast[0].equals(plain[0]), name


def _retenant_states(
    monkeypatch, share: bool, workload, kw, in_c: bool = True
) -> tuple[list, int, int]:
    """Run ``workload`` in memory with shared walks on or off (and the loop compiled or in
    Python); after every fused re-solve, each co-tenant's booked work, its time and its rate
    memo (the demand by value: a walk's memo holds its own demand object), its pending
    solve, demand, last read, check and end. Also the compiled step walks made."""
    states: list = []
    counts = {"walks": 0}
    real = attempts_mod.AttemptPhysics._retenant

    class Counting:  # the compiled step walks, counted
        def __init__(self, trates):
            self._t = trates

        def __getattr__(self, name):
            return getattr(self._t, name)

        def work_steps(self, *args):
            counts["walks"] += 1
            return self._t.work_steps(*args)

    def watched(self, atts, now, dems):
        if not isinstance(self.cluster._trates, Counting) and self.cluster._trates is not None:
            self.cluster._trates = Counting(self.cluster._trates)
        real(self, atts, now, dems)
        for a in atts:
            m = a._step_rate
            states.append(
                (
                    a.uid,
                    now,
                    a._seg_done,
                    a._seg_t,
                    None if m is None else (m[0], m[1], m[2]),
                    a._solve,
                    a._dem,
                    a._prog,
                    a._ckpt,
                    a._end,
                )
            )

    with monkeypatch.context() as m:
        m.setattr(attempts_mod, "SHARE_WALKS", share)
        m.setattr(attempts_mod, "RETENANT_IN_C", in_c)
        m.setattr(attempts_mod.AttemptPhysics, "_retenant", watched)
        r = sim_bridge.simulate(workload, progress=False, **kw)
    return states, counts["walks"], len(r.tasks)


@pytest.mark.parametrize(("workload", "kw"), WORLDS[:3])
def test_shared_walks_leave_every_co_tenant_as_its_own_walk_would(monkeypatch, workload, kw):
    """The oracle: every co-tenant walking its own steps. After each re-solve of a node's
    tenants, each one's work done, its time and its rate memo are the same floats with the
    walks shared, and fewer walks were made."""
    shared, n_shared, rows = _retenant_states(monkeypatch, True, workload, kw)
    own, n_own, rows_own = _retenant_states(monkeypatch, False, workload, kw)
    assert rows == rows_own > 0
    assert len(shared) == len(own) > 0
    assert repr(shared) == repr(own)  # repr: every float exactly, a zero's sign too
    assert n_shared < n_own


@pytest.mark.parametrize("share", [True, False], ids=["shared-walks", "own-walks"])
@pytest.mark.parametrize(("workload", "kw"), WORLDS)
def test_the_compiled_re_solve_leaves_every_co_tenant_as_the_python_loop(
    monkeypatch, workload, kw, share
):
    """The oracle: ``AttemptPhysics._retenant_py``. After each re-solve of a node's tenants,
    every co-tenant's fields are the same floats (by repr: a zero's sign too, NaN ends
    alike) and the same step walks were made, with the loop compiled."""
    if attempts_mod._retenant_c is None:
        pytest.skip("sim_bridge._retenant_core is not built")
    got, walks_c, rows_c = _retenant_states(monkeypatch, share, workload, kw, in_c=True)
    want, walks_py, rows_py = _retenant_states(monkeypatch, share, workload, kw, in_c=False)
    assert rows_c == rows_py > 0
    assert len(got) == len(want) > 0
    assert repr(got) == repr(want)
    # the compiled loop remembers at most 32 walks a call, the Python one every walk
    assert walks_c >= walks_py if share else walks_c == walks_py


_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
_DEMAND = st.one_of(
    st.none(),
    st.tuples(_FLOATS, _FLOATS, _FLOATS, _FLOATS),
    st.sampled_from(ZEROISH + COMMON),
)


class _Sub(Attempt):
    """Not the slotted type the compiled loops read: they must refuse it."""

    __slots__ = ()


@settings(max_examples=200, deadline=None)
@given(
    dems=st.lists(_DEMAND, max_size=12),
    own=st.one_of(st.tuples(_FLOATS, _FLOATS, _FLOATS, _FLOATS), st.sampled_from(COMMON)),
)
def test_the_compiled_added_demands_are_python_s_term_by_term(dems, own):
    """``add_each`` against ``_add`` on each attempt, by repr (a zero's sign, NaN, inf)."""
    add_each = getattr(attempts_mod, "_add_each_c", None)
    if add_each is None:
        pytest.skip("sim_bridge._retenant_core is not built")
    atts = []
    for i, dem in enumerate(dems):
        a = Attempt(i, None, 0, 0, 0.0, 0.0)  # type: ignore[arg-type]
        a._dem = dem
        atts.append(a)
    want = [attempts_mod._add(a._dem, own) for a in atts]
    got = add_each(atts, own)
    assert repr(got) == repr(want)
    # an attempt of another type, or an own demand that is not four floats: refused
    assert add_each([*atts, _Sub(99, None, 0, 0, 0.0, 0.0)], own) is None  # type: ignore[arg-type]
    assert add_each(atts, (1, 0.0, 0.0, 0.0)) is None
    assert add_each(atts, list(own)) is None


def test_the_compiled_own_demands_are_the_python_list(monkeypatch):
    """``owns`` against ``_owns``' Python list at every call of a run: the same demand
    objects, read from the profiles' dictionary or, for a profile not in it, from
    ``demand``."""
    owns = getattr(attempts_mod, "_owns_c", None)
    if owns is None:
        pytest.skip("sim_bridge._retenant_core is not built")
    seen: list = []
    calls = {"demand": 0}
    real = attempts_mod.AttemptPhysics._owns

    def both(self, attempts):
        def demand(pid):  # for profiles not in the dictionary given
            calls["demand"] += 1
            return self._demand(pid)

        with monkeypatch.context() as m:
            m.setattr(attempts_mod, "RETENANT_IN_C", False)
            want = real(self, attempts)
        for known in (self._pid_demand, {}):
            got = owns(attempts, known, demand)
            assert got == want and all(g is w for g, w in zip(got, want, strict=True))
        seen.append(len(attempts))
        return got

    monkeypatch.setattr(attempts_mod.AttemptPhysics, "_owns", both)
    sim_bridge.simulate(_crowd(), nodes=1, slots=176, policy="late", progress=False)
    assert len(seen) > 0 and max(seen) > 100
    assert calls["demand"] == sum(seen)  # with no profile known, one call an attempt
