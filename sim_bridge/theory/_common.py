"""Validation helpers and a vectorised half-line quadrature shared by the theory modules."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__: list[str] = []

# 16-point Gauss-Legendre rule on [-1, 1], reused on every panel.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
# Tail levels for the panel break points: 10**(-k/4), k = 0..64 (down to 1e-16).
_TAIL_LEVELS = 10.0 ** (-np.arange(0, 65) / 4.0)


def check_probability(name: str, value: float, *, low_open: bool, high_open: bool) -> float:
    """Return ``value`` as a float in the requested interval or raise ``ValueError``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    lo_ok = v > 0.0 if low_open else v >= 0.0
    hi_ok = v < 1.0 if high_open else v <= 1.0
    if not (np.isfinite(v) and lo_ok and hi_ok):
        lo = "(0" if low_open else "[0"
        hi = "1)" if high_open else "1]"
        raise ValueError(f"{name} must lie in {lo}, {hi}, got {value!r}")
    return v


def check_int(name: str, value: Any, *, minimum: int) -> int:
    """Return ``value`` as an int ``>= minimum`` or raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_positive(name: str, value: float) -> float:
    """Return ``value`` as a finite float ``> 0`` or raise ``ValueError``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not (np.isfinite(v) and v > 0.0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return v


def frozen_params(dist: Any) -> tuple[str, dict[str, float], float, float]:
    """Split a frozen scipy distribution into ``(name, shapes, loc, scale)``.

    Raises ``ValueError`` when ``dist`` is not a frozen ``scipy.stats`` distribution.
    """
    gen = getattr(dist, "dist", None)
    if gen is None or not hasattr(dist, "sf") or not hasattr(dist, "ppf"):
        raise ValueError(
            f"dist must be a frozen scipy.stats distribution, got {type(dist).__name__}"
        )
    shape_names = [s.strip() for s in (gen.shapes or "").split(",") if s.strip()]
    args = list(getattr(dist, "args", ()))
    kwds = dict(getattr(dist, "kwds", {}))
    names = [*shape_names, "loc", "scale"]
    values: dict[str, float] = {"loc": 0.0, "scale": 1.0}
    for nm, val in zip(names, args, strict=False):
        values[nm] = float(val)
    for nm, val in kwds.items():
        values[nm] = float(val)
    shapes = {nm: values[nm] for nm in shape_names if nm in values}
    return gen.name, shapes, values["loc"], values["scale"]


def check_time_distribution(dist: Any) -> tuple[float, float]:
    """Check that ``dist`` is a frozen continuous scipy distribution on ``[0, inf)``.

    Returns the support ``(lower, upper)``.
    """
    frozen_params(dist)
    lower, upper = (float(v) for v in dist.support())
    if not (lower >= 0.0):
        raise ValueError(
            f"dist must be a task-time distribution with support in [0, inf), "
            f"got lower support {lower!r}"
        )
    return lower, upper


def half_line_rule(breaks: np.ndarray, upper: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights for ``int_0^upper g(y) dy`` (``upper`` may be ``inf``).

    Composite 16-point Gauss-Legendre on the panels between the sorted, unique,
    finite ``breaks`` (which must start at 0); when ``upper`` is infinite the last panel
    ``[B, inf)`` is mapped by ``y = B / s``, ``s`` in ``(0, 1]``, which keeps polynomial
    tails (Pareto) smooth.
    """
    b = np.unique(np.asarray(breaks, dtype=float))
    b = b[np.isfinite(b) & (b >= 0.0) & (b <= upper)]
    if b.size == 0 or b[0] != 0.0:
        b = np.concatenate([[0.0], b])
    if np.isfinite(upper) and b[-1] < upper:
        b = np.concatenate([b, [upper]])
    a0, a1 = b[:-1], b[1:]
    mid, half = (a0 + a1) / 2.0, (a1 - a0) / 2.0
    y = (mid[:, None] + half[:, None] * _GL_X).ravel()
    w = (half[:, None] * _GL_W).ravel()
    if not np.isfinite(upper):
        big = b[-1] if b[-1] > 0 else 1.0
        s = (1.0 + _GL_X) / 2.0
        y = np.concatenate([y, big / s])
        w = np.concatenate([w, (_GL_W / 2.0) * big / s**2])
    return y, w


def tail_breaks(dist: Any, shifts: np.ndarray | tuple[float, ...] = ()) -> np.ndarray:
    """Panel break points for integrals of tails of ``dist`` and of its residuals.

    Uses the quantiles ``dist.isf(10**(-k/4))`` (k = 0..64), the lower support, and for
    each ``t`` in ``shifts`` the quantiles of the residual ``X - t | X > t``.
    """
    lower, _ = dist.support()
    pts = [np.array([0.0, float(lower)]), np.asarray(dist.isf(_TAIL_LEVELS), dtype=float)]
    for t in np.atleast_1d(np.asarray(shifts, dtype=float)):
        st = float(dist.sf(t))
        if st > 0.0:
            pts.append(np.asarray(dist.isf(_TAIL_LEVELS * st), dtype=float) - t)
    out = np.concatenate(pts)
    return out[np.isfinite(out) & (out >= 0.0)]
