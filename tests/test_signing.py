"""Signed predictor artifacts: round trip, and refusal of unsigned, mis-signed, re-sealed and
swapped artifacts when a key is configured (issue 16, Authenticity)."""

from __future__ import annotations

import io
import json
import shutil

import numpy as np
import pytest

from mtl import (
    ArtifactError,
    GroupedMTLSVC,
    Predictor,
    SignatureError,
    load_predictor,
    make_grouped_classification,
)
from mtl._predictor import MAX_META_BYTES, _canonical, _sha256
from mtl._signing import KEY_ENV, SIG_FILE

KEY = "test-signing-key-0123456789"
OTHER = "another-key-of-enough-length"


@pytest.fixture(scope="module")
def data():
    return make_grouped_classification(300, 3, 2, 4, seed=1)


@pytest.fixture(scope="module")
def predictors(data):
    X, y = data
    first = Predictor.from_estimator(GroupedMTLSVC(variant="f0nl").fit(X, y))
    second = Predictor.from_estimator(GroupedMTLSVC(variant="f0nl", lambda0=10.0).fit(X, y))
    return first, second


@pytest.fixture(autouse=True)
def no_env_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)


def _reseal(directory, edit):
    """Edit the weights and recompute both checksums, as an attacker without the key can."""
    meta = json.loads((directory / "predictor.json").read_text())
    with np.load(directory / "predictor.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    edit(arrays)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    data = buf.getvalue()
    meta.pop("meta_sha256")
    meta["arrays_sha256"] = _sha256(data)
    meta["meta_sha256"] = _sha256(_canonical(meta))
    (directory / "predictor.npz").write_bytes(data)
    (directory / "predictor.json").write_text(json.dumps(meta, indent=1, sort_keys=True))


def test_signed_round_trip_scores_identically(predictors, data, tmp_path):
    X, _ = data
    pred = predictors[0]
    out = pred.save(tmp_path / "a", key=KEY)
    assert (out / SIG_FILE).is_file()
    again = load_predictor(out, key=KEY)
    assert np.array_equal(again.predict_proba(X), pred.predict_proba(X))
    # bytes and str keys are the same key; no key configured: checksums only, still loads
    assert np.array_equal(
        load_predictor(out, key=KEY.encode()).predict_proba(X), pred.predict_proba(X)
    )
    assert load_predictor(out).kind == "grouped"


def test_environment_variable_signs_and_verifies(predictors, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    out = predictors[0].save(tmp_path / "env")
    assert load_predictor(out).kind == "grouped"
    unsigned = predictors[0].save(tmp_path / "unsigned", key=None)
    assert (unsigned / SIG_FILE).is_file()  # the environment key signed it
    monkeypatch.setenv(KEY_ENV, OTHER)
    with pytest.raises(SignatureError, match="signed with key"):
        load_predictor(out)


def test_unsigned_artifact_refused_when_key_configured(predictors, tmp_path, monkeypatch):
    out = predictors[0].save(tmp_path / "u")
    assert not (out / SIG_FILE).exists()
    with pytest.raises(SignatureError, match=f"{SIG_FILE}: artifact is unsigned"):
        load_predictor(out, key=KEY)
    monkeypatch.setenv(KEY_ENV, KEY)
    with pytest.raises(SignatureError, match="unsigned"):
        load_predictor(out)


def test_mis_signed_artifact_refused(predictors, tmp_path):
    out = predictors[0].save(tmp_path / "m", key=OTHER)
    with pytest.raises(SignatureError, match="signed with key"):
        load_predictor(out, key=KEY)
    sig = json.loads((out / SIG_FILE).read_text())
    from mtl._signing import key_id

    sig["key_id"] = key_id(KEY.encode())  # claims the right key, MAC made with another
    (out / SIG_FILE).write_text(json.dumps(sig))
    with pytest.raises(SignatureError, match="does not match"):
        load_predictor(out, key=KEY)
    (out / SIG_FILE).write_text("{not json")
    with pytest.raises(SignatureError, match="unreadable signature"):
        load_predictor(out, key=KEY)


def test_resealed_artifact_refused_but_loads_without_key(predictors, data, tmp_path):
    """Weights edited and both checksums recomputed: the checksums pass, the signature not."""
    X, _ = data
    out = predictors[0].save(tmp_path / "r", key=KEY)

    def boost(arrays):
        arrays["w0"] = arrays["w0"] + 1e3

    _reseal(out, boost)
    forged = load_predictor(out)  # integrity checks alone cannot tell
    assert not np.allclose(forged.predict_proba(X), predictors[0].predict_proba(X))
    with pytest.raises(SignatureError, match="edited, re-sealed or swapped"):
        load_predictor(out, key=KEY)


def test_swapped_pair_from_another_run_refused(predictors, tmp_path):
    """A consistent json + npz pair from another run, dropped beside this run's signature."""
    mine = predictors[0].save(tmp_path / "mine", key=KEY)
    theirs = predictors[1].save(tmp_path / "theirs", key=KEY)
    for name in ("predictor.json", "predictor.npz"):
        shutil.copy(theirs / name, mine / name)
    assert load_predictor(mine).threshold == predictors[1].threshold  # consistent pair
    with pytest.raises(SignatureError, match="does not match"):
        load_predictor(mine, key=KEY)
    # the whole artifact of a run signed with another key is refused too
    elsewhere = predictors[1].save(tmp_path / "elsewhere", key=OTHER)
    with pytest.raises(SignatureError, match="signed with key"):
        load_predictor(elsewhere, key=KEY)


def test_unsigned_resave_removes_stale_signature(predictors, tmp_path):
    out = predictors[0].save(tmp_path / "s", key=KEY)
    predictors[1].save(out)  # unsigned save into the same directory
    assert not (out / SIG_FILE).exists()
    with pytest.raises(SignatureError, match="unsigned"):
        load_predictor(out, key=KEY)


@pytest.mark.parametrize("bad", ["", "short", b"0123456789"])
def test_short_key_is_a_named_error(predictors, tmp_path, bad):
    with pytest.raises(ValueError, match=r"key: a signing key must be at least 16 bytes, got \d+"):
        predictors[0].save(tmp_path / "k", key=bad)


def test_short_environment_key_names_the_variable(predictors, tmp_path, monkeypatch):
    out = predictors[0].save(tmp_path / "k")
    monkeypatch.setenv(KEY_ENV, "tiny")
    with pytest.raises(
        ValueError, match=f"{KEY_ENV}: a signing key must be at least 16 bytes, got 4"
    ):
        load_predictor(out)


def test_oversized_metadata_refused_before_parsing(predictors, tmp_path):
    out = predictors[0].save(tmp_path / "big")
    meta = (out / "predictor.json").read_bytes()
    (out / "predictor.json").write_bytes(meta[:-2] + b" " * (MAX_META_BYTES + 1) + meta[-2:])
    with pytest.raises(ArtifactError, match=f"bytes, over the {MAX_META_BYTES}-byte cap"):
        load_predictor(out)
