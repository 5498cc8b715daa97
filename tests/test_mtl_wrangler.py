"""WranglerSVC: per-pair SVM oracle, insufficient data, fallbacks, and MTL versus Wrangler."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from sklearn.metrics import accuracy_score
from sklearn.svm import LinearSVC

from mtl import GroupedMTLSVC, WranglerSVC, make_grouped_classification


def _cols(X):
    return [c for c in X.columns if c.startswith("c_")]


@pytest.fixture(scope="module")
def sparse_pairs():
    """n0/w1 has 4 rows, n1/w0 only negatives, the rest plenty."""
    X, y = make_grouped_classification(1500, 3, 2, 4, seed=8)
    thin = ((X.node == "n0") & (X.workload == "w1")).to_numpy()
    keep = ~thin
    keep[np.flatnonzero(thin)[:4]] = True
    one = ((X.node == "n1") & (X.workload == "w0")).to_numpy()
    y = np.where(one, 0, y)
    return X[keep].reset_index(drop=True), y[keep]


def test_each_pair_is_an_independent_linear_svc(sparse_pairs):
    X, y = sparse_pairs
    m = WranglerSVC(calibration_cv=None).fit(X, y)
    Xs = (X[_cols(X)].to_numpy() - m.mean_) / m.scale_
    margin = m.margin(X)
    for (n, l), w in m.pair_weights_.items():
        rows = ((X.node == n) & (X.workload == l)).to_numpy()
        ref = LinearSVC(class_weight="balanced").fit(Xs[rows], y[rows])
        np.testing.assert_allclose(margin[rows], ref.decision_function(Xs[rows]), atol=1e-8)
        np.testing.assert_allclose(w * m.scale_, ref.coef_.ravel(), atol=1e-10)


def test_insufficient_pairs_recorded_and_fall_back(sparse_pairs):
    X, y = sparse_pairs
    m = WranglerSVC().fit(X, y)
    assert m.insufficient_pairs_ == {("n0", "w1"): "too_few_rows", ("n1", "w0"): "one_class"}
    status = m.pair_status(X)
    thin = ((X.node == "n0") & (X.workload == "w1")).to_numpy()
    one = ((X.node == "n1") & (X.workload == "w0")).to_numpy()
    assert (status[thin] == "too_few_rows").all() and (status[one] == "one_class").all()
    assert (status[~(thin | one)] == "model").all()
    np.testing.assert_array_equal(m.is_supported(X), ~(thin | one))
    # fallback rows use the global model
    x = X[_cols(X)].to_numpy()[thin | one]
    z = (x - m.mean_) @ m.fallback_weights_ + m.fallback_intercept_
    a, c = m.fallback_calibration_
    np.testing.assert_allclose(m.predict_proba(X)[thin | one, 1], expit(a * z + c), rtol=1e-10)
    unseen = X.head(3).assign(node="n7")
    assert m.pair_status(unseen).tolist() == ["unseen"] * 3
    np.testing.assert_allclose(m.margin(unseen), m.margin(X.head(3).assign(workload="zz")))


def test_prior_fallback_is_the_training_rate(sparse_pairs):
    X, y = sparse_pairs
    m = WranglerSVC(fallback="prior").fit(X, y)
    p = m.predict_proba(X.head(2).assign(node="nope"))[:, 1]
    np.testing.assert_allclose(p, (y.sum() + 1) / (len(y) + 2))


def test_task_only_mtl_equals_wrangler_up_to_regularisation_mapping():
    """tau/T ||v||^2 + C sum l  <->  LinearSVC(C' = C T / (2 tau)), on symmetrised data."""
    X, y = make_grouped_classification(300, 3, 2, 4, seed=5)
    cols = _cols(X)
    Z = X[cols].to_numpy()
    Z = Z - Z.mean(axis=0)
    Xsym = pd.concat(
        [
            X.assign(**{c: Z[:, j] for j, c in enumerate(cols)}),
            X.assign(**{c: -Z[:, j] for j, c in enumerate(cols)}),
        ],
        ignore_index=True,
    )
    ysym = np.concatenate([y, 1 - y])
    tau, C = 2.0, 1.0
    mtl = GroupedMTLSVC(
        variant="f0t", lambda0=np.inf, tau=tau, C=C, tol=1e-10, calibration_cv=None
    ).fit(Xsym, ysym)
    T = len(mtl.task_weights_)
    wr = WranglerSVC(
        C=C * T / (2 * tau),
        class_weight=None,
        calibration_cv=None,
        intercept_scaling=1e3,
        tol=1e-10,
        max_iter=100000,
    ).fit(Xsym, ysym)
    assert wr.insufficient_pairs_ == {}
    np.testing.assert_allclose(mtl.margin(Xsym), wr.margin(Xsym), atol=1e-3)
    for pair, v in mtl.task_weights_.items():
        np.testing.assert_allclose(v, wr.pair_weights_[pair], atol=1e-3 / wr.scale_.min())


def test_mtl_beats_wrangler_with_few_rows_per_pair():
    X, y = make_grouped_classification(
        12000, 10, 4, 10, node_scale=0.8, workload_scale=0.8, task_scale=0.2, noise=0.3, seed=21
    )
    rng = np.random.default_rng(0)
    train = np.zeros(len(y), dtype=bool)
    for _, idx in X.groupby(["node", "workload"]).indices.items():
        train[rng.choice(idx, 12, replace=False)] = True  # 12 rows per pair
    test = ~train
    wr = WranglerSVC(min_rows=5).fit(X[train], y[train])
    acc_wr = accuracy_score(y[test], wr.predict(X[test]))
    for variant in ["f0nl", "f0tl"]:
        m = GroupedMTLSVC(variant=variant).fit(X[train], y[train])
        acc = accuracy_score(y[test], m.predict(X[test]))
        assert acc > acc_wr + 0.05, (variant, acc, acc_wr)


def test_bad_params(sparse_pairs):
    X, y = sparse_pairs
    for params, match in [
        ({"min_rows": 1}, "min_rows"),
        ({"fallback": "mean"}, "fallback"),
        ({"C": 0}, "C"),
        ({"loss": "log"}, "loss"),
    ]:
        with pytest.raises(ValueError, match=match):
            WranglerSVC(**params).fit(X, y)
