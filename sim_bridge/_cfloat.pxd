# Shared C helpers of the compiled extensions (inline, nothing to link).
from libc.math cimport floor, fmod


cdef inline double py_floordiv(double vx, double wx) noexcept nogil:
    """``vx // wx`` exactly as CPython (``float_floor_div``) and NumPy compute it for floats."""
    cdef double mod = fmod(vx, wx)
    cdef double div = (vx - mod) / wx
    cdef double floordiv
    if mod != 0.0:
        if (wx < 0) != (mod < 0):
            div -= 1.0
    if div != 0.0:
        floordiv = floor(div)
        if div - floordiv > 0.5:
            floordiv += 1.0
    else:
        floordiv = 0.0 * (vx / wx)
    return floordiv
