"""The world's arithmetic that must not depend on the CPU: ``sim_bridge._portable_math`` (the C
library's exp, log, cos and pow, compiled or through :mod:`math`) and the co-tenant load sum
(:func:`sim_bridge.world.contention_load`).

Oracles: :mod:`math`, which calls the same C functions one value at a time, and the scalar
load loop of ``Cluster._rate_with_py``. ``tests/test_same_tables_on_any_cpu.py`` runs whole
replays under other CPU paths.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sim_bridge import _portable_math as pm
from sim_bridge.world import contention_load, contention_response

FALLBACKS = {"exp": pm.exp_scalar, "log": pm.log_scalar, "cos": pm.cos_scalar}
SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e-310, 710.0, -750.0, 1e300]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bits, NaN matching NaN of either sign (C's log(-1) is -NaN, math's +NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    nan = np.isnan(a)
    return (
        a.shape == b.shape
        and bool((nan == np.isnan(b)).all())
        and bool((a[~nan].view(np.int64) == b[~nan].view(np.int64)).all())
    )


floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
shapes = hnp.array_shapes(min_dims=0, max_dims=3, max_side=5)
arrays = hnp.arrays(np.float64, shapes, elements=floats)


@pytest.mark.parametrize("name", ["exp", "log", "cos"])
@settings(max_examples=60, deadline=None)
@given(x=arrays)
def test_each_function_is_maths_value_by_value(name, x):
    """The compiled loop (when built) and the fallback both give :mod:`math`'s value for every
    element, specials included, in ``x``'s shape."""
    got = getattr(pm, name)(x)
    want = np.array([FALLBACKS[name](float(v)) for v in x.reshape(-1)]).reshape(x.shape)
    assert got.dtype == np.float64 and _same(got, want)
    assert _same(pm._each(FALLBACKS[name], x), want)


@settings(max_examples=60, deadline=None)
@given(x=arrays, y=st.one_of(floats, st.sampled_from([-3.0, -1.0, -0.5, 0.5, 2.0, 3.0])))
def test_power_is_maths_pow_value_by_value(x, y):
    """``power`` broadcasts ``y`` and gives C's ``pow`` (what :func:`math.pow` returns, or
    the infinity or NaN it raises for instead)."""
    got = pm.power(x, y)
    want = np.array([pm.pow_scalar(float(v), y) for v in x.reshape(-1)]).reshape(x.shape)
    assert _same(got, want) and _same(pm._each(pm.pow_scalar, x, y), want)


def test_specials_take_cs_values():
    """The fallback's special cases are C's: overflow to infinity, log of 0 and of a negative
    number, cosine of an infinity, a zero to a negative power, a negative base."""
    x = np.array(SPECIAL)
    assert pm.exp(np.array([1000.0, -1000.0])).tolist() == [math.inf, 0.0]
    assert pm.log(np.array([0.0, -0.0])).tolist() == [-math.inf, -math.inf]
    assert np.isnan(pm.log(np.array([-1.0]))[0]) and np.isnan(pm.cos(np.array([math.inf]))[0])
    zeros = pm.power(np.array([0.0, -0.0, -0.0]), np.array([-1.0, -1.0, -2.0]))
    assert zeros.tolist() == [math.inf, -math.inf, math.inf]
    assert np.isnan(pm.power(np.array([-8.0]), 1 / 3)[0])
    assert pm.power(np.array([-10.0, 10.0]), 309.0).tolist() == [-math.inf, math.inf]
    for name, f in FALLBACKS.items():
        assert _same(getattr(pm, name)(x), np.array([f(v) for v in SPECIAL]))


def test_the_results_are_new_arrays():
    """An input is never written: every function returns a new array."""
    x = np.array([0.5, 2.0])
    for f in (pm.exp, pm.log, pm.cos):
        out = f(x)
        assert out is not x and x.tolist() == [0.5, 2.0]
    assert pm.power(x, 2.0) is not x and x.tolist() == [0.5, 2.0]


@settings(max_examples=80, deadline=None)
@given(
    w=hnp.arrays(np.float64, 4, elements=st.floats(0.0, 50.0)),
    levels=hnp.arrays(
        np.float64,
        st.tuples(st.just(4), st.integers(1, 40)),
        elements=st.floats(-0.5, 1.5),
    ),
)
def test_contention_load_is_the_scalar_loop(w, levels):
    """Every step's load is ``load = 0.0; load += w[r] * phi[r]`` in resource order, as the
    per-step rate sums it (a BLAS ``w @ phi`` rounds by the CPU's kernel)."""
    phi = contention_response(np.minimum(levels, 1.0))
    got = contention_load(w, phi)
    for k in range(levels.shape[1]):
        load = 0.0
        for r in range(4):
            load += float(w[r]) * float(phi[r, k])
        assert got[k] == load
