# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Kernels of the contention paths computed in C, one pass over a block, bit for bit.

A new block of background levels (a day of every node's four resources) goes through an
AR(1) recursion per row (:func:`sim_bridge.world._persistence.ar1_inplace`), the logistic
map to levels (``scipy.special.expit``, :func:`expit_inplace`, :func:`expit_rows_inplace`
for a view of the window) and the convex response
(:func:`sim_bridge.world.contention_response`, in ``Cluster._response``); in NumPy the first
takes a Python step per column, the last several full-size temporaries, and the logistic map
imports ``scipy.special`` (~28 MB resident, for one function). These kernels do the same IEEE
operations in the same order (one rounding per product and per sum: built without fused
multiply-add; ``exp`` from the C library, as SciPy's ``expit`` calls it), so the values are
those of the references exactly (``tests/test_compiled_interference_paths.py`` checks it).
"""

import numpy as np

from libc.math cimport exp
from libc.string cimport memmove


def ar1_rows(double[:, ::1] x, const double[::1] a, const double[::1] start) -> None:
    """``x[i, k] = a[i] * x[i, k - 1] + x[i, k]`` in place, from ``x[i, -1] = start[i]``."""
    cdef Py_ssize_t rows = x.shape[0], steps = x.shape[1], i, k
    cdef double p, ai
    if a.shape[0] != rows or start.shape[0] != rows:
        raise ValueError(f"a and start need {rows} values, got {a.shape[0]} and {start.shape[0]}")
    with nogil:
        for i in range(rows):
            p = start[i]
            ai = a[i]
            for k in range(steps):
                p = ai * p + x[i, k]
                x[i, k] = p


def expit_inplace(double[::1] x) -> None:
    """``x[i] = 1 / (1 + exp(-x[i]))`` in place: ``scipy.special.expit``'s formula."""
    cdef Py_ssize_t n = x.shape[0], i
    with nogil:
        for i in range(n):
            x[i] = 1.0 / (1.0 + exp(-x[i]))


def expit_rows_inplace(double[:, :] x) -> None:
    """:func:`expit_inplace` of every row of ``x``, in place, whatever its strides (a block
    drawn into the paths' window is a view whose rows are apart by more than their steps)."""
    cdef Py_ssize_t rows = x.shape[0], steps = x.shape[1], i, k
    with nogil:
        for i in range(rows):
            for k in range(steps):
                x[i, k] = 1.0 / (1.0 + exp(-x[i, k]))


def response(level, double eps):
    """``phi = clip(level, 0, 1) / (1 - clip(level, 0, 1) + eps)`` of a float64 array, as a
    new array of its shape."""
    cdef const double[::1] src = np.ascontiguousarray(level, dtype=np.float64).reshape(-1)
    out = np.empty(np.shape(level), dtype=np.float64)
    cdef double[::1] dst = out.reshape(-1)
    cdef Py_ssize_t n = src.shape[0], i
    cdef double x
    with nogil:
        for i in range(n):
            x = src[i]
            if x < 0.0:
                x = 0.0
            elif x > 1.0:
                x = 1.0
            dst[i] = x / (1.0 - x + eps)
    return out


def shift_rows(
    double[::1] buf, Py_ssize_t rows, Py_ssize_t old_steps, Py_ssize_t drop, Py_ssize_t new_steps
) -> None:
    """Row ``r``'s values ``buf[r * old_steps + drop : (r + 1) * old_steps]`` moved to
    ``buf[r * new_steps :]`` in place, one ``memmove`` a row (the caller checks the sizes:
    :func:`sim_bridge._path_window.shift_rows`). The rows that move right go first, the last
    of them first, then the others, the first first: no row overwrites values not yet moved."""
    cdef Py_ssize_t keep = old_steps - drop, r, first_right
    cdef double* base = &buf[0] if buf.shape[0] else NULL
    if keep <= 0 or base == NULL or (drop == 0 and old_steps == new_steps):
        return
    with nogil:
        first_right = rows  # r * (new - old) > drop from here on (it grows with r, or never)
        if new_steps > old_steps:
            first_right = drop // (new_steps - old_steps) + 1
            if first_right > rows:
                first_right = rows
        r = rows - 1
        while r >= first_right:
            memmove(base + r * new_steps, base + r * old_steps + drop, keep * sizeof(double))
            r -= 1
        for r in range(first_right):
            memmove(base + r * new_steps, base + r * old_steps + drop, keep * sizeof(double))
