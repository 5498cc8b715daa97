"""``exp``, ``log``, ``cos`` and ``power`` that give the same bits on x86-64 machines with FMA.

The simulated world draws from a seed, and its tables should not depend on the machine that
runs it: a sweep spread over a Dask cluster of mixed CPUs must give the tables one machine
gives. NumPy's ``exp``, ``log``, ``cos`` and ``power`` do not: NumPy picks an AVX-512
implementation at run time where the CPU has it, and its last bits differ from the AVX2
path's (one seed's task table differed between the two). These functions call the C
library's instead, element by element: in C with the extension ``sim_bridge._libm_core``,
else through :mod:`math`, which calls the same functions (the same values, slower).

What stays machine-dependent: the C library itself. glibc picks an FMA build of these
functions on CPUs with FMA (x86-64 since 2013: Haswell, Zen) and a plain one on older CPUs,
and their last bits differ; other C libraries and other architectures have their own. So the
tables are the same on x86-64 machines with FMA, with or without AVX-512, running the same
glibc (``tests/test_same_tables_on_any_cpu.py`` runs replays both ways).

Examples
--------
>>> import math
>>> import numpy as np
>>> exp(np.array([0.0, 1.0])).tolist() == [1.0, math.exp(1.0)]
True
>>> log(np.array([[1.0, 0.0, -1.0]])).tolist()
[[0.0, -inf, nan]]
>>> float(power(np.array(8.0), -1.0 / 3.0)) == math.pow(8.0, -1.0 / 3.0)
True
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

try:  # built by setup.py; optional (the fallback below gives the same values)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    import sim_bridge._libm_core as _libm_core
except ImportError:  # pragma: no cover - exercised only on installs without the extension
    _libm_core = None

__all__ = [
    "cos",
    "cos_scalar",
    "exp",
    "exp_scalar",
    "log",
    "log_scalar",
    "power",
    "pow_scalar",
]


def exp_scalar(x: float) -> float:
    """:func:`exp` of one float (the C library's, ``inf`` past its range).

    Examples
    --------
    >>> exp_scalar(0.0), exp_scalar(1000.0)
    (1.0, inf)
    """
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def log_scalar(x: float) -> float:
    """:func:`log` of one float (``-inf`` at 0, NaN below).

    Examples
    --------
    >>> log_scalar(1.0), log_scalar(0.0)
    (0.0, -inf)
    """
    if x > 0.0 or x != x:
        return math.log(x)
    return -math.inf if x == 0.0 else math.nan


def cos_scalar(x: float) -> float:
    """:func:`cos` of one float (NaN at infinities).

    Examples
    --------
    >>> cos_scalar(0.0)
    1.0
    """
    return math.cos(x) if math.isfinite(x) else math.nan


def _odd_integer(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2.0) != 0.0


def pow_scalar(x: float, y: float) -> float:
    """:func:`power` of one pair of floats: C's ``pow``, where :func:`math.pow` would raise.

    Examples
    --------
    >>> pow_scalar(4.0, 0.5), pow_scalar(0.0, -1.0)
    (2.0, inf)
    """
    try:
        return math.pow(x, y)
    except OverflowError:  # C's pow: +-inf, negative for a negative base to an odd power
        return -math.inf if x < 0.0 and _odd_integer(y) else math.inf
    except ValueError:  # a zero to a negative power (+-inf), or a negative base (NaN)
        if x == 0.0:
            return math.copysign(math.inf, x) if _odd_integer(y) else math.inf
        return math.nan


def _each(f: Callable[..., float], *xs: ArrayLike) -> np.ndarray:
    arrays = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in xs))
    flat = [a.reshape(-1).tolist() for a in arrays]
    out = np.fromiter(map(f, *flat), dtype=np.float64, count=arrays[0].size)
    return out.reshape(arrays[0].shape)


def exp(x: ArrayLike) -> np.ndarray:
    """``e ** x`` element by element, as a new float64 array of ``x``'s shape.

    Parameters
    ----------
    x : array_like

    Returns
    -------
    ndarray
        The C library's ``exp`` of each element (``inf`` past its range).

    Examples
    --------
    >>> exp([0.0, 1000.0]).tolist()
    [1.0, inf]
    """
    if _libm_core is not None:
        return _libm_core.exp(x)
    return _each(exp_scalar, x)


def log(x: ArrayLike) -> np.ndarray:
    """The natural logarithm element by element (``-inf`` at 0, NaN below), as a new array.

    Examples
    --------
    >>> log([1.0, 0.0]).tolist()
    [0.0, -inf]
    """
    if _libm_core is not None:
        return _libm_core.log(x)
    return _each(log_scalar, x)


def cos(x: ArrayLike) -> np.ndarray:
    """The cosine element by element (NaN at infinities), as a new float64 array.

    Examples
    --------
    >>> cos([0.0]).tolist()
    [1.0]
    """
    if _libm_core is not None:
        return _libm_core.cos(x)
    return _each(cos_scalar, x)


def power(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """``x ** y`` element by element, ``x`` and ``y`` broadcast, as a new float64 array (the C
    library's ``pow``: ``inf`` for a zero to a negative power, NaN for a negative base to a
    non-integer one).

    Examples
    --------
    >>> power([4.0, 0.0], [0.5, -1.0]).tolist()
    [2.0, inf]
    """
    if _libm_core is not None:
        return _libm_core.power(x, y)
    return _each(pow_scalar, x, y)
