"""A block's rates and running sums computed in chunks of nodes equal the whole block's, and
the rates equal the closed form of the cluster model, bit for bit."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge._cluster as cluster_mod
from sim_bridge._cluster import _BLOCK, Cluster
from sim_bridge.world import contention_response

PROFILES = ((1.0, 0.5, 0.2, 0.1), (0.3, 1.0, 0.0, 0.7))


def _paths(
    n: int, seed: int, window: bool, late: bool, chunk_bytes: int, dropped: bool = False
) -> Cluster:
    with patch.object(cluster_mod, "_RATE_CHUNK_BYTES", chunk_bytes):
        c = Cluster(n, 2, seed=seed, keep_paths=not window)
        if window:
            c.hold("reader", 0.0)  # rates ahead are computed when read (the lazy path)
        pid = c.profile_id(PROFILES[0])
        c.cum_at_nodes(pid, (_BLOCK + 30) * c.dt)  # a second block: every node's rates
        if window and dropped:  # the first block goes before the late profile comes
            c.hold("reader", (_BLOCK + 10) * c.dt)
            c.levels_at([0], [(2 * _BLOCK + 5) * c.dt])
            assert c.base_step > 0
        c.levels_at([0], [(2 * _BLOCK + 5) * c.dt])  # a third block's levels (rates later)
        if late:  # registered with steps not yet rated (with a window): it goes on from its
            c.profile_id(PROFILES[1])  # running sum step by step over them
        c.cum_at_nodes(pid, (2 * _BLOCK + 5) * c.dt)  # the third block's rates
    return c


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(1, 9),
    seed=st.integers(0, 2**16),
    window=st.booleans(),
    late=st.booleans(),
    dropped=st.booleans(),
)
def test_chunked_rates_equal_the_whole_block(n, seed, window, late, dropped):
    # a profile registered late, perhaps after steps were dropped, is rated in chunks too
    whole = _paths(n, seed, window, late, 1 << 40, dropped)  # one chunk: the whole block
    one = _paths(n, seed, window, late, 1, dropped)  # one node per chunk
    assert len(one._rate) == len(whole._rate) == 1 + late
    for a, b in zip(one._rate + one._cum, whole._rate + whole._cum, strict=True):
        assert a.shape == b.shape
        assert np.array_equal(a, b)
    # the rates are the model's closed form of the levels kept
    for pid, rate in enumerate(one._rate):
        prof = np.asarray(PROFILES[pid])
        phi = contention_response(one._levels[:, :, : rate.shape[1]], one.response_eps)
        load = np.einsum("r,nr,rnk->nk", prof, one.sens, phi)
        want = 1.0 / (one.speed[:, None] * (1.0 + one.kappa * load))
        assert np.array_equal(rate, want)
    # the running sums go on from step to step: the last step adds its rate times dt
    for rate, cum in zip(one._rate, one._cum, strict=True):
        np.testing.assert_allclose(np.diff(cum, axis=1), rate * one.dt, rtol=1e-9, atol=1e-6)
