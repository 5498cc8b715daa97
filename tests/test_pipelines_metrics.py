"""Metrics against scikit-learn, grid parsing, deterministic choice of the best grid point."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from pipelines._grid import grid_points, load_grid, point_key, variant_grid
from pipelines._metrics import binary_metrics, confusion, per_pair_metrics
from pipelines._study import best_point


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9])),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([0.2, 0.5, 0.8]),
)
def test_binary_metrics_match_sklearn(pairs, thr):
    y = np.array([a for a, _ in pairs])
    p = np.array([b for _, b in pairs])
    pred = (p > thr).astype(int)
    m = binary_metrics(y, p, thr)
    assert m["accuracy"] == pytest.approx(skm.accuracy_score(y, pred))
    for name, fn in (
        ("precision", skm.precision_score),
        ("recall", skm.recall_score),
        ("f1", skm.f1_score),
    ):
        want = fn(y, pred, zero_division=np.nan)
        assert (math.isnan(m[name]) and math.isnan(want)) or m[name] == pytest.approx(want), name
    if len(set(y.tolist())) == 2:
        assert m["roc_auc"] == pytest.approx(skm.roc_auc_score(y, p))
        tn, fp, fn_, tp = skm.confusion_matrix(y, pred, labels=[0, 1]).ravel()
        assert m["fpr"] == pytest.approx(fp / (fp + tn)) if fp + tn else math.isnan(m["fpr"])
    else:
        assert math.isnan(m["roc_auc"])
    np.testing.assert_array_equal(
        confusion(y, p, thr), skm.confusion_matrix(y, pred, labels=[0, 1])
    )


def test_per_pair_metrics_loop():
    rng = np.random.default_rng(0)
    f = pd.DataFrame({"node": rng.choice(["a", "b"], 50), "workload": rng.choice(["W", "V"], 50)})
    y, p = rng.integers(0, 2, 50), rng.random(50)
    got = per_pair_metrics(f, y, p, 0.5)
    for r in got.to_dict("records"):
        mask = ((f.node == r["node"]) & (f.workload == r["workload"])).to_numpy()
        assert r["accuracy"] == pytest.approx(skm.accuracy_score(y[mask], p[mask] > 0.5))
        assert r["rows"] == mask.sum()
    assert got["rows"].sum() == 50


def test_metrics_shape_mismatch():
    with pytest.raises(ValueError, match="differ in shape"):
        binary_metrics([0, 1], [0.5])


def test_grid_files(tmp_path):
    g = load_grid("default")
    space = variant_grid(g, ("w0", "node", "workload"))
    assert list(space) == ["lambda0", "nu", "omega", "threshold"]
    assert len(grid_points(space)) == math.prod(len(v) for v in space.values())
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"tau": ["inf", 1], "threshold": [0.5]}))
    assert load_grid(p)["tau"] == [1.0, math.inf]
    for doc, msg in (
        ({"gamma": [1]}, "unknown key 'gamma'"),
        ({"nu": []}, "'nu' must be a non-empty list"),
        ({"threshold": [1.0]}, "'threshold' value 1.0 is not a number in \\(0, 1\\)"),
        ({"nu": ["x"]}, "'nu' value 'x' is not a positive number"),
    ):
        p.write_text(json.dumps(doc))
        with pytest.raises(ValueError, match=msg):
            load_grid(p)
    p.write_text("{nope")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_grid(p)


@settings(max_examples=40, deadline=None)
@given(
    st.permutations(list(range(6))), st.lists(st.sampled_from([0.5, 0.7]), min_size=6, max_size=6)
)
def test_best_point_independent_of_completion_order(order, values):
    points = grid_points({"lambda0": [0.1, 1.0, 10.0], "threshold": [0.4, 0.5]})
    rows = [{**points[i], "value": values[i]} for i in order]
    best = best_point(pd.DataFrame(rows), points)
    top = max(values)
    assert best == points[values.index(top)]  # the first grid point with the top value
    assert point_key(best) in {point_key(p) for p in points}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0])), min_size=2)
)
def test_pr_auc_is_sklearns_average_precision(rows):
    """The PR-AUC of binary_metrics equals scikit-learn's average precision, ties included."""
    from sklearn.metrics import average_precision_score

    y = np.array([r[0] for r in rows])
    s = np.array([r[1] for r in rows])
    got = binary_metrics(y, s)["pr_auc"]
    if y.sum() == 0:
        assert np.isnan(got)
    else:
        assert got == pytest.approx(average_precision_score(y, s), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9])),
        min_size=2,
        max_size=40,
    ),
    st.sampled_from([0.2, 0.5, 0.8]),
)
def test_balanced_accuracy_and_baselines(pairs, thr):
    """Balanced accuracy matches scikit-learn; the baselines are the class shares."""
    y = np.array([a for a, _ in pairs])
    p = np.array([b for _, b in pairs])
    m = binary_metrics(y, p, thr)
    assert m["positive_rate"] == pytest.approx(y.mean())
    assert m["majority_accuracy"] == pytest.approx(max(y.mean(), 1 - y.mean()))
    # the constant "majority" answer scores exactly the majority baseline
    const = np.full(len(y), 0.9 if y.mean() > 0.5 else 0.1)
    assert binary_metrics(y, const, 0.5)["accuracy"] == pytest.approx(m["majority_accuracy"])
    if 0 < y.sum() < len(y):
        want = skm.balanced_accuracy_score(y, (p > thr).astype(int))
        assert m["balanced_accuracy"] == pytest.approx(want)
        assert binary_metrics(y, const, 0.5)["balanced_accuracy"] == pytest.approx(0.5)
    else:
        assert math.isnan(m["balanced_accuracy"])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.floats(0.01, 0.99)), min_size=2, max_size=30),
    st.sampled_from(["balanced_accuracy", "f1"]),
)
def test_choose_threshold_is_optimal(pairs, rule):
    """No threshold on a fine grid beats the chosen one under the rule (brute-force oracle)."""
    from pipelines._metrics import choose_threshold

    y = np.array([a for a, _ in pairs])
    p = np.array([b for _, b in pairs])
    if not 0 < y.sum() < len(y):
        return
    t = choose_threshold(y, p, rule)
    assert 0 < t < 1
    got = binary_metrics(y, p, t)[rule]
    grid = np.r_[0.0005, p, p - 1e-9]  # every split of the rows
    vals = [binary_metrics(y, p, g)[rule] for g in grid]
    assert got >= np.nanmax(vals) - 1e-12


def test_choose_threshold_rejects_bad_rule():
    from pipelines._metrics import choose_threshold

    with pytest.raises(ValueError, match="rule"):
        choose_threshold([0, 1], [0.2, 0.8], rule="accuracy")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30), st.sampled_from([0.05, 0.1]))
def test_fdr_bh_against_the_step_up_definition(ps, alpha):
    """BH by its definition: reject the k smallest where k = max{i: p_(i) <= i alpha / m};
    adjusted values are monotone in p and never below p."""
    from pipelines._metrics import fdr_bh

    p = np.array(ps)
    adj, sig = fdr_bh(p, alpha)
    m = len(p)
    order = np.sort(p)
    ok = np.flatnonzero(order <= np.arange(1, m + 1) * alpha / m)
    # rejection at alpha uses adj <= alpha; fdr_bh reports adj < alpha, so compare off ties
    cut = order[ok[-1]] if ok.size else -1.0
    for pi, ai, si in zip(p, adj, sig, strict=True):
        assert ai >= pi - 1e-12 and ai <= 1.0
        if not np.isclose(ai, alpha):
            assert si == (pi <= cut)
    ranks = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[ranks]) >= -1e-12)


def test_fdr_bh_nan_and_holm_is_stricter():
    from pipelines._metrics import fdr_bh, holm

    p = [0.001, 0.02, 0.03, 0.04, float("nan")]
    adj, sig = fdr_bh(p)
    assert math.isnan(adj[-1]) and not sig[-1]
    h, _ = holm(p)
    assert np.all(adj[:4] <= h[:4] + 1e-12)


def test_metric_standard_errors_match_a_bootstrap():
    """The closed forms (binomial, Hanley-McNeil, delta-method AP) against a slow bootstrap
    of the same test rows: within 25% of the bootstrap's standard deviation."""
    from pipelines._metrics import binary_metrics, metric_standard_errors

    rng = np.random.default_rng(7)
    n = 1500
    y = (rng.random(n) < 0.25).astype(int)
    score = rng.normal(size=n) + 0.9 * y
    p = 1 / (1 + np.exp(-score))
    m = binary_metrics(y, p, 0.5)
    se = metric_standard_errors(m)
    boot = {"accuracy": [], "roc_auc": [], "pr_auc": []}
    for _ in range(300):
        i = rng.integers(0, n, n)
        b = binary_metrics(y[i], p[i], 0.5)
        for k in boot:
            boot[k].append(b[k])
    for k, v in boot.items():
        ref = float(np.std(v, ddof=1))
        assert abs(se[f"{k}_se"] - ref) < 0.25 * ref, (k, se[f"{k}_se"], ref)


def test_metric_standard_errors_undefined_inputs_are_nan():
    from pipelines._metrics import metric_standard_errors

    se = metric_standard_errors(
        {"accuracy": 1.0, "roc_auc": float("nan"), "pr_auc": None, "rows": 10, "positives": 0}
    )
    assert se["accuracy_se"] == 0.0
    assert np.isnan(se["roc_auc_se"]) and np.isnan(se["pr_auc_se"])


def _choose_threshold_loop(y, p, rule):
    """The obvious version: score every candidate with binary_metrics, keep the best, ties
    to the nearest 0.5 then the lowest."""
    u = np.unique(p)
    cands = np.r_[u[0] - 1e-9, (u[:-1] + u[1:]) / 2, u[-1]]
    best, best_key = 0.5, None
    for t in cands:
        v = binary_metrics(y, p, float(t))[rule]
        if not np.isfinite(v):
            continue
        key = (v, -abs(float(t) - 0.5))
        if best_key is None or key > best_key:
            best, best_key = float(t), key
    return float(np.clip(best, 0.001, 0.999))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 1), st.sampled_from([0.1, 0.25, 0.5, 0.75, 0.9]) | st.floats(0.01, 0.99)
        ),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(["balanced_accuracy", "f1"]),
)
def test_choose_threshold_equals_the_loop(pairs, rule):
    """The vectorised search picks exactly the threshold of the one-candidate-at-a-time loop
    (ties, repeated probabilities and single-class rows included)."""
    from pipelines._metrics import choose_threshold

    y = np.array([a for a, _ in pairs])
    p = np.array([b for _, b in pairs])
    assert choose_threshold(y, p, rule) == _choose_threshold_loop(y, p, rule)
