"""The persistence day-block drawn in chunks is the one-draw, lfilter block, bit for bit.

``PersistentLevels.block`` once drew all ``(2, 4, n_nodes, n_steps)`` normals at once and
filtered each (component, resource) slab with ``scipy.signal.lfilter``; it now draws row
chunks of the same stream and filters them in place (:func:`ar1_inplace`). The slow, obvious
implementation is kept here as the oracle: same seed, same levels and end states
(``np.array_equal``) on several seeds, shapes, chunk sizes and consecutive blocks. The
memory the block needs beyond its output is one chunk (tracemalloc, deterministic).
"""

from __future__ import annotations

import math
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from sim_bridge import _portable_math as portable_math
from sim_bridge.world import DEFAULT_PERSISTENCE, PersistenceParams, PersistentLevels, _persistence
from sim_bridge.world._persistence import ar1_inplace


def reference_block(g: PersistentLevels, b: int, n_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The former implementation: one draw of every normal, lfilter per slab, temporaries."""
    from scipy.signal import lfilter
    from scipy.special import expit

    state = g._end[b - 1]
    eps = np.random.default_rng([*g.seed_words, b + 1]).standard_normal((2, 4, g.n_nodes, n_steps))
    latent = np.repeat(g.node_mean[:, :, None], n_steps, axis=2)
    end = state.copy()
    if n_steps:
        for c in range(2):
            for r in range(4):
                a = float(g._a[c, r])
                gain = float(g._sd[c, r]) * math.sqrt(1.0 - a * a)
                zi = a * state[c, r, :, None]
                y, _ = lfilter([gain], [1.0, -a], eps[c, r], axis=-1, zi=zi)
                latent[r] += y
                end[c, r] = y[:, -1]
    return np.clip(expit(latent), 0.0, 1.0), end


FAST = PersistenceParams(
    (-0.5, 1.0, -2.0, 0.3), (0.4, 0.2, 0.5, 0.1), (0.7, 0.4, 0.9, 0.3),
    (0.3, 0.9, 0.5, 0.0), (900.0, 5000.0, 2000.0, 100.0), (30.0, 60.0, 5.0, 100.0),
)  # fmt: skip

CASES = [  # params, n_nodes, seed words, block lengths, chunk bytes
    (DEFAULT_PERSISTENCE, 60, (0, 505), (1440, 1440), _persistence._CHUNK_BYTES),
    (DEFAULT_PERSISTENCE, 60, (0, 505), (1440, 1440), 8 * 1440 * 7),  # chunks cross resources
    (DEFAULT_PERSISTENCE, 5, (11, 505), (300, 1, 0, 77), 64),  # one row a chunk
    (FAST, 13, (3,), (97, 200), 8 * 97 * 52),  # exactly one component a chunk
    (FAST, 1, 7, (5, 5, 5), 1 << 30),  # everything in one chunk
]


@pytest.mark.parametrize(("params", "n", "seed", "lengths", "chunk"), CASES)
def test_block_equals_the_one_draw_lfilter_reference(monkeypatch, params, n, seed, lengths, chunk):
    monkeypatch.setattr(_persistence, "_CHUNK_BYTES", chunk)
    g = PersistentLevels(params, n, seed)
    for b, n_steps in enumerate(lengths):
        want, want_end = reference_block(g, b, n_steps)
        got = g.block(b, n_steps)
        assert got.shape == (4, n, n_steps) and got.dtype == np.float64
        assert np.array_equal(got, want)
        assert np.array_equal(g._end[b], want_end)


def test_chunked_normal_draws_read_one_stream():
    # the property the chunked block relies on: Generator.standard_normal keeps no state of
    # its own between calls, so row chunks of one stream concatenate to the one big draw
    whole = np.random.default_rng([4, 2]).standard_normal((12, 33))
    rng = np.random.default_rng([4, 2])
    parts = [rng.standard_normal((k, 33)) for k in (1, 5, 2, 4)]
    assert np.array_equal(np.concatenate(parts), whole)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ar1_inplace_equals_lfilter(seed):
    from scipy.signal import lfilter

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((9, 250)) * rng.uniform(0.1, 3.0, (9, 1))
    a = rng.uniform(-0.999, 0.999, 9)
    a[0], a[1] = 0.0, 1.0 - 1e-12
    start = rng.standard_normal(9)
    want = np.stack([lfilter([1.0], [1.0, -a[i]], x[i], zi=[a[i] * start[i]])[0] for i in range(9)])
    got = x.copy()
    assert ar1_inplace(got, a, start) is got
    assert np.array_equal(got, want)
    scalar = x.copy()  # one coefficient for every row
    want0, _ = lfilter([1.0], [1.0, -0.9], x, axis=-1, zi=(0.9 * start)[:, None])
    assert np.array_equal(ar1_inplace(scalar, 0.9, start), want0)


def test_ar1_inplace_closed_form_and_bad_shape():
    # a = 1 is a cumulative sum from the start state; zero innovations decay as a ** k
    x = np.arange(1.0, 6.0)[None, :]
    assert ar1_inplace(x, 1.0, np.array([10.0])).tolist() == [[11.0, 13.0, 16.0, 20.0, 25.0]]
    z = ar1_inplace(np.zeros((1, 4)), 0.5, np.array([8.0]))
    assert z.tolist() == [[4.0, 2.0, 1.0, 0.5]]
    with pytest.raises(ValueError, match=r"x must be \(rows, steps\), got shape \(3,\)"):
        ar1_inplace(np.zeros(3), 0.5, np.zeros(1))


def test_block_memory_is_its_output_plus_one_chunk():
    n, n_steps = 200, 1440
    PersistentLevels(DEFAULT_PERSISTENCE, 1, (0,)).block(0, 2)  # scipy.special imported
    g = PersistentLevels(DEFAULT_PERSISTENCE, n, (5, 505))
    tracemalloc.start()
    try:
        out = g.block(0, n_steps)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    one_draw = 2 * out.nbytes  # what the (2, 4, n, steps) draw alone used to hold
    assert peak <= out.nbytes + _persistence._CHUNK_BYTES + (1 << 20) < out.nbytes + one_draw


def test_levels_and_bad_node_drift_import_no_scipy_signal():
    code = (
        "import sys, sim_bridge\n"
        "assert 'scipy' not in sys.modules, 'import sim_bridge loaded scipy'\n"
        "from sim_bridge.world import DEFAULT_PERSISTENCE, PersistentLevels\n"
        "PersistentLevels(DEFAULT_PERSISTENCE, 3, (1,)).block(0, 10)\n"
        "from sim_bridge.world import BadNodes\n"
        "BadNodes(3, (1,), share=1.0).capacity_block(0, 10, 60.0)\n"
        "from sim_bridge.world import _persistence as p\n"
        "assert 'scipy.signal' not in sys.modules\n"
        "# the logistic map runs in C when the kernels are built, else through scipy.special\n"
        "assert ('scipy.special' in sys.modules) == (p.expit_inplace is None)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def reference_capacity_block(bad, b: int, n_steps: int, dt: float) -> np.ndarray:
    """The former ``BadNodes.capacity_block``: the drift filtered by lfilter."""
    from scipy.signal import lfilter

    rng = np.random.default_rng([*bad.seed_words, b + 1])
    phi = math.exp(-dt / (3600.0 * bad.drift_hours))
    e = rng.standard_normal((bad.n_nodes, n_steps)) * np.sqrt(1.0 - phi * phi)
    x, zf = lfilter([1.0], [1.0, -phi], e, axis=1, zi=(phi * bad._x)[:, None])
    bad._x = zf[:, 0] / phi if phi > 0 else x[:, -1]
    c = np.clip(bad.c0[:, None] * portable_math.exp(bad.drift * x), 0.05, 1.0)
    c[bad.resource == -1] = 1.0
    return c


@pytest.mark.parametrize(
    ("n", "drift_hours", "dt"), [(300, 6.0, 60.0), (17, 0.01, 60.0), (9, 1e6, 1.0)]
)
def test_bad_node_drift_equals_the_lfilter_reference(n, drift_hours, dt):
    # BadNodes.capacity_block filters its drift with ar1_inplace too (no scipy.signal)
    from sim_bridge.world import BadNodes

    got = BadNodes(n, (3, 404), share=0.5, drift_hours=drift_hours)
    ref = BadNodes(n, (3, 404), share=0.5, drift_hours=drift_hours)
    for b, n_steps in enumerate((1440, 1, 500)):
        assert np.array_equal(
            got.capacity_block(b, n_steps, dt), reference_capacity_block(ref, b, n_steps, dt)
        )
        assert np.array_equal(got._x, ref._x)
