"""pipelines._selection.select_point: the one validation loop of evaluate and compare."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pipelines._estimators import make_estimator
from pipelines._grid import grid_points
from pipelines._metrics import binary_metrics
from pipelines._selection import select_point


def _data(seed: int, n: int = 300):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "node": rng.choice(["a", "b", "c"], n),
            "workload": rng.choice(["w", "v"], n),
            "c_cpu": rng.normal(size=n),
            "c_io": rng.normal(size=n),
        }
    )
    z = X["c_cpu"] + 0.5 * (X["node"] == "a") * X["c_io"] + rng.normal(size=n)
    return X, (z > 0.8).to_numpy(dtype=int)


SPACE = {"lambda0": [0.1, 100.0], "nu": [1.0, 1000.0], "omega": [10.0], "threshold": [0.3, 0.5]}


def _slow(model, X, y, fit, val, space, metric):
    """Every (regulariser set, threshold) scored from its own fit, best by a plain max."""
    rows = []
    regs = {k: v for k, v in space.items() if k != "threshold"}
    for i, reg in enumerate(grid_points(regs)):
        for j, thr in enumerate(space["threshold"]):
            est = make_estimator(model, reg, 0).fit(X.iloc[fit], y[fit])
            p = est.predict_proba(X.iloc[val])[:, 1]
            rows.append((binary_metrics(y[val], p, thr)[metric], -i, -j, {**reg, "threshold": thr}))
    return max(rows, key=lambda r: r[:3])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accuracy_choice_matches_an_exhaustive_search(seed):
    X, y = _data(seed)
    fit, val = np.arange(200), np.arange(200, 300)
    sel = select_point("f0nl", X, y, fit, val, SPACE, metric="accuracy")
    score, _, _, point = _slow("f0nl", X, y, fit, val, SPACE, "accuracy")
    assert sel.point == point and sel.score == pytest.approx(score)
    assert sel.fits == 4  # thresholds share each fit


@pytest.mark.parametrize("seed", [0, 3])
def test_threshold_free_metric_ranks_regularisers_and_keeps_the_first_threshold(seed):
    X, y = _data(seed)
    fit, val = np.arange(200), np.arange(200, 300)
    sel = select_point("f0nl", X, y, fit, val, SPACE, metric="roc_auc")
    only_first = {**SPACE, "threshold": SPACE["threshold"][:1]}
    score, _, _, point = _slow("f0nl", X, y, fit, val, only_first, "roc_auc")
    assert sel.point == point and sel.score == pytest.approx(score)
    est = make_estimator("f0nl", sel.point, 0).fit(X.iloc[fit], y[fit])
    np.testing.assert_array_equal(sel.proba, est.predict_proba(X.iloc[val])[:, 1])


def test_one_class_validation_under_roc_auc_keeps_the_first_point_without_fitting():
    X, y = _data(0)
    y = y.copy()
    val = np.flatnonzero(y == 0)[-50:]
    fit = np.setdiff1d(np.arange(len(y)), val)
    sel = select_point("f0nl", X, y, fit, val, SPACE, metric="roc_auc")
    assert sel.fits == 0 and math.isnan(sel.score) and sel.proba is None
    assert sel.point == {"lambda0": 0.1, "nu": 1.0, "omega": 10.0, "threshold": 0.3}


def test_ties_go_to_the_first_point_in_grid_order():
    X, y = _data(4)
    fit, val = np.arange(200), np.arange(200, 300)
    same = {"lambda0": [1.0, 1.0], "nu": [2.0, 3.0], "threshold": [0.5]}  # f0: nu unused
    sel = select_point("f0", X, y, fit, val, same, metric="roc_auc")
    assert sel.fits == 4 and sel.point["nu"] == 2.0  # four equal scores: the first wins


def test_candidates_that_collapse_do_not_warn():
    """A grid point whose regularisers zero every weight is a candidate the search passes
    over: selecting must not raise DegenerateModelWarning for it (the estimator itself does)."""
    import warnings

    from mtl import DegenerateModelWarning

    X, y = _data(5)
    fit, val = np.arange(200), np.arange(200, 300)
    space = {"lambda0": [1.0, 1e8], "threshold": [0.5]}
    with pytest.warns(DegenerateModelWarning):
        make_estimator("f0", {"lambda0": 1e8}, 0).fit(X.iloc[fit], y[fit])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        sel = select_point("f0", X, y, fit, val, space, metric="accuracy")
    assert sel.fits == 2
