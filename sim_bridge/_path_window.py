"""The contention paths' window moved on in its own memory: never two windows at once.

A cluster keeps its background levels ``(4, n_nodes, steps)`` for the steps some reader still
holds (``Cluster.hold``). When the paths grow by a part, the window's first ``drop`` steps go
and the part's steps come after the ``keep`` others. Copying the kept steps into a new array
held the old and the new window at once: on 33,000 nodes about 1 MB a step, so 120-160 MB
above the resident set for the moment of the copy, the largest of the transient peaks of a
streamed FB-2010 day (``bench/bench_sim.py``, (i) and (j)).

Here the window is a view of one flat buffer. :func:`slide_window` moves every row's kept
steps to their place at the new row length inside that buffer (:func:`shift_rows`: each
row a ``memmove``, in an order where no row overwrites steps not yet moved) and changes the
buffer's length with ``ndarray.resize``, which is ``realloc``: for a block this size glibc
maps it apart and ``mremap`` grows or shrinks it without a copy. The resident memory is then
the larger of the two windows, not their sum. The values are those of the copy, exactly
(moved, never recomputed; ``tests/test_path_window.py`` checks them against the copy).

Resizing lets any other view of the buffer dangle: its owner must set its views again from
the returned window before it reads (the cluster gives its compiled readers the new window
at once, as it did with the copied one).

Examples
--------
>>> import numpy as np
>>> buf = np.arange(12.0)  # 2 rows of 6 steps, as a (1, 2, 6) window
>>> buf, win = slide_window(buf, 1, 2, 6, drop=4, steps=3)  # keep 2 steps, room for 1 more
>>> win[:, :, :2].tolist()
[[[4.0, 5.0], [10.0, 11.0]]]
>>> buf.shape, win.shape
((6,), (1, 2, 3))
"""

from __future__ import annotations

import os

import numpy as np

try:  # one memmove a row in C (built by pip install; optional)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._paths_core import shift_rows as _compiled_shift_rows
except ImportError:  # pragma: no cover - an install without a C compiler
    _compiled_shift_rows = None

__all__ = ["shift_rows", "shift_rows_py", "slide_window"]


def _check(buf: np.ndarray, rows: int, old_steps: int, drop: int, new_steps: int) -> None:
    if buf.ndim != 1 or buf.dtype != np.float64 or not buf.flags.c_contiguous:
        raise ValueError(
            f"buf must be a flat C-contiguous float64 array, got {buf.dtype} {buf.shape}"
        )
    if rows < 0 or old_steps < 0 or new_steps < 0:
        raise ValueError(
            f"rows, old_steps and new_steps must be >= 0, got {rows}, {old_steps}, {new_steps}"
        )
    if not 0 <= drop <= old_steps:
        raise ValueError(f"drop must lie in [0, old_steps={old_steps}], got {drop}")
    if old_steps - drop > new_steps:
        raise ValueError(
            f"new_steps={new_steps} cannot hold the {old_steps - drop} steps kept of {old_steps}"
        )
    if buf.shape[0] < rows * max(old_steps, new_steps):
        raise ValueError(
            f"buf holds {buf.shape[0]} values, fewer than {rows} rows of "
            f"{max(old_steps, new_steps)} steps"
        )


def shift_rows_py(buf: np.ndarray, rows: int, old_steps: int, drop: int, new_steps: int) -> None:
    """The reference of :func:`shift_rows` in NumPy (one slice assignment a row).

    Parameters and order as :func:`shift_rows`; NumPy copies an overlapping slice correctly,
    so only the order of the rows matters: the rows whose steps move right go first, the last
    of them first, then those that move left (or stay), the first first.

    Examples
    --------
    >>> buf = np.arange(6.0)
    >>> shift_rows_py(buf, 2, 3, 1, 3)  # rows (0, 1, 2) and (3, 4, 5) lose their first step
    >>> buf.tolist()[:2], buf.tolist()[3:5]
    ([1.0, 2.0], [4.0, 5.0])
    """
    _check(buf, rows, old_steps, drop, new_steps)
    keep = old_steps - drop
    if keep == 0 or (drop == 0 and old_steps == new_steps):
        return
    right = [r for r in range(rows) if r * new_steps > r * old_steps + drop]
    left = [r for r in range(rows) if r * new_steps <= r * old_steps + drop]
    for r in reversed(right):
        src = r * old_steps + drop
        buf[r * new_steps : r * new_steps + keep] = buf[src : src + keep]
    for r in left:
        src = r * old_steps + drop
        buf[r * new_steps : r * new_steps + keep] = buf[src : src + keep]


def shift_rows(buf: np.ndarray, rows: int, old_steps: int, drop: int, new_steps: int) -> None:
    """Lay ``rows`` rows of ``old_steps`` values out again at ``new_steps`` a row, in place,
    each without its first ``drop`` values.

    Row ``r``'s values ``buf[r * old_steps + drop : (r + 1) * old_steps]`` go to
    ``buf[r * new_steps :]``; the rest of each new row is left as it was (the caller writes
    it). ``buf`` (flat, float64, C-contiguous) must hold the larger of the two layouts.

    Parameters
    ----------
    buf : ndarray
        The flat buffer, changed in place.
    rows, old_steps, drop, new_steps : int
        The layout before (rows of ``old_steps``), the values each row loses at its start and
        the row length after (at least ``old_steps - drop``).

    Examples
    --------
    >>> buf = np.zeros(8)
    >>> buf[:6] = [1, 2, 3, 4, 5, 6]  # 2 rows of 3
    >>> shift_rows(buf, 2, 3, 0, 4)  # the same steps, rows of 4
    >>> buf[:3].tolist(), buf[4:7].tolist()
    ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    """
    if _compiled_shift_rows is None:
        shift_rows_py(buf, rows, old_steps, drop, new_steps)
        return
    _check(buf, rows, old_steps, drop, new_steps)
    _compiled_shift_rows(buf, rows, old_steps, drop, new_steps)


def slide_window(
    buf: np.ndarray, n_fields: int, n_nodes: int, old_steps: int, drop: int, steps: int
) -> tuple[np.ndarray, np.ndarray]:
    """Move a window ``(n_fields, n_nodes, old_steps)`` held in ``buf`` on by ``drop`` steps
    and give it ``steps`` steps, in the same buffer.

    Parameters
    ----------
    buf : ndarray
        The flat float64 buffer holding the window (C order) in its first
        ``n_fields * n_nodes * old_steps`` values; it must own its memory. Any view of it
        other than the returned one must not be read after this call.
    n_fields, n_nodes, old_steps : int
        The window's shape now.
    drop : int
        Its first steps that go.
    steps : int
        The new window's steps (at least ``old_steps - drop``): the kept steps first, then
        steps left for the caller to write (zeros where the buffer grew, else what was there).

    Returns
    -------
    buf : ndarray
        The buffer (the same object, resized to the new window).
    window : ndarray
        The new window ``(n_fields, n_nodes, steps)``, a view of ``buf``.

    Examples
    --------
    >>> buf = np.arange(8.0)  # (1, 2, 4)
    >>> buf, win = slide_window(buf, 1, 2, 4, drop=1, steps=5)
    >>> win[0, :, :3].tolist()
    [[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]]
    """
    rows = n_fields * n_nodes
    if not (0 <= drop <= old_steps and old_steps - drop <= steps):
        raise ValueError(
            f"a window of {old_steps} steps cannot drop {drop} and keep the rest in {steps}"
        )
    if buf.size < rows * old_steps or not buf.flags.owndata:
        raise ValueError(
            f"buf must own its memory and hold the window's {rows * old_steps} values "
            f"(it holds {buf.size}; owns it: {bool(buf.flags.owndata)})"
        )
    if steps > old_steps:  # grown first (mremap: no copy), then the rows spread out
        buf.resize(rows * steps, refcheck=False)
    shift_rows(buf, rows, old_steps, drop, steps)
    if steps < old_steps:  # the rows closed up first, then the tail given back
        buf.resize(rows * steps, refcheck=False)
    return buf, buf[: rows * steps].reshape(n_fields, n_nodes, steps)
