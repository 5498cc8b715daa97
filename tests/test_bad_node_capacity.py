"""The bad nodes' capacity blocks, drawn in chunks of node rows, equal the whole block drawn
at once (the obvious implementation, written out below), bit for bit, block after block."""

from __future__ import annotations

import math
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge.world._bad_nodes as bad_mod
from sim_bridge import _portable_math as portable_math
from sim_bridge.world._bad_nodes import BadNodes
from sim_bridge.world._persistence import ar1_inplace


def _whole_block(bad: BadNodes, b: int, n_steps: int, dt: float) -> np.ndarray:
    """Block ``b`` of capacities from one draw of every node's normals."""
    rng = np.random.default_rng([*bad.seed_words, b + 1])
    phi = math.exp(-dt / (3600.0 * bad.drift_hours))
    e = rng.standard_normal((bad.n_nodes, n_steps)) * np.sqrt(1.0 - phi * phi)
    x = ar1_inplace(e, phi, bad._x)
    bad._x = phi * x[:, -1] / phi if phi > 0 else x[:, -1]
    c = np.clip(bad.c0[:, None] * portable_math.exp(bad.drift * x), 0.05, 1.0)
    c[bad.resource == -1] = 1.0
    return c


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 40),
    rows=st.integers(1, 9),
    steps=st.integers(1, 50),
    share=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**20),
)
def test_chunked_capacity_blocks_equal_the_whole_block(n, rows, steps, share, seed):
    chunked, whole = (BadNodes(n, (seed, 7), share=share) for _ in range(2))
    with patch.object(bad_mod, "_CHUNK_BYTES", 8 * steps * rows):  # `rows` node rows a chunk
        for b in range(3):
            got = chunked.capacity_block(b, steps, 60.0)
            want = _whole_block(whole, b, steps, 60.0)
            assert np.array_equal(got, want)
            assert np.array_equal(chunked._x, whole._x)  # the next block starts the same
    assert ((got >= 0.05) & (got <= 1.0)).all()
