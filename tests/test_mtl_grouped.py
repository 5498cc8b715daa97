"""GroupedMTLSVC against oracles: the feature map identity, limits, KKT relations, solvers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.svm import LinearSVC

from mtl import GroupedMTLSVC, make_grouped_classification
from mtl._solver import objective, task_weights
from mtl._structure import block_feature_map, structure_from_codes

COUNTERS = [f"c_{j}" for j in range(5)]


@pytest.fixture(scope="module")
def grid_data():
    """Complete 4 x 3 grid, every pair with rows."""
    return make_grouped_classification(900, 4, 3, 5, seed=3)


def _standardised(model, X):
    cols = [c for c in X.columns if c.startswith("c_")]
    return (X[cols].to_numpy() - model.mean_) / model.scale_


# --------------------------------------------------------------------------- eq. 3.11
def test_feature_map_identity_eq_3_11():
    rng = np.random.default_rng(0)
    n, d, N, L = 60, 3, 4, 3
    X = rng.normal(size=(n, d))
    node, wl = rng.integers(0, N, n), rng.integers(0, L, n)
    s, row_task = structure_from_codes(node, wl, N, L)
    regs = {"w0": 0.7, "node": 2.0, "workload": 0.3, "task": 5.0}
    blocks = ("w0", "node", "workload", "task")
    w = {b: rng.normal(size=(s.groups(b)[0], d)) for b in blocks}
    Phi = block_feature_map(X, row_task, s, blocks, regs)
    # w~ = sqrt(2 c_g) w_g concatenated (eq. 3.7-3.8), so that 1/2 ||w~||^2 = sum c_g ||w_g||^2
    u = np.concatenate(
        [(np.sqrt(2 * s.penalties(b, regs[b]))[:, None] * w[b]).ravel() for b in blocks]
    )
    slow = np.array(
        [
            X[i] @ (w["w0"][0] + w["node"][node[i]] + w["workload"][wl[i]] + w["task"][row_task[i]])
            for i in range(n)
        ]
    )
    np.testing.assert_allclose(Phi @ u, slow, rtol=1e-12)
    reg = sum(float(np.sum(s.penalties(b, regs[b]) * (w[b] ** 2).sum(1))) for b in blocks)
    assert 0.5 * u @ u == pytest.approx(reg, rel=1e-12)
    # on a complete grid the coefficients are eq. 3.16's nu/N and omega/L
    full, _ = structure_from_codes(np.repeat(np.arange(N), L), np.tile(np.arange(L), N), N, L)
    np.testing.assert_allclose(full.penalties("node", 2.0), 2.0 / N)
    np.testing.assert_allclose(full.penalties("workload", 0.3), 0.3 / L)
    np.testing.assert_allclose(full.penalties("task", 5.0), 5.0 / (N * L))


def test_fitted_blocks_reproduce_margin(grid_data):
    X, y = grid_data
    model = GroupedMTLSVC(variant="f0nlt", calibration_cv=None).fit(X, y)
    slow = []
    for _, row in X.iterrows():
        n, l = row["node"], row["workload"]
        W = model.w0_ + model.node_weights_[n] + model.workload_weights_[l]
        W = W + model.task_weights_[(n, l)]
        slow.append((row[COUNTERS].to_numpy(float) - model.mean_) @ W + model.intercept_)
    np.testing.assert_allclose(model.margin(X), slow, rtol=1e-9, atol=1e-9)
    p = 1 / (
        1 + np.exp(-(model.calibration_slope_ * np.array(slow) + model.calibration_intercept_))
    )
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], p, rtol=1e-9)


# --------------------------------------------------------------------------- limits
def test_f0_equals_one_linear_svc(grid_data):
    X, y = grid_data
    lam, C = 0.8, 2.0
    model = GroupedMTLSVC(variant="f0", lambda0=lam, C=C, tol=1e-10, calibration_cv=None)
    model.fit(X, y)
    Xs = _standardised(model, X)
    # lam ||w||^2 + C sum l  ==  2 lam (1/2 ||w||^2 + C / (2 lam) sum l)
    ref = LinearSVC(
        C=C / (2 * lam), dual=False, tol=1e-10, intercept_scaling=1e3, max_iter=100000
    ).fit(Xs, y)
    np.testing.assert_allclose(model.margin(X), ref.decision_function(Xs), atol=2e-4)
    np.testing.assert_allclose(model.w0_ * model.scale_, ref.coef_.ravel(), atol=2e-4)


def test_task_only_equals_independent_pair_svms():
    """Task block alone = one SVM per pair with C' = C T / (2 tau).

    The grouped model shares one intercept; on symmetrised data ((x, y) and (-x, -y) in every
    pair) every pair's optimal intercept is 0, so the shared intercept couples nothing.
    """
    X, y = make_grouped_classification(240, 3, 2, 4, seed=5)
    cols = [c for c in X.columns if c.startswith("c_")]
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
    tau, C = 3.0, 1.5
    model = GroupedMTLSVC(
        variant="f0t", lambda0=np.inf, tau=tau, C=C, tol=1e-10, calibration_cv=None
    ).fit(Xsym, ysym)
    assert model.w0_ is None and model.node_weights_ == {}
    assert abs(model.intercept_) < 1e-6
    Xs = (Xsym[cols].to_numpy() - model.mean_) / model.scale_
    T = len(model.task_weights_)
    margin = model.margin(Xsym)
    for (n, l), _ in model.task_weights_.items():
        rows = ((Xsym["node"] == n) & (Xsym["workload"] == l)).to_numpy()
        ref = LinearSVC(
            C=C * T / (2 * tau), dual=False, tol=1e-10, intercept_scaling=1e3, max_iter=100000
        ).fit(Xs[rows], ysym[rows])
        np.testing.assert_allclose(margin[rows], ref.decision_function(Xs[rows]), atol=1e-3)


def test_infinite_regulariser_removes_block(grid_data):
    X, y = grid_data
    a = GroupedMTLSVC(variant="f0nlt", tau=np.inf, calibration_cv=None).fit(X, y)
    b = GroupedMTLSVC(variant="f0nl", calibration_cv=None).fit(X, y)
    assert a.task_weights_ == {}
    np.testing.assert_allclose(a.margin(X), b.margin(X), rtol=1e-12)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-12)


# --------------------------------------------------------------------------- KKT
def _kkt_parts(model, X, y):
    core = model._core
    s = core.structure
    Xs = _standardised(model, X)
    ypm = np.where(y == model.classes_[1], 1.0, -1.0)
    node = core.node_codes.searchsorted(model._node_index.get_indexer(X["node"]))
    wl = core.workload_codes.searchsorted(model._workload_index.get_indexer(X["workload"]))
    key = s.task_node * s.n_workloads + s.task_workload
    row_task = key.searchsorted(node * s.n_workloads + wl)
    return core, s, Xs, ypm, node, wl, row_task


@pytest.mark.parametrize("complete", [True, False])
def test_stationarity_and_eq_3_18_to_3_22(complete):
    X, y = make_grouped_classification(1200, 4, 3, 5, seed=7)
    if not complete:  # drop two pairs: #(p, g) then counts the pairs present
        X = X.assign(y=y)
        X = X[~((X.node == "n0") & X.workload.isin(["w1", "w2"]))]
        y = X.pop("y").to_numpy()
    lam0, nu, om, tau, C = 0.5, 2.0, 1.5, 4.0, 1.0
    model = GroupedMTLSVC(
        variant="f0nlt", lambda0=lam0, nu=nu, omega=om, tau=tau, C=C, tol=1e-11, calibration_cv=None
    ).fit(X, y)
    core, s, Xs, ypm, node, wl, row_task = _kkt_parts(model, X, y)
    w = core.blocks
    m = ypm * model.margin(X)
    alpha = 2 * C * np.maximum(0.0, 1.0 - m)  # -dloss/dm for the squared hinge
    ay_x = (alpha * ypm)[:, None] * Xs
    regs = {"w0": lam0, "node": nu, "workload": om, "task": tau}
    # stationarity per block: 2 c_g w_g = sum_{i in g} alpha_i y_i x_i ; intercept: sum a y = 0
    groups = {"w0": np.zeros_like(node), "node": node, "workload": wl, "task": row_task}
    scale = np.abs(ay_x).sum(0).max()
    for b, g in groups.items():
        c = s.penalties(b, regs[b])
        rhs = np.zeros_like(w[b])
        np.add.at(rhs, g, ay_x)
        np.testing.assert_allclose(2 * c[:, None] * w[b], rhs, atol=1e-6 * scale)
    assert abs((alpha * ypm).sum()) < 1e-6 * alpha.sum()
    # the seed's relations, in the #(p, g) form (eq. 3.18-3.22 on a complete grid)
    c0 = s.penalties("w0", lam0)[0]
    cn, cl, ct = s.penalties("node", nu), s.penalties("workload", om), s.penalties("task", tau)
    tol = 1e-6 * np.abs(c0 * w["w0"]).max()
    np.testing.assert_allclose(c0 * w["w0"][0], (ct[:, None] * w["task"]).sum(0), atol=tol)
    np.testing.assert_allclose(c0 * w["w0"][0], (cn[:, None] * w["node"]).sum(0), atol=tol)
    np.testing.assert_allclose(c0 * w["w0"][0], (cl[:, None] * w["workload"]).sum(0), atol=tol)
    for k in range(s.n_nodes):
        on = s.task_node == k
        np.testing.assert_allclose(
            cn[k] * w["node"][k], (ct[on, None] * w["task"][on]).sum(0), atol=tol
        )
    for k in range(s.n_workloads):
        on = s.task_workload == k
        np.testing.assert_allclose(
            cl[k] * w["workload"][k], (ct[on, None] * w["task"][on]).sum(0), atol=tol
        )
    if complete:
        N, L, T = s.n_nodes, s.n_workloads, s.n_tasks
        v, wn_, wl_ = w["task"], w["node"], w["workload"]
        np.testing.assert_allclose(lam0 * w["w0"][0], tau / T * v.sum(0), atol=tol)  # 3.18
        for k in range(N):  # 3.19
            np.testing.assert_allclose(
                nu * wn_[k], tau / (T / N) * v[s.task_node == k].sum(0), atol=tol * N
            )
        for k in range(L):  # 3.20
            np.testing.assert_allclose(
                om * wl_[k], tau / (T / L) * v[s.task_workload == k].sum(0), atol=tol * L
            )
        np.testing.assert_allclose(lam0 * w["w0"][0], nu / N * wn_.sum(0), atol=tol)  # 3.21
        np.testing.assert_allclose(lam0 * w["w0"][0], om / L * wl_.sum(0), atol=tol)  # 3.22


# --------------------------------------------------------------------------- solvers agree
@pytest.mark.parametrize("variant", ["f0nl", "f0nlt"])
def test_implicit_matches_explicit_linear_svc(variant):
    X, y = make_grouped_classification(1500, 6, 3, 6, seed=11)
    kw = dict(
        variant=variant,
        tau=2.0,
        class_weight="balanced",
        calibration_cv=None,
        max_iter=100000,
        intercept_scaling=1e3,
    )
    imp = GroupedMTLSVC(solver="implicit", tol=1e-10, **kw).fit(X, y)
    exp = GroupedMTLSVC(solver="explicit", tol=1e-10, **kw).fit(X, y)
    assert imp.objective_ == pytest.approx(exp.objective_, rel=1e-4)
    assert imp.objective_ <= exp.objective_ * (1 + 1e-9)
    np.testing.assert_allclose(imp.margin(X), exp.margin(X), atol=5e-3)
    # the objective the solver reports is the slow formula's
    core, s, Xs, ypm, *_, row_task = _kkt_parts(imp, X, y)
    sc = np.where(ypm > 0, len(y) / (2 * (ypm > 0).sum()), len(y) / (2 * (ypm < 0).sum()))
    regs = {"w0": 1.0, "node": 1.0, "workload": 1.0, "task": 2.0}
    assert objective(Xs, ypm, sc, row_task, s, core.blocks, core.intercept, regs) == (
        pytest.approx(imp.objective_, rel=1e-10)
    )
    W = task_weights(core.blocks, s)
    np.testing.assert_allclose(
        np.einsum("ij,ij->i", Xs, W[row_task]) + core.intercept, imp.margin(X), rtol=1e-10
    )


def test_hinge_loss_explicit_path(grid_data):
    X, y = grid_data
    # liblinear's dual solver converges slowly with a large intercept feature
    m = GroupedMTLSVC(
        loss="hinge", solver="explicit", calibration_cv=None, max_iter=20000, intercept_scaling=1.0
    )
    assert m.fit(X, y).score(X, y) > 0.7


# --------------------------------------------------------------------------- unseen ids
def test_unseen_ids_use_existing_blocks(grid_data):
    X, y = grid_data
    row = X.iloc[:1].copy()
    x = row[COUNTERS].to_numpy(float)[0]
    for variant in ["f0nl", "f0t", "fn", "f0nlt"]:
        m = GroupedMTLSVC(variant=variant, calibration_cv=None).fit(X, y)
        z = x - m.mean_
        zero = np.zeros_like(z)
        w0 = m.w0_ if m.w0_ is not None else zero
        cases = {
            ("n1", "new"): w0 + m.node_weights_.get("n1", zero),
            ("new", "w2"): w0 + m.workload_weights_.get("w2", zero),
            ("new", "new"): w0,
        }
        for (n, l), W in cases.items():
            got = m.margin(row.assign(node=n, workload=l))[0]
            assert got == pytest.approx(z @ W + m.intercept_, rel=1e-10, abs=1e-10), (variant, n)
            Wc, bc = m.combined_weights(n, l)
            assert got == pytest.approx(x @ Wc + bc, rel=1e-10, abs=1e-10)


def test_f0nl_generalises_to_held_out_pair_better_than_f0t():
    X, y = make_grouped_classification(
        6000, 6, 4, 8, node_scale=1.2, workload_scale=1.2, task_scale=0.1, noise=0.2, seed=2
    )
    held = ((X.node == "n2") & (X.workload == "w1")).to_numpy()
    acc = {}
    for variant in ["f0nl", "f0t"]:
        m = GroupedMTLSVC(variant=variant, tau=0.5).fit(X[~held], y[~held])
        acc[variant] = m.score(X[held], y[held])
    assert acc["f0nl"] > acc["f0t"] + 0.05, acc


# --------------------------------------------------------------------------- invariants
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.01, 100.0), shift=st.floats(-50, 50))
def test_invariant_to_counter_units_and_row_order(seed, scale, shift):
    X, y = make_grouped_classification(200, 3, 2, 3, seed=seed)
    m = GroupedMTLSVC(calibration_cv=None, tol=1e-10).fit(X, y)
    X2 = X.copy()
    X2[["c_0", "c_1", "c_2"]] = X2[["c_0", "c_1", "c_2"]] * scale + shift
    perm = np.random.default_rng(seed).permutation(len(y))
    m2 = GroupedMTLSVC(calibration_cv=None, tol=1e-10).fit(X2.iloc[perm], y[perm])
    np.testing.assert_allclose(m2.margin(X2), m.margin(X), atol=1e-5)
    # renaming ids changes nothing either
    X3 = X.assign(node=X.node.map(lambda s: "z" + s), workload=X.workload.str.upper())
    m3 = GroupedMTLSVC(calibration_cv=None, tol=1e-10).fit(X3, y)
    np.testing.assert_allclose(m3.margin(X3), m.margin(X), atol=1e-8)


def test_same_seed_bit_identical(grid_data):
    X, y = grid_data
    a = GroupedMTLSVC(random_state=4).fit(X, y).predict_proba(X)
    b = GroupedMTLSVC(random_state=4).fit(X, y).predict_proba(X)
    assert np.array_equal(a, b)


def test_threshold_moves_predictions(grid_data):
    X, y = grid_data
    m = GroupedMTLSVC(threshold=0.8).fit(X, y)
    p = m.predict_proba(X)[:, 1]
    np.testing.assert_array_equal(m.predict(X), (p > 0.8).astype(int))
    assert m.calibration_mode_ == "cross-fitted"


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"variant": "f9"}, "variant"),
        ({"nu": -1.0}, "nu"),
        ({"variant": "f0", "lambda0": np.inf}, "no block"),
        ({"loss": "hinge", "solver": "implicit"}, "explicit"),
        ({"solver": "dual"}, "solver"),
        ({"threshold": 1.0}, "threshold"),
        ({"calibration_cv": 1}, "calibration_cv"),
        ({"class_weight": "heavy"}, "class_weight"),
    ],
)
def test_bad_params_name_the_parameter(grid_data, params, match):
    X, y = grid_data
    with pytest.raises(ValueError, match=match):
        GroupedMTLSVC(**params).fit(X, y)


def test_bad_frames(grid_data):
    X, y = grid_data
    with pytest.raises(ValueError, match="'workload'"):
        GroupedMTLSVC().fit(X.drop(columns="workload"), y)
    bad = X.copy()
    bad.loc[5, "node"] = None
    with pytest.raises(ValueError, match="row 5"):
        GroupedMTLSVC().fit(bad, y)
    with pytest.raises(ValueError, match="one class"):
        GroupedMTLSVC().fit(X, np.zeros(len(y)))


def test_non_convergence_warns(grid_data):
    from sklearn.exceptions import ConvergenceWarning

    X, y = grid_data
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        GroupedMTLSVC(max_iter=1, solver="implicit", calibration_cv=None).fit(X, y)


@pytest.mark.parametrize("variant", ["f0", "fn", "fl", "f0nl", "f0t", "f0tl", "f0nlt"])
def test_every_variant_has_exactly_its_blocks(grid_data, variant):
    from mtl import VARIANTS

    X, y = grid_data
    m = GroupedMTLSVC(variant=variant, calibration_cv=None).fit(X, y)
    has = {
        "w0": m.w0_ is not None,
        "node": bool(m.node_weights_),
        "workload": bool(m.workload_weights_),
        "task": bool(m.task_weights_),
    }
    assert {b for b, present in has.items() if present} == set(VARIANTS[variant])
    assert len(m.node_weights_) in (0, 4) and len(m.task_weights_) in (0, 12)
    assert m.score(X, y) > 0.7


def test_auto_solver_picks_by_feature_map_size(grid_data, monkeypatch):
    import mtl._grouped as grouped

    X, y = grid_data
    small = GroupedMTLSVC(solver="auto", calibration_cv=None).fit(X, y)
    assert small.solver_ == "explicit"
    monkeypatch.setattr(grouped, "AUTO_EXPLICIT_MAX_NNZ", 0)
    big = GroupedMTLSVC(solver="auto", calibration_cv=None).fit(X, y)
    assert big.solver_ == "implicit"
    assert big.objective_ == pytest.approx(small.objective_, rel=1e-3)
    hinge = GroupedMTLSVC(
        solver="auto", loss="hinge", intercept_scaling=1.0, max_iter=20000, calibration_cv=None
    )
    assert hinge.fit(X, y).solver_ == "explicit"
