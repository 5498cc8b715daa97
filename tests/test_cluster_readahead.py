"""Bounded read-ahead of the contention paths (issue 13): a co-located solve
(``Cluster.end_with``) extends the paths only as far as the work it solves needs, and its end
times are the same, bit for bit, whatever the paths already hold.

Oracles: a twin cluster whose paths were extended far ahead beforehand (the old read-ahead's
state) solves every attempt to the same float; the horizon after a solve is the closed form
"the smallest whole number of blocks that holds the end's step" (never less than it was).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge._cluster import _BLOCK, Cluster


def _twins(seed: int, n_nodes: int = 4) -> tuple[Cluster, Cluster, int]:
    """A cluster with one block of paths and its twin holding three blocks."""
    short = Cluster(n_nodes, 2, seed=seed)
    long = Cluster(n_nodes, 2, seed=seed)
    prof = (0.9, 0.3, 0.6, 0.2)
    pid = short.profile_id(prof)
    assert long.profile_id(prof) == pid
    long.levels_at([0], [3 * _BLOCK * long.dt - 1.0])  # three blocks drawn ahead
    assert (short.horizon_steps, long.horizon_steps) == (_BLOCK, 3 * _BLOCK)
    return short, long, pid


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    node=st.integers(0, 3),
    start=st.floats(0.0, 1_400 * 60.0),
    hours=st.floats(0.01, 60.0),
    demand=st.tuples(*[st.floats(0.0, 0.5)] * 4).filter(any),
)
def test_a_solve_ends_alike_and_draws_only_the_blocks_it_needs(seed, node, start, hours, demand):
    short, long, pid = _twins(seed)
    work = hours * 3600.0
    end = short.end_with(node, pid, start, work, demand)
    assert end == long.end_with(node, pid, start, work, demand)  # bit for bit
    k_end = int(end // short.dt)
    need = max(_BLOCK, math.ceil((k_end + 1) / _BLOCK) * _BLOCK)
    if k_end % _BLOCK == _BLOCK - 1:  # a single-step read of a last step draws one more
        assert short.horizon_steps in (need, need + _BLOCK)
    else:
        assert short.horizon_steps == need
    assert end > start
    assert abs(short.work_with(node, pid, start, end, demand) - work) <= 1e-9 * work


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    k0=st.integers(_BLOCK - 1_500, _BLOCK - 1),
    m=st.integers(1, _BLOCK),
    demand=st.tuples(*[st.floats(0.0, 0.9)] * 4),
)
def test_rates_within_the_paths_are_the_whole_chunks_rates(seed, k0, m, demand):
    """The steps of a chunk that lie within the paths are computed as the whole chunk's
    product computes them (the steps past the paths padded), not as a shorter product."""
    short, long, pid = _twins(seed)
    part = short._rates_within(1, pid, k0, m, demand)
    whole = long.rates_with(1, pid, k0, m, demand)
    assert part.size == min(m, _BLOCK - k0)
    assert short.horizon_steps == _BLOCK  # nothing drawn: the chunk starts within the paths
    np.testing.assert_array_equal(part, whole[: part.size])


def test_a_chunk_starting_past_the_paths_draws_the_next_block():
    short, long, pid = _twins(7)
    rates = short._rates_within(2, pid, _BLOCK + 5, 64, (0.1, 0.0, 0.2, 0.0))
    assert short.horizon_steps == 2 * _BLOCK and rates.size == 64
    np.testing.assert_array_equal(rates, long.rates_with(2, pid, _BLOCK + 5, 64, (0.1, 0, 0.2, 0)))


def test_a_read_of_the_last_step_draws_the_next_block():
    """An attempt re-solved at the end of the paths must find them extended: its last read
    before (a single step, the last) draws the next block."""
    c = Cluster(3, 2, seed=5)
    pid = c.profile_id((0.5, 0.5, 0.5, 0.5))
    c.rate_with(1, pid, _BLOCK - 2, (0.1, 0.1, 0.1, 0.1))
    assert c.horizon_steps == _BLOCK
    c.rate_with(1, pid, _BLOCK - 1, (0.1, 0.1, 0.1, 0.1))
    assert c.horizon_steps == 2 * _BLOCK


def test_a_window_after_a_dropped_step_names_it():
    c = Cluster(3, 1, seed=2, keep_paths=False)
    pid = c.profile_id((1, 0, 0, 0))
    c.hold("me", 2 * 3600.0)
    c.levels_at([0], [_BLOCK * 60.0])  # the next block: the released steps go
    with pytest.raises(IndexError, match="step 5 was dropped"):
        c._rates_within(0, pid, 5, 64, (0.1, 0.1, 0.1, 0.1))
