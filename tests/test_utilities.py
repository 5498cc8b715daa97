"""The shared utilities of issue 14: one atomic write per layer (files get the user's umask),
one data-directory resolver, one estimator factory, one cross-fitted Platt helper and one GC
pause."""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import sim_bridge._atomic as sb_atomic
from mtl import _atomic


@contextmanager
def _umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _writers(tmp_path: Path):
    """Every atomic writer, as ``(name, write(path, text) -> path)``."""
    from pipelines._io import atomic_write_text as pipelines_text

    def through_path(path, text):
        with _atomic.atomic_path(path) as tmp:
            tmp.write_text(text)
        return path

    def temp_file(path, text):
        fd, tmp = _atomic.create_temp_file(path.parent, ".x.", ".part")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
        return path

    return [
        ("mtl text", _atomic.atomic_write_text),
        ("mtl bytes", lambda p, t: _atomic.atomic_write_bytes(p, t.encode())),
        ("mtl path", through_path),
        ("mtl temp file", temp_file),
        ("sim_bridge text", sb_atomic.atomic_write_text),
        ("pipelines text", pipelines_text),
    ]


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_follow_the_umask(tmp_path, mask, expected):
    for name, write in _writers(tmp_path):
        with _umask(mask):
            path = write(tmp_path / f"{name}.txt", "content")
        assert path.read_text() == "content", name
        assert _mode(path) == expected, (name, oct(_mode(path)))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{name}.txt" for name, _ in _writers(tmp_path)
    )


def test_a_replaced_file_gets_the_umask_not_its_old_mode(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old")
    path.chmod(0o600)
    with _umask(0o022):
        _atomic.atomic_write_text(path, "new")
    assert (path.read_text(), _mode(path)) == ("new", 0o644)


def _fails_midway(tmp_path):
    """Writers that fail after their temporary file exists, as ``(name, call(path))``."""

    def path_block(path):
        with _atomic.atomic_path(path) as tmp:
            tmp.write_text("half")
            assert tmp.exists()
            raise RuntimeError("midway")

    return [
        ("mtl bytes", lambda p: _atomic.atomic_write_bytes(p, object())),  # write() raises
        ("mtl path", path_block),
        ("sim_bridge text", lambda p: sb_atomic.atomic_write_text(p, "\ud800")),  # encode
    ]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    for name, call in _fails_midway(tmp_path):
        path = tmp_path / f"{name}.txt"
        path.write_text("old")
        with pytest.raises((TypeError, RuntimeError, UnicodeEncodeError)):
            call(path)
        assert path.read_text() == "old", name
        assert sorted(p.name for p in tmp_path.iterdir() if name in p.name) == [path.name]


def test_a_failed_first_write_leaves_nothing(tmp_path):
    with pytest.raises(TypeError):
        _atomic.atomic_write_bytes(tmp_path / "new.bin", object())
    assert list(tmp_path.iterdir()) == []


def test_predictor_artifact_files_follow_the_umask(tmp_path):
    from mtl import GroupedMTLSVC, Predictor, make_grouped_classification

    X, y = make_grouped_classification(120, 3, 2, 3, seed=0)
    pred = Predictor.from_estimator(GroupedMTLSVC(variant="f0").fit(X, y))
    with _umask(0o077):
        out = pred.save(tmp_path / "private")
    with _umask(0o022):
        shared = pred.save(tmp_path / "shared")
    assert {_mode(p) for p in out.iterdir()} == {0o600}
    assert {_mode(p) for p in shared.iterdir()} == {0o644}


def test_no_site_creates_files_with_mkstemp():
    root = Path(__file__).resolve().parents[1]
    users = [
        str(p.relative_to(root))
        for pkg in ("mtl", "sim_bridge", "pipelines")
        for p in (root / pkg).rglob("*.py")
        if "mkstemp(" in p.read_text(encoding="utf-8")
    ]
    assert users == []


# --------------------------------------------------------------------------- estimator factory
def _old_study_estimator(variant, point, seed, extra=None):
    """The factory of ``pipelines/_study.py`` before issue 14 (reference)."""
    from mtl import GroupedMTLSVC

    params = {k: float(point[k]) for k in ("lambda0", "nu", "omega", "tau") if k in point}
    if "threshold" in point:
        params["threshold"] = float(point["threshold"])
    return GroupedMTLSVC(variant=variant, random_state=seed, **params, **(extra or {}))


def _old_evaluate_estimator(model, point, seed):
    """The factory of ``pipelines/_evaluate.py`` before issue 14 (reference)."""
    from mtl import GroupedMTLSVC, WranglerSVC

    thr = float(point.get("threshold", 0.5))
    if model == "wrangler":
        return WranglerSVC(threshold=thr, random_state=seed)
    regs = {k: float(v) for k, v in point.items() if k != "threshold"}
    return GroupedMTLSVC(variant=model, threshold=thr, random_state=seed, **regs)


def test_one_estimator_factory_builds_what_the_three_built():
    import mtl
    from pipelines._compare_models import TRAIN_C
    from pipelines._estimators import make_estimator

    points = [{}, {"threshold": 0.3}, {"lambda0": 10, "nu": 1e3, "omega": 1e5, "tau": 2.0}]
    points.append({**points[2], "threshold": 0.6})
    for variant in mtl.VARIANTS:
        for point in points:
            new = make_estimator(variant, point, 7, C=0.5).get_params()
            assert new == _old_study_estimator(variant, point, 7, {"C": 0.5}).get_params()
            new = make_estimator(variant, point, 7).get_params()
            assert new == _old_evaluate_estimator(variant, point, 7).get_params()
    for point in points:
        new = make_estimator("wrangler", point, 4).get_params()
        assert new == _old_evaluate_estimator("wrangler", point, 4).get_params()
    # compare's predictors, with the repr it records
    assert repr(make_estimator("f0nl", C=TRAIN_C)) == repr(mtl.GroupedMTLSVC("f0nl", C=TRAIN_C))
    assert repr(make_estimator("wrangler", C=TRAIN_C)) == repr(mtl.WranglerSVC(C=TRAIN_C))
    with pytest.raises(ValueError, match=r"parameter model must be one of wrangler, f0.*'f9'"):
        make_estimator("f9")


def test_the_three_callers_use_the_one_factory():
    import inspect

    import pipelines._compare_models as compare_models
    import pipelines._evaluate as evaluate
    import pipelines._study as study
    from pipelines._estimators import make_estimator

    assert study.make_estimator is make_estimator
    for module in (evaluate, compare_models, study):
        src = inspect.getsource(module)
        assert "GroupedMTLSVC(" not in src and "WranglerSVC(" not in src, module.__name__


# --------------------------------------------------------------------------- cross-fitted Platt
def _reference_estimators():
    """``GroupedMTLSVC`` and ``WranglerSVC`` with the calibration loops they carried before
    issue 14, copied verbatim (reference for bit-identical fits)."""
    import warnings

    from scipy.special import expit
    from sklearn.exceptions import ConvergenceWarning

    from mtl import GroupedMTLSVC, WranglerSVC
    from mtl._calibration import fit_platt
    from mtl._common import (
        binary_target,
        check_cv,
        class_weights,
        standardiser,
        stratified_folds,
    )
    from mtl._frame import encode_ids
    from mtl._grouped import _warn_if_collapsed

    class OldGrouped(GroupedMTLSVC):
        def fit(self, X, y):
            regs, blocks = self._check_params()
            Xc, nodes, workloads, y = self._prepare(X, reset=True, y=y)
            classes, y_pm = binary_target(y)
            sample_c = float(self.C) * class_weights(self.class_weight, classes, y_pm)
            mean, scale = standardiser(Xc)
            n = Xc.shape[0]
            node_index, node_code = encode_ids(nodes, n)
            wl_index, wl_code = encode_ids(workloads, n)
            key = node_code.astype(np.int64) * len(wl_index) + wl_code
            order = np.argsort(key, kind="stable")
            Xs = Xc[order]
            del Xc
            Xs -= mean
            Xs /= scale
            y_pm, sample_c = y_pm[order], sample_c[order]
            node_code, wl_code = node_code[order], wl_code[order]

            cv = check_cv(self.calibration_cv)
            n_minority = int(min((y_pm > 0).sum(), (y_pm < 0).sum()))
            if cv is not None and n_minority >= cv:
                folds = stratified_folds(y_pm, cv, self.random_state)
                scores = np.empty(n)
                for k in range(cv):
                    tr, te = folds != k, folds == k
                    core = self._fit_core(
                        Xs[tr], y_pm[tr], sample_c[tr], node_code[tr], wl_code[tr], regs, blocks
                    )
                    scores[te] = core.margin(Xs[te], node_code[te], wl_code[te])
                mode = "cross-fitted"
                core = self._fit_core(Xs, y_pm, sample_c, node_code, wl_code, regs, blocks)
            else:
                core = self._fit_core(Xs, y_pm, sample_c, node_code, wl_code, regs, blocks)
                scores = core.margin(Xs, node_code, wl_code)
                mode = "in-sample"
            a, c = fit_platt(scores, (y_pm > 0).astype(int))

            self.classes_ = classes
            self.mean_, self.scale_ = mean, scale
            self._node_index = node_index
            self._workload_index = wl_index
            self._core = core
            self._blocks_active = blocks
            self.intercept_ = core.intercept
            self.calibration_slope_, self.calibration_intercept_ = a, c
            self.calibration_mode_ = mode
            self.objective_ = core.objective
            self.n_iter_ = core.n_iter
            self.solver_ = self._solver_used(n * Xs.shape[1] * len(blocks))
            self._set_public_blocks()
            final = core.margin(Xs, node_code, wl_code) if mode == "cross-fitted" else scores
            _warn_if_collapsed(self, float(expit(a * final + c).mean()), float((y_pm > 0).mean()))
            return self

    class OldWrangler(WranglerSVC):
        def _fit_one(self, Xs, y_pm):
            cv = check_cv(self.calibration_cv)
            n_min = int(min((y_pm > 0).sum(), (y_pm < 0).sum()))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                if cv is not None and n_min >= cv:
                    folds = stratified_folds(y_pm, cv, self.random_state)
                    scores = np.empty(y_pm.shape[0])
                    for k in range(cv):
                        tr, te = folds != k, folds == k
                        svc = self._svc().fit(Xs[tr], y_pm[tr])
                        scores[te] = svc.decision_function(Xs[te])
                    svc = self._svc().fit(Xs, y_pm)
                else:
                    svc = self._svc().fit(Xs, y_pm)
                    scores = svc.decision_function(Xs)
            a, c = fit_platt(scores, (y_pm > 0).astype(int))
            self._n_iter = max(self._n_iter, int(np.max(svc.n_iter_)))
            return svc.coef_.ravel().copy(), float(svc.intercept_[0]), a, c

    return (GroupedMTLSVC, OldGrouped), (WranglerSVC, OldWrangler)


def _fitted_state(est) -> dict:
    """Every fitted attribute (``name_``, public or private) of an estimator."""
    return {k: v for k, v in vars(est).items() if k.endswith("_") or k.startswith("_")}


def _same(a, b) -> bool:
    """Equal to the bit (arrays: dtype, shape and every value; NaN equal to NaN)."""
    import pandas as pd

    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind in "fc":
            return a.tobytes() == b.tobytes()
        return bool(np.array_equal(a, b))
    if isinstance(a, pd.Index):
        return a.equals(b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return isinstance(b, float) and np.float64(a).tobytes() == np.float64(b).tobytes()
    if hasattr(a, "__dict__") and type(a) is type(b):
        return _same(vars(a), vars(b))
    return a == b


@pytest.mark.parametrize("calibration_cv", [3, None])
def test_shared_platt_loop_fits_bit_identical_models(calibration_cv):
    import warnings

    from mtl import make_grouped_classification

    X, y = make_grouped_classification(900, 5, 3, 4, seed=11)
    rows = np.r_[np.flatnonzero(y == 0)[:60], np.flatnonzero(y == 1)[:2]]
    X_small, y_small = X.iloc[rows], y[rows]  # fewer minority rows than folds: in-sample
    (new_g, old_g), (new_w, old_w) = _reference_estimators()
    fits = [
        (new_g, old_g, {"variant": "f0nl", "lambda0": 3.0, "random_state": 5}, X, y),
        (new_g, old_g, {"variant": "f0nlt", "solver": "explicit", "random_state": 2}, X, y),
        (new_g, old_g, {"variant": "f0", "random_state": 1}, X_small, y_small),
        (new_w, old_w, {"min_rows": 10, "random_state": 5}, X, y),
        (new_w, old_w, {"min_rows": 4, "random_state": 3}, X.iloc[:60], y[:60]),
    ]
    modes = set()
    for new_cls, old_cls, params, Xf, yf in fits:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            new = new_cls(calibration_cv=calibration_cv, **params).fit(Xf, yf)
            old = old_cls(calibration_cv=calibration_cv, **params).fit(Xf, yf)
        a, b = _fitted_state(new), _fitted_state(old)
        assert a.keys() == b.keys()
        differ = [k for k in a if not _same(a[k], b[k])]
        assert differ == [], (new_cls.__name__, params, differ)
        assert new.predict_proba(X).tobytes() == old.predict_proba(X).tobytes()
        modes.add(getattr(new, "calibration_mode_", None))
    expected = {"cross-fitted", "in-sample"} if calibration_cv else {"in-sample"}
    assert modes - {None} == expected


# --------------------------------------------------------------------------- GC pause
def test_gc_paused_restores_the_collector_state():
    import gc

    from sim_bridge._gc import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: the inner block leaves it paused
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("a run that fails")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():  # found paused: left paused
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_both_runs_pause_the_collector_through_the_one_helper():
    import gc
    import inspect

    import sim_bridge
    from sim_bridge._engine import Simulator
    from sim_bridge.policies.base import SpeculationPolicy

    class Watch(SpeculationPolicy):
        """Records whether the collector runs while the simulation does."""

        name = "watch-gc"

        def __init__(self):
            self.seen: list[bool] = []

        def on_job_arrival(self, view, job):
            self.seen.append(gc.isenabled())
            return []

    watch = Watch()
    sim_bridge.simulate("SYN", watch, nodes=5, hours=0.05, scale=0.01, progress=False)
    assert watch.seen and not any(watch.seen)
    assert gc.isenabled()
    for fn in (Simulator.run, inspect.unwrap(sim_bridge.simulate)):
        src = inspect.getsource(fn)
        assert "gc.disable" not in src
    assert "gc_paused()" in inspect.getsource(Simulator.run)
