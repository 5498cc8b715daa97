"""Issue 13: the contention paths' window moved on in its own buffer (``_path_window``).

The oracle for the row moves is the obvious one: copy every row's kept values out first,
then lay them down at the new row length. The compiled ``memmove`` kernel and the NumPy
reference must leave the same values as the oracle wherever a new row's kept part lies, for
any layout (rows growing, shrinking or keeping their length). A windowed cluster whose
window moves on in place must read the levels of a cluster that keeps every step, and hold
one buffer of exactly its window, never a second.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge import Cluster
from sim_bridge._path_window import (
    _compiled_shift_rows,
    shift_rows,
    shift_rows_py,
    slide_window,
)


@st.composite
def layouts(draw):
    rows = draw(st.integers(0, 9))
    old = draw(st.integers(0, 12))
    drop = draw(st.integers(0, old))
    new = draw(st.integers(old - drop, old - drop + 12))
    slack = draw(st.integers(0, 3))
    return rows, old, drop, new, slack


def _oracle(buf: np.ndarray, rows: int, old: int, drop: int) -> list[np.ndarray]:
    return [buf[r * old + drop : (r + 1) * old].copy() for r in range(rows)]


KERNELS = [pytest.param(shift_rows_py, id="numpy")]
if _compiled_shift_rows is not None:
    KERNELS.append(pytest.param(_compiled_shift_rows, id="compiled"))


@pytest.mark.parametrize("kernel", KERNELS)
@settings(max_examples=300, deadline=None)
@given(layout=layouts(), seed=st.integers(0, 2**32 - 1))
def test_rows_land_where_the_copy_puts_them(kernel, layout, seed):
    rows, old, drop, new, slack = layout
    buf = np.random.default_rng(seed).random(rows * max(old, new) + slack)
    want = _oracle(buf, rows, old, drop)
    tail = buf[rows * max(old, new) :].copy()
    kernel(buf, rows, old, drop, new)
    for r in range(rows):
        assert np.array_equal(buf[r * new : r * new + old - drop], want[r]), r
    assert np.array_equal(buf[rows * max(old, new) :], tail)  # nothing past the layouts


@settings(max_examples=200, deadline=None)
@given(layout=layouts(), fields=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_slide_window_is_the_copy_and_the_buffer_is_the_window(layout, fields, seed):
    nodes, old, drop, new, _ = layout
    buf = np.random.default_rng(seed).random(fields * nodes * old)
    want = buf.reshape(fields, nodes, old)[:, :, drop:].copy()
    buf, win = slide_window(buf, fields, nodes, old, drop, new)
    assert win.shape == (fields, nodes, new)
    assert buf.size == fields * nodes * new
    assert win.base is buf and win.flags.c_contiguous
    assert np.array_equal(win[:, :, : old - drop], want)


def test_bad_layouts_are_named():
    buf = np.zeros(12)
    with pytest.raises(ValueError, match="drop must lie in"):
        shift_rows(buf, 2, 6, 7, 6)
    with pytest.raises(ValueError, match="new_steps=2 cannot hold the 4 steps"):
        shift_rows(buf, 2, 6, 2, 2)
    with pytest.raises(ValueError, match="buf holds 12 values, fewer than 2 rows of 8"):
        shift_rows(buf, 2, 6, 0, 8)
    with pytest.raises(ValueError, match="flat C-contiguous float64"):
        shift_rows(np.zeros((2, 6)), 2, 6, 0, 6)
    with pytest.raises(ValueError, match="cannot drop 2 and keep the rest in 3"):
        slide_window(buf, 1, 2, 6, 2, 3)
    with pytest.raises(ValueError, match="must own its memory"):
        slide_window(buf[:], 1, 2, 6, 2, 8)
    assert buf.size == 12  # refused before anything was resized


@settings(max_examples=15, deadline=None)
@given(
    steps=st.lists(st.integers(1, 500), min_size=1, max_size=12),
    part=st.sampled_from([60, 120, 240]),
)
def test_a_window_moved_in_place_reads_the_kept_paths(steps, part):
    """Holds move the window's start on, reads ahead extend it; every level read is the
    level of the cluster that keeps every step, and the window is its buffer, exactly."""
    mk = dict(n_nodes=7, slots=2, seed=5, extend_steps=part)
    ref, win = Cluster(**mk, keep_paths=True), Cluster(**mk, keep_paths=False)
    nodes = np.arange(7)
    t = 0.0
    for s in steps:
        win.hold("r", t)
        ahead = t + s * win.dt
        times = np.linspace(t, ahead, 5)
        for x in times:
            got = win.levels_at(nodes, np.full(7, x))
            assert np.array_equal(got, ref.levels_at(nodes, np.full(7, x)))
        lv = win._levels
        assert lv.base is win._lvbuf and win._lvbuf.size == lv.size
        assert lv.shape[2] == win.window_steps
        t += s * win.dt / 2  # the next hold lies inside what was read


def test_the_window_moves_on_in_one_buffer():
    """Enough holds and reads that the window drops steps at extensions and at trims."""
    win = Cluster(n_nodes=4, slots=1, seed=2, keep_paths=False, extend_steps=60)
    ref = Cluster(n_nodes=4, slots=1, seed=2, keep_paths=True, extend_steps=60)
    nodes, shapes = np.arange(4), set()
    for k in range(0, 2000, 37):
        win.hold("r", k * win.dt)
        x = np.full(4, (k + 90) * win.dt)
        assert np.array_equal(win.levels_at(nodes, x), ref.levels_at(nodes, x))
        assert win._levels.base is win._lvbuf and win._lvbuf.size == win._levels.size
        shapes.add(win._levels.shape[2])
    assert win.base_step > 1000 and len(shapes) > 1


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_copied_cluster_moves_its_own_window(how):
    """A copy's window is a view of a buffer it owns, and moving either window on changes
    neither cluster's levels."""
    import copy
    import pickle

    mk = dict(n_nodes=4, slots=1, seed=9, extend_steps=60)
    win, ref = Cluster(**mk, keep_paths=False), Cluster(**mk, keep_paths=True)
    win.hold("r", 100 * win.dt)
    win.levels_at(np.arange(4), np.full(4, 150 * win.dt))
    twin = pickle.loads(pickle.dumps(win)) if how == "pickle" else copy.deepcopy(win)
    assert twin._levels.base is twin._lvbuf and twin._lvbuf.flags.owndata
    assert not np.shares_memory(twin._lvbuf, win._lvbuf)
    nodes = np.arange(4)
    for c in (twin, win):
        for k in range(150, 600, 41):
            c.hold("r", (k - 20) * c.dt)
            x = np.full(4, k * c.dt)
            assert np.array_equal(c.levels_at(nodes, x), ref.levels_at(nodes, x))
