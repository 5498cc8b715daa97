"""Predictor: equals its estimator, survives a save/load round trip, refuses bad artifacts."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import types

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtl import (
    ArtifactError,
    GroupedMTLSVC,
    Predictor,
    PredictorInputError,
    PredictorProtocol,
    WranglerSVC,
    load_predictor,
    make_grouped_classification,
)
from mtl._predictor import _canonical, _sha256


@pytest.fixture(scope="module")
def data():
    return make_grouped_classification(800, 4, 3, 5, seed=12)


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    X = X[~((X.node == "n3") & (X.workload == "w2"))]  # one pair never seen
    y = y[X.index]
    return {
        "f0nl": GroupedMTLSVC(variant="f0nl").fit(X, y),
        "f0nlt": GroupedMTLSVC(variant="f0nlt", threshold=0.3).fit(X, y),
        "fn": GroupedMTLSVC(variant="fn").fit(X, y),
        "wrangler": WranglerSVC(min_rows=60).fit(X, y),
    }


@pytest.mark.parametrize("name", ["f0nl", "f0nlt", "fn", "wrangler"])
def test_predictor_equals_estimator_and_round_trips(fitted, data, name, tmp_path):
    X, _ = data
    est = fitted[name]
    pred = Predictor.from_estimator(est)
    assert isinstance(pred, PredictorProtocol)
    assert pred.threshold == est.threshold
    expected = est.predict_proba(X)[:, 1]  # includes the unseen pair n3/w2
    np.testing.assert_allclose(pred.predict_proba(X), expected, rtol=1e-12, atol=1e-14)
    cols = pred.feature_names
    one = [
        pred.straggler_probability(r.node, r.workload, dict(zip(cols, r[3:], strict=True)))
        for r in X.head(60).itertuples()
    ]
    np.testing.assert_allclose(one, expected[:60], rtol=1e-12, atol=1e-14)
    again = load_predictor(pred.save(tmp_path / "p"))
    assert again.kind == pred.kind and again.feature_names == pred.feature_names
    assert np.array_equal(again.predict_proba(X), pred.predict_proba(X))
    assert list((tmp_path / "p").iterdir()) and not list((tmp_path / "p").glob(".*tmp"))


def test_integer_ids_and_plain_arrays_round_trip(tmp_path):
    X, y = make_grouped_classification(400, 3, 2, 3, seed=1)
    Xi = X.assign(node=X.node.str[1:].astype(int), workload=X.workload.str[1:].astype(int))
    est = GroupedMTLSVC(variant="f0nlt").fit(Xi, y)
    pred = load_predictor(Predictor.from_estimator(est).save(tmp_path / "int"))
    row = dict(zip(pred.feature_names, X.iloc[0, 2:], strict=True))
    assert pred.straggler_probability(1, 0, row) == pytest.approx(
        est.predict_proba(Xi.iloc[[0]].assign(node=1, workload=0))[0, 1], rel=1e-12
    )
    plain = GroupedMTLSVC(variant="f0").fit(X.iloc[:, 2:].to_numpy(), y)
    p2 = load_predictor(Predictor.from_estimator(plain).save(tmp_path / "plain"))
    assert p2.feature_names == ["x0", "x1", "x2"]
    frame = pd.DataFrame(X.iloc[:, 2:].to_numpy(), columns=p2.feature_names)
    np.testing.assert_allclose(
        p2.predict_proba(frame), plain.predict_proba(X.iloc[:, 2:].to_numpy())[:, 1], rtol=1e-12
    )


@settings(max_examples=25, deadline=None)
@given(
    values=st.lists(st.floats(-1e3, 1e3), min_size=5, max_size=5),
    node=st.sampled_from(["n0", "n3", "zz"]),
    wl=st.sampled_from(["w0", "w2", "new"]),
)
def test_single_call_equals_batch(fitted, values, node, wl):
    pred = Predictor.from_estimator(fitted["f0nlt"])
    counters = dict(zip(pred.feature_names, values, strict=True))
    p = pred.straggler_probability(node, wl, counters)
    frame = pd.DataFrame([{"node": node, "workload": wl, **counters}])
    assert 0.0 <= p <= 1.0
    assert p == pytest.approx(pred.predict_proba(frame)[0], rel=1e-12, abs=1e-300)
    # the values path (feature order, no mapping) is the same computation, bit for bit
    assert pred.straggler_probability_values(node, wl, values) == p


def test_bad_counters_give_clear_errors(fitted, data):
    X, _ = data
    pred = Predictor.from_estimator(fitted["f0nl"])
    good = dict(zip(pred.feature_names, X.iloc[0, 2:], strict=True))
    with pytest.raises(PredictorInputError, match="c_2"):
        pred.straggler_probability("n0", "w0", {k: v for k, v in good.items() if k != "c_2"})
    with pytest.raises(PredictorInputError, match="c_1"):
        pred.straggler_probability("n0", "w0", {**good, "c_1": float("nan")})
    with pytest.raises(PredictorInputError, match="c_4"):
        pred.predict_proba(X.drop(columns="c_4"))
    with pytest.raises(PredictorInputError, match="expected 5 counter values"):
        pred.straggler_probability_values("n0", "w0", list(good.values())[:4])
    with pytest.raises(PredictorInputError, match="c_1"):
        pred.straggler_probability_values("n0", "w0", [0.0, float("inf"), 0.0, 0.0, 0.0])
    with pytest.raises(PredictorInputError, match="counter 'c_3' is 'x'"):
        pred.straggler_probability("n0", "w0", {**good, "c_3": "x"})
    with pytest.raises(PredictorInputError, match="counter 'c_0' is None"):
        pred.straggler_probability_values("n0", "w0", [None, 0.0, 0.0, 0.0, 0.0])
    with pytest.raises(PredictorInputError, match="expected 5 counter values.*shape \\(5, 2\\)"):
        pred.straggler_probability_values("n0", "w0", np.zeros((5, 2)))
    bad = X.copy()
    bad.iloc[7, bad.columns.get_loc("c_0")] = np.nan
    with pytest.raises(PredictorInputError, match="'c_0'.*row 7"):
        pred.predict_proba(bad)
    with pytest.raises(PredictorInputError, match="'workload'"):
        pred.predict_proba(X.drop(columns="workload"))
    with pytest.raises(TypeError, match="GroupedMTLSVC or WranglerSVC"):
        Predictor.from_estimator(object())


@pytest.fixture()
def saved(fitted, tmp_path):
    return Predictor.from_estimator(fitted["f0nlt"]).save(tmp_path / "art")


def test_truncated_or_flipped_arrays_rejected(saved):
    npz = saved / "predictor.npz"
    data = npz.read_bytes()
    npz.write_bytes(data[: len(data) // 2])
    with pytest.raises(ArtifactError, match="SHA-256"):
        load_predictor(saved)
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x01
    npz.write_bytes(bytes(flipped))
    with pytest.raises(ArtifactError, match="SHA-256"):
        load_predictor(saved)


def test_edited_or_broken_metadata_rejected(saved):
    meta_path = saved / "predictor.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "threshold": 0.01}))
    with pytest.raises(ArtifactError, match="metadata checksum"):
        load_predictor(saved)
    meta_path.write_text(json.dumps(meta)[:-10])
    with pytest.raises(ArtifactError, match="not valid JSON"):
        load_predictor(saved)
    meta_path.write_text(json.dumps({**meta, "version": 99}))
    with pytest.raises(ArtifactError, match="version"):
        load_predictor(saved)
    (saved / "predictor.json").unlink()
    with pytest.raises(FileNotFoundError, match="predictor.json"):
        load_predictor(saved)


def test_forged_pickle_payload_is_never_unpickled(saved):
    """Even with consistent checksums an object array is refused (allow_pickle=False)."""
    buf = io.BytesIO()
    np.savez(buf, center=np.array([object()] * 5, dtype=object))
    data = buf.getvalue()
    meta = json.loads((saved / "predictor.json").read_text())
    meta.pop("meta_sha256")
    meta["arrays_sha256"] = _sha256(data)
    meta["meta_sha256"] = _sha256(_canonical(meta))
    (saved / "predictor.npz").write_bytes(data)
    (saved / "predictor.json").write_text(json.dumps(meta))
    with pytest.raises(ArtifactError):
        load_predictor(saved)


def test_mlflow_uri_finds_predictor_in_pyfunc_layout(saved, tmp_path, monkeypatch, data):
    """A pyfunc model logged with artifacts={"predictor": dir} keeps it in artifacts/predictor."""
    model_dir = tmp_path / "model"
    shutil.copytree(saved, model_dir / "artifacts" / "predictor")
    (model_dir / "MLmodel").write_text("flavors: {}\n")
    calls = []

    def download_artifacts(artifact_uri, dst_path):
        calls.append(artifact_uri)
        if artifact_uri.endswith("empty"):
            return dst_path
        out = f"{dst_path}/model"
        shutil.copytree(model_dir, out)
        return out

    fake = types.ModuleType("mlflow")
    fake.artifacts = types.SimpleNamespace(download_artifacts=download_artifacts)
    monkeypatch.setitem(sys.modules, "mlflow", fake)
    # the store set globally (mlflow.set_tracking_uri, which also sets this variable in
    # MLflow 3): MLflow resolves the URI; an explicit store is resolved by load_predictor
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    pred = load_predictor("models:/stragglers/3")
    X, _ = data
    assert np.array_equal(pred.predict_proba(X), load_predictor(saved).predict_proba(X))
    with pytest.raises(FileNotFoundError, match="predictor/"):
        load_predictor("runs:/abc/empty")
    assert calls == ["models:/stragglers/3", "runs:/abc/empty"]


def test_mtl_import_stays_light():
    code = (
        "import sys, mtl; bad = {'mlflow', 'optuna', 'sim_bridge'} & set(sys.modules); "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
