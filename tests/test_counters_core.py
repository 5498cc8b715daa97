"""The compiled node counters (``sim_bridge._counters_core``) against the NumPy reference.

The NumPy model (``Cluster._counters`` with ``_hash_normal``) is the slow obvious
implementation; the C rows follow it operation by operation and both take log, cos, exp and
pow from the C library (``sim_bridge._portable_math``), so they agree bit for bit. (With
NumPy's own log/cos/exp/pow, whose AVX-512 paths round differently, they did not.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge._cluster as cluster_mod
from sim_bridge._cluster import COUNTER_NAMES, Cluster

pytestmark = pytest.mark.skipif(
    cluster_mod.CounterSynth is None, reason="the compiled counters were not built"
)


def _pair(n_nodes: int, slots: int, seed: int, **kw) -> tuple[Cluster, Cluster]:
    """The same cluster twice: with the compiled counters, and on the NumPy reference."""
    fast = Cluster(n_nodes, slots, seed, **kw)
    ref = Cluster(n_nodes, slots, seed, **kw)
    ref._synth = None
    assert fast._synth is not None
    return fast, ref


def _inputs(rng, n_nodes: int, slots: int, m: int, t_max: float):
    return (
        rng.integers(0, n_nodes, m),
        rng.uniform(0.0, t_max, m),
        rng.integers(0, slots + 1, m).astype(float),
        rng.uniform(0.0, slots, m),
        rng.uniform(0.0, slots, m),
        rng.uniform(0.0, slots, m),
    )


def _assert_equal(fast: dict, ref: dict) -> None:
    assert list(fast) == list(COUNTER_NAMES)
    for name in COUNTER_NAMES:
        a, b = np.asarray(fast[name]), np.asarray(ref[name])
        np.testing.assert_array_equal(a, b, err_msg=name)


@settings(max_examples=40, deadline=None)
@given(
    n_nodes=st.integers(1, 40),
    slots=st.integers(1, 4),
    seed=st.integers(0, 2**40),
    draw=st.integers(0, 2**32 - 1),
    t_max=st.sampled_from([5.0, 600.0, 86_400.0, 3 * 86_400.0]),
)
def test_rows_agree_with_the_numpy_reference(n_nodes, slots, seed, draw, t_max):
    fast, ref = _pair(n_nodes, slots, seed)
    args = _inputs(np.random.default_rng(draw), n_nodes, slots, 64, t_max)
    _assert_equal(fast.counters(*args), ref.counters(*args))
    assert fast.horizon_steps == ref.horizon_steps  # both extended their paths alike


def test_rows_agree_on_many_rows_and_on_replayed_machines(shared_data_dir):
    # > 256 rows: the reference hashes counter by counter; replayed Alibaba 2018 levels
    fast, ref = _pair(30, 2, 5, source="alibaba2018", data_dir=shared_data_dir)
    args = _inputs(np.random.default_rng(1), 30, 2, 2_000, 2 * 86_400.0)
    _assert_equal(fast.counters(*args), ref.counters(*args))


@settings(max_examples=30, deadline=None)
@given(
    node=st.integers(0, 9),
    time=st.floats(0.0, 2 * 86_400.0),
    running=st.integers(0, 2),
    loads=st.tuples(*[st.floats(0.0, 2.0)] * 3),
)
def test_one_read_is_the_vectorised_row_bit_for_bit(node, time, running, loads):
    c = Cluster(10, 2, seed=3)
    one = c.counters_now(node, time, running, *loads)
    values = c.counter_values_now(node, time, running, *loads)
    many = c.counters(
        np.array([node]), np.array([time]), np.array([running]),
        *(np.array([v]) for v in loads),
    )  # fmt: skip
    assert list(one) == list(COUNTER_NAMES)
    assert list(one.values()) == values == [float(many[k][0]) for k in COUNTER_NAMES]
    ref = Cluster(10, 2, seed=3)
    ref._synth = None
    _assert_equal({k: [v] for k, v in one.items()}, ref.counters_now(node, time, running, *loads))


def test_reads_extend_the_paths_and_bad_reads_name_the_value():
    c = Cluster(4, 2, seed=0)
    far = 5 * 86_400.0 + 17.0  # past the first day's paths: extended on demand
    assert c.counter_values_now(1, far, 0, 0.0, 0.0, 0.0)[27] == c.cores[1]
    assert c.horizon_steps * c.dt > far
    with pytest.raises(ValueError, match="node must be in \\[0, 4\\), got 4"):
        c.counter_values_now(4, 10.0, 0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="time must be >= 0, got -1.0"):
        c.counter_values_now(0, -1.0, 0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="differ in length"):
        c._synth.rows(np.array([0, 1]), np.array([1.0]), *[np.zeros(2)] * 4)
    with pytest.raises(ValueError, match="shape \\(4, 4, steps\\)"):
        c._synth.set_levels(np.zeros((4, 3, 10)))


def test_counters_are_a_pure_function_of_seed_node_and_instant():
    a, b = Cluster(6, 2, seed=11), Cluster(6, 2, seed=11)
    b.counter_values_now(2, 50_000.0, 1, 0.2, 0.2, 0.2)  # an unrelated read first
    assert a.counter_values_now(3, 123.0, 1, 0.5, 0.4, 0.3) == b.counter_values_now(
        3, 123.0, 1, 0.5, 0.4, 0.3
    )
    other = Cluster(6, 2, seed=12).counter_values_now(3, 123.0, 1, 0.5, 0.4, 0.3)
    assert other != a.counter_values_now(3, 123.0, 1, 0.5, 0.4, 0.3)
    # the noise changes with the 10-second sample, not within it (background step fixed)
    s0 = a.counter_values_now(3, 120.0, 1, 0.5, 0.4, 0.3)
    assert a.counter_values_now(3, 129.9, 1, 0.5, 0.4, 0.3) == s0
    assert a.counter_values_now(3, 130.0, 1, 0.5, 0.4, 0.3) != s0


def test_a_cluster_pickles_and_deep_copies_with_its_compiled_counters():
    import copy
    import pickle

    c = Cluster(5, 2, seed=8)
    far = 2 * 86_400.0 + 3.0  # the copy extends its own paths past the first day
    for twin in (pickle.loads(pickle.dumps(c)), copy.deepcopy(c)):
        assert twin._synth is not None
        assert twin.counter_values_now(2, 40.0, 1, 0.1, 0.2, 0.3) == c.counter_values_now(
            2, 40.0, 1, 0.1, 0.2, 0.3
        )
        assert twin.counter_values_now(4, far, 0, 0.0, 0.0, 0.0) == c.counter_values_now(
            4, far, 0, 0.0, 0.0, 0.0
        )


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), m=st.integers(1, 200))
def test_rows_with_tenant_demand_match_the_reference(seed, m):
    """The co-located demand enters both implementations the same way (levels + demand,
    capped at 1), vectorised and single reads alike."""
    fast, ref = _pair(12, 3, seed)
    rng = np.random.default_rng(seed)
    args = _inputs(rng, 12, 3, m, 20000.0)
    demand = rng.uniform(0.0, 0.8, (4, m))
    _assert_equal(fast.counters(*args, demand), ref.counters(*args, demand))
    i = int(rng.integers(0, m))
    single = [float(a[i]) for a in args]
    one = fast.counter_values_now(int(single[0]), *single[1:], tuple(demand[:, i]))
    want = ref.counters_now(int(single[0]), *single[1:], tuple(demand[:, i]))
    np.testing.assert_array_equal(one, [want[k] for k in COUNTER_NAMES])


def test_counters_show_the_tenants_demand():
    """Tenants loading the disk raise the disk readings and leave the cpu ones alone; no
    demand reads exactly as before."""
    c = Cluster(4, 2, seed=3, bad_node_share=0.0)
    base = c.counters_now(2, 600.0, 1, 0.5, 0.5, 0.5)
    assert c.counters_now(2, 600.0, 1, 0.5, 0.5, 0.5, (0.0, 0.0, 0.0, 0.0)) == base
    busy = c.counters_now(2, 600.0, 1, 0.5, 0.5, 0.5, (0.0, 0.0, 0.4, 0.0))
    for name in ("disk_util_pct", "disk_queue", "disk_await_ms", "disk_read_kbs"):
        assert busy[name] > base[name], name
    for name in ("cpu_user", "mem_used_pct", "net_rx_kbs"):
        assert busy[name] == base[name], name


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**63 - 1),
    n_nodes=st.integers(1, 12),
    slots=st.integers(1, 6),
    base=st.integers(0, 5),
    m=st.integers(1, 300),
    draw=st.integers(0, 2**32 - 1),
)
def test_compiled_rows_are_the_reference_formula(seed, n_nodes, slots, base, m, draw):
    """``CounterSynth`` (C) against ``_reference_counters`` (the model written once in
    Python) on random levels -- saturated 0 and 1 included -- node factors, readings and
    co-located demand, outside any cluster."""
    from sim_bridge._cluster import _CounterNoise, _reference_counters

    rng = np.random.default_rng(draw)
    steps, dt = 7, 60.0
    levels = rng.uniform(0.0, 1.0, (4, n_nodes, steps))
    levels[rng.random(levels.shape) < 0.1] = 0.0
    levels[rng.random(levels.shape) < 0.1] = 1.0
    cores = rng.choice(np.array([16.0, 24.0, 32.0]), n_nodes)
    speed = np.exp(rng.normal(0.0, 0.1, n_nodes))
    synth = cluster_mod.CounterSynth(seed & 0xFFFFFFFF, cores, speed, slots, dt)
    synth.set_levels(levels, base)
    nodes = rng.integers(0, n_nodes, m)
    times = rng.uniform(base * dt, (base + steps) * dt - 1e-6, m)
    running = rng.integers(0, slots + 1, m).astype(float)
    loads = [rng.uniform(0.0, slots, m) for _ in range(3)]
    demand = rng.uniform(0.0, 0.6, (4, m)) * (rng.random(m) < 0.5)
    steps_of = (times // dt).astype(np.int64) - base
    want = _reference_counters(
        levels[:, nodes, steps_of] + demand, running, *loads, cores[nodes], speed[nodes],
        slots, _CounterNoise(seed, nodes, (times // 10.0).astype(np.int64)),
    )  # fmt: skip
    got = synth.rows(nodes, times, running, *loads, demand)
    _assert_equal(dict(zip(COUNTER_NAMES, got, strict=True)), want)
    i = int(rng.integers(0, m))
    one = synth.row(int(nodes[i]), float(times[i]), float(running[i]),
                    *(float(x[i]) for x in loads), *demand[:, i].tolist())  # fmt: skip
    assert one == got[:, i].tolist()  # a single read is the vectorised row, bit for bit


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), m=st.integers(1, 200), tenants=st.booleans())
def test_counters_from_levels_read_at_launch_equal_the_paths(seed, m, tenants):
    """A streamed run records each launch's four levels (``levels_now``) and reads the
    counters from them once the paths may have dropped that step: the same values, bit for
    bit, on the compiled rows and on the NumPy reference; and they need no path step."""
    for c in _pair(12, 3, seed):
        rng = np.random.default_rng(seed)
        args = _inputs(rng, 12, 3, m, 20000.0)
        demand = rng.uniform(0.0, 0.8, (4, m)) if tenants else None
        nodes, times = args[0], args[1]
        pairs = zip(nodes.tolist(), times.tolist(), strict=True)
        levels = np.array([c.levels_now(n, t) for n, t in pairs]).T
        np.testing.assert_array_equal(levels, c.levels_at(nodes, times))
        want = c.counters(*args, demand)
        c.hold("test", 30000.0)  # every step the readings are at may go
        c.levels_at([0], [2 * 86400.0])  # the paths are extended: the steps before go
        assert c.base_step * c.dt > times.max()
        got = c.counters(*args, demand, levels=levels)
        for name in COUNTER_NAMES:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    with pytest.raises(ValueError, match="levels must have shape"):
        c.counters(*args, demand, levels=levels[:, :-1] if m > 1 else np.zeros((3, 1)))
