# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The C library's ``exp``, ``log``, ``cos`` and ``pow`` over float64 arrays, element by element
(optional extension; ``sim_bridge._portable_math`` is the interface and the fallback).

NumPy's own ``exp``, ``log``, ``cos`` and ``power`` take SIMD paths chosen by the CPU at run
time (AVX-512 or not), whose last bits differ from each other's and from the C library's.
These loops call the functions CPython's :mod:`math` calls, so a value does not depend on
which vector unit the machine has.
"""

from libc.math cimport cos as c_cos, exp as c_exp, log as c_log, pow as c_pow

import numpy as np


cdef enum:
    F_EXP, F_LOG, F_COS


cdef object _unary(object x, int f):
    cdef object a = np.array(x, dtype=np.float64, order="C", copy=True)
    cdef double[::1] v = a.reshape(-1)
    cdef Py_ssize_t i, n = v.shape[0]
    with nogil:
        if f == F_EXP:
            for i in range(n):
                v[i] = c_exp(v[i])
        elif f == F_LOG:
            for i in range(n):
                v[i] = c_log(v[i])
        else:
            for i in range(n):
                v[i] = c_cos(v[i])
    return a


def exp(x):
    """``exp`` of every element of ``x``, as a new float64 array of its shape."""
    return _unary(x, F_EXP)


def log(x):
    """``log`` of every element of ``x``, as a new float64 array of its shape."""
    return _unary(x, F_LOG)


def cos(x):
    """``cos`` of every element of ``x``, as a new float64 array of its shape."""
    return _unary(x, F_COS)


def power(x, y):
    """``pow(x, y)`` element by element, ``x`` and ``y`` broadcast, as a new float64 array."""
    bx, by = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    cdef object a = np.array(bx, dtype=np.float64, order="C", copy=True)
    cdef object b = np.ascontiguousarray(by, dtype=np.float64)
    cdef double[::1] v = a.reshape(-1)
    cdef const double[::1] w = b.reshape(-1)
    cdef Py_ssize_t i, n = v.shape[0]
    with nogil:
        for i in range(n):
            v[i] = c_pow(v[i], w[i])
    return a
