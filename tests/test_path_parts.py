"""Issue 13: contention paths drawn a part of a block at a time (``Cluster(extend_steps=...)``).

A streamed run on a big cluster grows its paths by parts of a day-block, so its window ends
a part past the clock instead of at the end of the clock's day. The oracle is the cluster
that draws whole blocks, with the same parameters: every level, rate and running sum, and
every solve from any state of the window, is the same float, bit for bit, and a whole run's
tables are the same.
"""

from __future__ import annotations

import numpy as np
import pytest
from _streamed_pair import streamed_equals_in_memory
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge import Cluster
from sim_bridge._cluster import _BLOCK, PastPaths
from sim_bridge._simulate import path_part_steps
from sim_bridge.world import DEFAULT_PERSISTENCE, PersistentLevels
from sim_bridge.world._bad_nodes import BadNodes

PROFILES = ((0.5, 0.2, 1.0, 0.3), (1.0, 0.0, 0.1, 0.0), (0.0, 0.7, 0.0, 0.9))


def _both(extend_steps: int, **kw) -> tuple[Cluster, Cluster]:
    mk = dict(n_nodes=5, slots=2, seed=11, **kw)
    return Cluster(**mk, keep_paths=True), Cluster(**mk, keep_paths=True, extend_steps=extend_steps)


@settings(max_examples=12, deadline=None)
@given(lo=st.integers(0, _BLOCK - 1), m=st.integers(0, 200), nodes=st.integers(1, 9))
def test_a_part_of_a_block_is_the_blocks_slice(lo, m, nodes):
    m = min(m, _BLOCK - lo)
    whole, part = (PersistentLevels(DEFAULT_PERSISTENCE, nodes, (5, 1)) for _ in range(2))
    ref = whole.block(0, _BLOCK)
    assert np.array_equal(part.block_part(0, _BLOCK, lo, m), ref[:, :, lo : lo + m])
    # the block's end state (the next block's start) comes only with the part reaching it
    assert (0 in part._end) == (lo + m == _BLOCK)
    part.block_part(0, _BLOCK, _BLOCK - 1, 1)
    assert np.array_equal(part.block(1, 50), whole.block(1, 50))


def test_degraded_rows_alone_are_the_full_capacitys_rows():
    full, rows = BadNodes(400, (9,), share=0.3), BadNodes(400, (9,), share=0.3)
    for b in range(3):  # the drift's state goes on alike from block to block
        c = full.capacity_block(b, 700, 60.0)
        r = rows.capacity_block(b, 700, 60.0, bad_only=True)
        assert r.shape == (len(full.bad_nodes), 700)
        assert np.array_equal(c[full.bad_nodes], r)
        assert (c[full.resource == -1] == 1.0).all()


@settings(max_examples=20, deadline=None)
@given(
    nodes=st.integers(1, 300),
    parts=st.sampled_from([1, 2, 3, 4, 6, 12]),
    share=st.floats(0.0, 0.6),
)
def test_degraded_rows_in_parts_are_the_blocks_rows(nodes, parts, share):
    """A block's degraded rows drawn as one array a part are the rows drawn at once, and the
    drift goes on alike into the next block."""
    whole, split = BadNodes(nodes, (4,), share=share), BadNodes(nodes, (4,), share=share)
    for b in range(2):
        ref = whole.capacity_block(b, 720, 60.0, bad_only=True)
        got = split.capacity_parts(b, 720, 60.0, parts)
        assert len(got) == parts and all(g.shape == (ref.shape[0], 720 // parts) for g in got)
        assert np.array_equal(np.concatenate(got, axis=1), ref)
        assert all(g.flags.c_contiguous and g.base is None for g in got)  # each its own
    with pytest.raises(ValueError, match="parts must divide n_steps=720, got 7"):
        split.capacity_parts(2, 720, 60.0, 7)


def test_a_parts_degraded_rows_go_once_it_is_drawn():
    c = Cluster(40, 2, seed=6, keep_paths=False, extend_steps=360)
    assert c._cap_rows is not None and c._cap_rows.left == {1, 2, 3}
    c.hold("me", 0.0)
    c.levels_at([0], [400 * 60.0])  # the second part
    assert c._cap_rows.left == {2, 3}
    with pytest.raises(ValueError, match="part 1 of the capacities was let go"):
        c._cap_rows.part(1)


@pytest.mark.parametrize("source", ["synthetic", "alibaba2018"])
@pytest.mark.parametrize("steps", [60, 240, 720])
def test_levels_rates_and_sums_are_the_whole_blocks(source, steps, shared_data_dir):
    kw = dict(source=source, data_dir=shared_data_dir if source == "alibaba2018" else None)
    usage = shared_data_dir / "alibaba-v2018-machine-usage-subset"
    if source == "alibaba2018" and not usage.exists():
        pytest.skip("no Alibaba 2018 machine usage in ../shared/data")
    whole, part = _both(steps, **kw)
    assert part.horizon_steps == steps and whole.horizon_steps == _BLOCK
    assert [c.profile_id(PROFILES[0]) for c in (whole, part)] == [0, 0]
    # a profile registered mid-block (its first steps go on one at a time, to the block's end)
    for c in (whole, part):
        c.levels_at([0], [(_BLOCK + steps + 3) * 60.0])
    assert [c.profile_id(PROFILES[1]) for c in (whole, part)] == [1, 1]
    for c in (whole, part):
        c.levels_at([0], [(3 * _BLOCK - 1) * 60.0])  # three blocks
    assert whole.horizon_steps == part.horizon_steps == 3 * _BLOCK
    assert np.array_equal(whole._levels, part._levels)
    for pid in range(2):
        assert np.array_equal(whole._rate[pid], part._rate[pid])
        assert np.array_equal(whole._cum[pid], part._cum[pid])


def test_a_cluster_says_which_parts_it_can_draw():
    with pytest.raises(ValueError, match="extend_steps must be a divisor of 1440, got 7"):
        Cluster(3, 1, extend_steps=7)
    with pytest.raises(ValueError, match="markov source draws whole blocks"):
        Cluster(3, 1, source="markov", extend_steps=60)
    assert Cluster(3, 1, source="markov", extend_steps=_BLOCK).horizon_steps == _BLOCK
    ideal = Cluster(3, 1, ideal=True, extend_steps=60)
    assert ideal.end_time(0, ideal.profile_id(PROFILES[0]), 1.0, 5.0) == 6.0
    assert path_part_steps(33_000) == 120 and path_part_steps(10) == _BLOCK


OPS = st.lists(
    st.tuples(
        st.sampled_from(["end", "end_with", "cum_at", "work_with", "clock"]),
        st.integers(0, 4),  # node
        st.integers(0, 2),  # profile (the next one not yet registered: registered now)
        st.floats(0.0, 1.0),  # how far
    ),
    min_size=4,
    max_size=25,
)


def _finish(c: Cluster, node: int, pid: int, out, demand):
    """A bounded solve gone on with until it ends (as the engine does when its clock gets
    to each stop; the solve's start stays held), and the number of stops."""
    stops = 0
    while isinstance(out, PastPaths):
        out = c.end_resume(node, pid, out, demand)
        stops += 1
    return out, stops


@settings(max_examples=25, deadline=None)
@given(steps=st.sampled_from([60, 90, 240, 480]), ops=OPS)
def test_solves_in_a_window_are_the_same_floats(steps, ops):
    """A streamed run's reads on a window that follows a clock (bounded solves and their
    resumes, the read-ahead of a node's rates, running sums and co-located work, with
    profiles registered along the way and old steps released) give the same floats when
    the paths grow by parts as when they grow by days."""
    whole, part = (Cluster(5, 2, seed=3, keep_paths=False, extend_steps=s) for s in (_BLOCK, steps))
    both = (whole, part)
    n_pids, clock = 0, 0.0
    for c in both:
        c.hold("test", clock)
    for kind, node, p, x in ops:
        if p >= n_pids:
            assert [c.profile_id(PROFILES[n_pids]) for c in both] == [n_pids] * 2
            p, n_pids = n_pids, n_pids + 1
        if kind == "clock":  # the clock goes on; steps before it are released
            clock += x * _BLOCK * 60.0
            for c in both:
                c.hold("test", clock)
            continue
        t0 = clock + x * 1800.0
        work = 1.0 + x * 3 * _BLOCK * 60.0
        demand = (0.1, 0.0, 0.3 * x, 0.0) if kind == "end_with" else (0.0,) * 4
        if kind in ("end", "end_with"):
            first = [c.end_with(node, p, t0, work, demand, within=True) for c in both]
            out = [_finish(c, node, p, o, demand)[0] for c, o in zip(both, first, strict=True)]
        elif kind == "cum_at":
            out = [c.cum_at(node, p, t0) for c in both]
        else:
            out = [c.work_with(node, p, clock, t0 + 1.0, (0.2, 0.1, 0.0, 0.0)) for c in both]
        assert out[0] == out[1], (kind, out)


class _Spy(Cluster):
    """A cluster that records the first step kept of its levels and of its rates at each
    hold."""

    made: list[_Spy] = []

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.seen: list[tuple[int, int]] = []
        _Spy.made.append(self)

    def hold(self, reader, t, *, rates_from=None, nodes=None):
        super().hold(reader, t, rates_from=rates_from, nodes=nodes)
        self.seen.append((self.base_step, self.rates_base_step))


@pytest.mark.parametrize("policy", ["late", "mantri", "none", "dolly", "sda"])
def test_a_streamed_run_keeps_rates_from_the_clock_only(tmp_path, monkeypatch, policy):
    """A big cluster's streamed run holds the levels from its oldest segment under
    co-located demand and the rates from the clock: they are dropped before the levels, no
    read needs them (a read of a dropped step raises), and the trace is the in-memory
    run's."""
    cl = streamed_equals_in_memory(tmp_path, monkeypatch, policy, _Spy)
    # the rates went ahead of the levels, and both were dropped well before the end
    assert any(r > b for b, r in cl.seen)
    assert cl.rates_base_step >= cl.base_step > 0
