"""LATE's cut by selection (``sim_bridge._order_stats``) equals the sorted order statistics.

The compiled scan finds the two order statistics its cut interpolates between by a selection
over a job's unsorted rates (128 or more), counting the stage's sorted run below each pivot by
bisection, and sorts the rates when they are fewer or the selection gives up. Both paths are held to
``sorted`` over the union (ties, signed zeros, infinite inverses and long runs of equal
values included), and whole LATE runs with the selection and with the sort alone give the
same tables. The scan's ranking of its candidates in C is held to ``sorted`` with LATE's key.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np
import pytest
from _crowded import assert_same_tables, crowded_workload, simulate_tables
from hypothesis import given, settings
from hypothesis import strategies as st

core = pytest.importorskip("sim_bridge._progress_core")

_rate = st.one_of(
    st.floats(min_value=-1.0, max_value=1e3, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, 1e-300, 5e-324]),
)
_rates = st.one_of(
    st.lists(_rate, min_size=1, max_size=12),
    # many ties: unstarted attempts' 0.0, and runs of equal rates
    st.lists(st.sampled_from([0.0, -0.0, 0.5, 0.25, 1e-3, 7.0]), min_size=17, max_size=600),
    st.lists(st.floats(0.0, 1.0), min_size=100, max_size=600),
)
_done = st.lists(
    st.one_of(
        st.floats(min_value=0.0, max_value=1e4),
        st.sampled_from([0.0, 5e-324, 0.5, 2.0, 3.0, math.inf]),
    ),
    max_size=60,
)


@contextmanager
def _rounds(cap: int):
    """Run under a cap of the selection's rounds (-1 the default, 0 the sort alone)."""
    was = core.set_select_rounds(cap)
    try:
        yield
    finally:
        core.set_select_rounds(was)


@settings(max_examples=500, deadline=None)
@given(
    rates=_rates,
    done=_done,
    inverse=st.booleans(),
    cap=st.sampled_from([-1, 0, 1, 2, 5]),
    data=st.data(),
)
def test_the_cut_s_two_order_statistics_are_sorteds(rates, done, inverse, cap, data):
    """``(u[k], u[k + 1])`` of ``u = sorted(rates + run)``, the run the ascending finished
    values or (``inverse``) their inverses read backwards, whatever the cap on the rounds:
    a selection that completes, one that gives up part way and leaves the rates permuted for
    the sort, and the sort alone."""
    done = sorted(x for x in done if x > 0.0) if inverse else sorted(done)
    run = [1.0 / x for x in reversed(done)] if inverse else list(done)
    union = sorted(rates + run)
    if len(union) < 2:
        return
    k = data.draw(st.integers(0, len(union) - 2))
    with _rounds(cap):
        x, y, selected = core.select_pair_of_two(rates, done, k, inverse)
    assert (x, y) == (union[k], union[k + 1])
    if cap == 0 or len(rates) < 128:  # the sort alone, or too few rates to select
        assert not selected
    elif cap == -1:
        assert selected  # the default cap is not reached on these sizes


def test_the_default_cap_lets_adversarial_orders_finish():
    """Orders that defeat a middle pivot (organ pipe, sawtooth, all equal) still select."""
    n = 501
    orders = [
        [float(min(i, n - 1 - i)) for i in range(n)],
        [float(i % 7) for i in range(n)],
        [0.5] * n,
        [float(i) for i in range(n, 0, -1)],
    ]
    for rates in orders:
        union = sorted(rates)
        for k in (0, 1, n // 4, n // 2, n - 2):
            x, y, selected = core.select_pair_of_two(rates, [], k)
            assert (x, y) == (union[k], union[k + 1])
            assert selected  # within 2 log2 n + 8 rounds, not the sort's fallback


def test_k_out_of_range_is_an_index_error():
    with pytest.raises(IndexError, match="out of range"):
        core.select_pair_of_two([0.1, 0.2], [0.3], 2)
    with pytest.raises(IndexError, match="out of range"):
        core.select_pair_of_two([0.1], [], 0)


def test_set_select_rounds_returns_the_previous_cap():
    was = core.set_select_rounds(3)
    try:
        assert core.set_select_rounds(0) == 3
        assert core.set_select_rounds(-1) == 0
    finally:
        core.set_select_rounds(was)


@pytest.mark.parametrize("seed", [11, 5])
def test_late_runs_with_selection_and_with_the_sort_alone_are_equal(seed):
    """A LATE run's tables, its cuts selected and its cuts from sorted rates; the first
    run must have selected some of its cuts."""
    kw = dict(nodes=30, slots=8, policy="late", seed=seed)
    runs = []
    for cap in (-1, 0):
        before = core.n_selected()
        with _rounds(cap):
            # jobs of 150-400 maps on 240 slots: stages with more running attempts than
            # the selection's minimum, so the scans select their cuts
            big = crowded_workload(seed, 4, maps=(150, 400), gap=60.0, name="BIG")
            runs.append(simulate_tables(big, kw))
        if cap == -1:
            assert core.n_selected() > before  # the path under test was taken
        else:
            assert core.n_selected() == before
    (tasks, jobs), (tasks0, jobs0) = runs
    assert len(tasks) > 600 and (tasks["attempt"] > 0).any()  # the scans made copies
    assert_same_tables(tasks, jobs, tasks0, jobs0)


def test_the_compiled_module_s_examples_run():
    """A compiled module's examples are not collected by ``--doctest-modules``."""
    import doctest

    assert doctest.testmod(core).failed == 0


def _rank_key(c):
    return (-c[0], c[1])


@settings(max_examples=300, deadline=None)
@given(
    ests=st.lists(
        st.one_of(
            st.floats(min_value=0.0, max_value=1e6),
            st.sampled_from([0.0, -0.0, 1.0, math.inf, math.nan]),
        ),
        max_size=80,
    ),
    uid_kind=st.sampled_from(["small", "wide", "bool"]),
    data=st.data(),
)
def test_candidates_are_ranked_in_late_s_order(ests, uid_kind, data):
    """The scan's ranking in C is ``sorted(key=(-estimate, uid))``: ties of estimates (and
    of signed zeros) by uid; a NaN estimate, or a uid that is not an int of 64 bits, hands
    the list to Python's sort, whose order it then is."""
    big = 2**70 if uid_kind == "wide" else 10**6
    uids = data.draw(
        st.lists(st.integers(0, big), min_size=len(ests), max_size=len(ests), unique=True)
    )
    cands = [(e, u, object()) for e, u in zip(ests, uids, strict=True)]
    if uid_kind == "bool" and cands:
        cands[0] = (cands[0][0], True, cands[0][2])
    got = core.rank_candidates(cands, _rank_key)
    want = sorted(cands, key=_rank_key)
    assert [c[2] for c in got] == [c[2] for c in want]


@settings(max_examples=300, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(
            st.one_of(
                st.floats(min_value=0.0, max_value=1e4),
                st.sampled_from([0.0, 1.0, 2.0, math.inf, math.nan]),
            ),
            st.one_of(st.floats(min_value=0.0, max_value=1e3), st.sampled_from([0.0, 1.0])),
        ),
        max_size=400,
    ),
    q=st.one_of(
        st.floats(min_value=0.0, max_value=1.0),
        st.sampled_from([0.0, 0.25, 1.0, 1, np.float64(0.3)]),
    ),
)
def test_slow_nodes_in_c_are_numpys(pairs, q):
    """LATE's slow nodes from the scan's selection are ``_slow_nodes_py``'s NumPy array (a
    bool per node: finished work, speed below the ``q`` quantile of the seen nodes'), or
    None likewise, or left to it (NaN speeds, ``q`` not a float, the last index)."""
    from array import array

    from sim_bridge.policies import LATE

    pol = LATE(slow_node_threshold=float(q))
    pol.slow_node_threshold = q  # as given (an int, a NumPy float)
    pol._node_work = array("d", [w for w, _t in pairs])
    pol._node_time = array("d", [t for _w, t in pairs])
    with np.errstate(all="ignore"):  # extreme speeds overflow in NumPy's reference
        want = pol._slow_nodes_py()
        fallback = pol._slow_nodes_now()
    got = core.late_slow_nodes(pol._node_work, pol._node_time, q)
    if got is NotImplemented:
        speeds = [w / t for w, t in pairs if t > 0]
        assert (
            not isinstance(q, float)
            or any(s != s for s in speeds)
            or q * (len(speeds) - 1) >= len(speeds) - 1
        )
        got = fallback  # the policy falls back to NumPy
    if want is None:
        assert got is None
    else:
        assert got.dtype == want.dtype == bool
        assert got.tolist() == want.tolist()
        assert np.array_equal(fallback, want)
