"""A day-block's degraded capacities drawn a part at a time from marks
(``BadNodes.capacity_marks``, ``sim_bridge.world.CapacityParts``).

The oracle is the block's degraded rows computed at once (``capacity_parts``, itself held
equal to the whole block in ``tests/test_path_parts.py``): every part is the same array, bit
for bit, the drift's state goes on into the next block alike, and the marks hold 24 bytes a
degraded row and part where the parts held 8 bytes a row and step.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge.world import BadNodes, CapacityParts, _bad_nodes
from sim_bridge.world._block_marks import seekable

needs_marks = pytest.mark.skipif(not seekable(), reason="sim_bridge._normals_core not built")


@needs_marks
@settings(max_examples=25, deadline=None)
@given(
    nodes=st.integers(1, 300),
    parts=st.sampled_from([1, 2, 3, 4, 6, 12]),
    share=st.floats(0.0, 0.6),
    dt=st.sampled_from([30.0, 60.0, 300.0]),
    seed=st.integers(0, 2**31),
)
def test_parts_from_marks_are_the_parts_computed_at_once(nodes, parts, share, dt, seed):
    held, marked = (BadNodes(nodes, (seed, 7), share=share) for _ in range(2))
    n_steps = 720
    for b in range(3):  # the drift's state goes on into the next block alike
        ref = held.capacity_parts(b, n_steps, dt, parts)
        got = marked.capacity_marks(b, n_steps, dt, parts)
        assert got.held is None and got.left == set(range(parts))
        for p in range(parts):
            part = got.part(p)
            assert part.shape == ref[p].shape and part.dtype == np.float64
            assert np.array_equal(part, ref[p])
            got.release(p)
        assert not got.left
        assert np.array_equal(marked._x, held._x)


@needs_marks
def test_the_marks_hold_24_bytes_a_degraded_row_and_part():
    bad = BadNodes(3000, (1,))
    n_bad = len(bad.bad_nodes)
    got = bad.capacity_marks(0, 1440, 60.0, 12)
    assert got.nbytes == 24 * n_bad * 12
    assert 8 * n_bad * 1440 / got.nbytes == 40.0  # the parts computed at once


def test_without_the_extension_the_parts_are_computed_at_once(monkeypatch):
    ref = BadNodes(120, (3,), share=0.4).capacity_parts(0, 60, 60.0, 4)
    monkeypatch.setattr(_bad_nodes, "seekable", lambda: False)
    got = BadNodes(120, (3,), share=0.4).capacity_marks(0, 60, 60.0, 4)
    assert got.held is not None and got.nbytes == sum(r.nbytes for r in ref)
    for p in range(4):
        assert np.array_equal(got.part(p), ref[p])
        got.release(p)
        assert got.held[p] is None  # let go


@pytest.mark.parametrize("marks", [True, False])
def test_a_part_let_go_or_out_of_range_is_refused(monkeypatch, marks):
    if marks and not seekable():
        pytest.skip("sim_bridge._normals_core not built")
    monkeypatch.setattr(_bad_nodes, "seekable", lambda: marks)
    got = BadNodes(50, (2,), share=0.5).capacity_marks(0, 12, 60.0, 3)
    assert isinstance(got, CapacityParts)
    got.part(1)
    got.release(1)
    with pytest.raises(ValueError, match="part 1 of the capacities was let go"):
        got.part(1)
    with pytest.raises(ValueError, match="part 3 of the capacities"):
        got.part(3)
    with pytest.raises(ValueError, match="parts must divide n_steps=12, got 5"):
        BadNodes(50, (2,)).capacity_marks(0, 12, 60.0, 5)
    with pytest.raises(ValueError, match="n_steps must be >= 1, got 0"):
        BadNodes(50, (2,)).capacity_marks(0, 0, 60.0, 1)
