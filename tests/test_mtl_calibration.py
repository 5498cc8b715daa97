"""Platt scaling against a brute-force optimiser, and calibration quality of the estimators."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit, log_expit

from mtl import GroupedMTLSVC, WranglerSVC, make_grouped_classification
from mtl._calibration import fit_platt


def _platt_nll(params, s, y):
    n_pos, n_neg = y.sum(), (1 - y).sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    f = params[0] * s + params[1]
    return -(t * log_expit(f) + (1 - t) * log_expit(-f)).sum()


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    slope=st.floats(0.2, 5.0),
    shift=st.floats(-2, 2),
    spread=st.floats(0.1, 50.0),
)
def test_platt_matches_brute_force(seed, slope, shift, spread):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=300) * spread
    y = (rng.random(300) < 1 / (1 + np.exp(-(slope * s / spread + shift)))).astype(int)
    if y.min() == y.max():
        return
    a, c = fit_platt(s, y)
    ref = minimize(
        _platt_nll,
        [1 / spread, 0.0],
        args=(s, y),
        method="Nelder-Mead",
        options={"xatol": 1e-9, "fatol": 1e-10, "maxiter": 5000},
    )
    assert a > 0
    if ref.x[0] <= 0:  # the optimum needs a negative slope: ours sits on the floor instead
        assert a < 1e-6
        ref = minimize_scalar(lambda cc: _platt_nll([0.0, cc], s, y))
    assert _platt_nll([a, c], s, y) <= ref.fun + 1e-7 * max(1.0, abs(ref.fun))


def test_platt_slope_stays_positive_for_anticorrelated_scores():
    rng = np.random.default_rng(0)
    s = rng.normal(size=400)
    y = (s < 0).astype(int)
    a, c = fit_platt(s, y)
    assert 0 < a < 1e-6
    # with the slope at its floor the intercept is the smoothed base rate's log-odds
    rate = (y.sum() + 1) / (len(y) + 2)
    assert 1 / (1 + np.exp(-c)) == pytest.approx(rate, abs=1e-3)


@pytest.mark.parametrize("make", [lambda: GroupedMTLSVC(), lambda: WranglerSVC()])
def test_cross_fitted_probabilities_are_calibrated_on_new_data(make):
    X, y = make_grouped_classification(8000, 4, 2, 6, noise=1.0, seed=4)
    est = make().fit(X[:4000], y[:4000])
    p = est.predict_proba(X[4000:])[:, 1]
    yt = y[4000:]
    assert p.mean() == pytest.approx(yt.mean(), abs=0.03)
    bins = np.minimum((p * 10).astype(int), 9)
    ece = sum(
        abs(p[bins == b].mean() - yt[bins == b].mean()) * (bins == b).mean()
        for b in np.unique(bins)
    )
    assert ece < 0.05

    def log_loss(q):
        return -np.mean(yt * np.log(q) + (1 - yt) * np.log(1 - q))

    # better than squashing the raw margin
    assert log_loss(p) < log_loss(expit(est.margin(X[4000:]))) - 0.02
