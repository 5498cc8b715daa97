"""The contention paths' kernels in C (``sim_bridge._paths_core``) against their NumPy
references: the AR(1) recursion of a block's rows (``ar1_inplace``'s column loop) and the
convex response of a block (``contention_response``), bit for bit, and whole paths built
with and without them.
"""

from __future__ import annotations

import numpy as np
import pytest

import sim_bridge._cluster as cluster_mod
from sim_bridge.world import _persistence
from sim_bridge.world._persistence import DEFAULT_PERSISTENCE, PersistentLevels, ar1_inplace
from sim_bridge.world._response import contention_response

pytestmark = pytest.mark.skipif(
    _persistence.ar1_rows is None or cluster_mod._compiled_response is None,
    reason="sim_bridge._paths_core is not built",
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ar1_rows_is_the_column_loop_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    rows, steps = 37, 500
    x = rng.standard_normal((rows, steps)) * rng.uniform(0.01, 3.0, (rows, 1))
    a = rng.uniform(0.0, 0.9999, rows)
    start = rng.standard_normal(rows)
    loop = np.asfortranarray(x)  # not C-contiguous: the NumPy column loop runs
    ar1_inplace(loop, a, start)
    fast = x.copy()
    ar1_inplace(fast, a, start)
    assert np.array_equal(fast, loop)
    # the definition, one row in plain Python floats
    e, want, p = x[0], np.empty(steps), start[0]
    for k in range(steps):
        p = a[0] * p + e[k]
        want[k] = p
    assert np.array_equal(fast[0], want)


def test_ar1_rows_names_a_bad_shape():
    with pytest.raises(ValueError, match="a and start need 2 values"):
        _persistence.ar1_rows(np.zeros((2, 3)), np.zeros(3), np.zeros(2))


def test_response_is_the_numpy_reference_bit_for_bit():
    rng = np.random.default_rng(4)
    lv = rng.uniform(-0.2, 1.2, (4, 9, 300))
    lv[0, 0, :4] = (0.0, 1.0, -0.0, 0.5)
    for eps in (0.05, 1e-3, 0.7):
        got = cluster_mod._compiled_response(lv, eps)
        assert got.shape == lv.shape
        assert np.array_equal(got, contention_response(lv, eps))
    # a strided view reads the same values
    view = lv[:, 2:7, ::3]
    assert np.array_equal(cluster_mod._compiled_response(view, 0.05), contention_response(view))


def test_expit_inplace_is_scipys_expit_bit_for_bit():
    from scipy.special import expit

    rng = np.random.default_rng(5)
    x = np.concatenate(
        [
            rng.normal(0.0, 3.0, 200_000),
            rng.normal(0.0, 40.0, 50_000),
            rng.uniform(-800.0, 800.0, 50_000),
            [0.0, -0.0, np.inf, -np.inf, np.nan, 709.9, -745.2, 1e-300, -1e-300, 5e-324],
        ]
    )
    with np.errstate(over="ignore"):
        want = expit(x)
    got = x.copy()
    _persistence.expit_inplace(got)
    assert got.tobytes() == want.tobytes()
    # through _expit: in place on a block in C, else SciPy's (a copy, a strided view)
    block = x[:300_000].reshape(4, 250, 300).copy()
    assert _persistence._expit(block, out=block) is block
    assert block.tobytes() == want[:300_000].tobytes()
    view = x[:300_000].reshape(4, 250, 300)[:, ::2]
    assert np.array_equal(_persistence._expit(view), expit(view))
    # in place on a block drawn into the paths' window (rows apart by more than their
    # steps): row by row in C, the same bits
    window = np.full((4, 250, 330), 7.0)
    part = window[:, :, 10:310]
    part[...] = x[:300_000].reshape(4, 250, 300)
    assert not part.flags.c_contiguous
    assert _persistence._expit(part, out=part) is part
    assert part.tobytes() == want[:300_000].tobytes()
    assert (window[:, :, :10] == 7.0).all() and (window[:, :, 310:] == 7.0).all()


def test_blocks_and_rates_are_the_same_without_the_kernels(monkeypatch):
    fast = PersistentLevels(DEFAULT_PERSISTENCE, 7, (3, 505))
    blocks = [fast.block(b, 1440) for b in range(2)]
    co = cluster_mod.Cluster(7, 2, seed=3)
    pid = co.profile_id((0.5, 0.2, 1.0, 0.3))
    co.levels_at([0], [2000 * 60.0])  # a second block
    with monkeypatch.context() as m:
        m.setattr(_persistence, "ar1_rows", None)
        m.setattr(_persistence, "expit_inplace", None)
        m.setattr(cluster_mod, "_compiled_response", None)
        slow = PersistentLevels(DEFAULT_PERSISTENCE, 7, (3, 505))
        assert all(np.array_equal(slow.block(b, 1440), blocks[b]) for b in range(2))
        py = cluster_mod.Cluster(7, 2, seed=3)
        assert py.profile_id((0.5, 0.2, 1.0, 0.3)) == pid
        py.levels_at([0], [2000 * 60.0])
    assert np.array_equal(co._levels, py._levels)
    assert np.array_equal(co._rate[pid], py._rate[pid])
    assert np.array_equal(co._cum[pid], py._cum[pid])
