"""The scheduler-facing predictor and its safe, non-executable artifact (JSON + .npz).

Keeps :class:`Predictor` (construction, per-pair entries, persistence) and
:func:`load_predictor`; the artifact format, the protocol, the scoring paths and the MLflow
URI resolution are in ``mtl._predictor_format``, ``_protocol``, ``_scoring``, ``_mlflow``.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._atomic import atomic_write_bytes
from ._frame import native_id
from ._predictor_format import (
    ARRAYS_FILE,
    FORMAT,
    FORMAT_VERSION,
    MAX_META_BYTES,
    META_FILE,
    ArtifactError,
)
from ._predictor_format import canonical as _canonical
from ._predictor_format import sha256 as _sha256
from ._predictor_format import validate_artifact as _validate
from ._predictor_mlflow import artifact_location as _artifact_location
from ._predictor_mlflow import find_artifact_dir as _find_artifact_dir
from ._predictor_mlflow import relocated_artifact as _relocated_artifact
from ._predictor_protocol import PredictorProtocol as PredictorProtocol
from ._predictor_scoring import PredictorInputError as PredictorInputError
from ._predictor_scoring import PredictorScoring
from ._signing import SIG_FILE, resolve_key, signature_document, verify_signature

_URI = re.compile(r"^(models|runs|mlflow-artifacts):/", re.IGNORECASE)


def _pair(key: Sequence[Hashable]) -> tuple[Hashable, Hashable]:
    return (native_id(key[0]), native_id(key[1]))


class Predictor(PredictorScoring):
    """Straggler probabilities from a fitted :class:`GroupedMTLSVC` or :class:`WranglerSVC`.

    Holds only numbers: the counter means, weight vectors in original counter units, intercepts
    and Platt calibrations. The combined weight vector of every (node, workload) pair seen in
    training is precomputed; an unseen pair is composed once (grouped model: the blocks that
    exist; Wrangler: its fallback) and cached.

    Build with :meth:`from_estimator`, persist with :meth:`save`, read with
    :func:`load_predictor`. NaN or infinite counters are rejected (no imputation).

    Attributes
    ----------
    feature_names : list of str
        The counters, in model order (``x0, x1, ...`` for a model fitted on a plain array).
    threshold : float
        Act on a prediction when the probability exceeds it (copied from the estimator).
    kind : {"grouped", "wrangler"}

    Examples
    --------
    >>> from mtl import GroupedMTLSVC, make_grouped_classification
    >>> X, y = make_grouped_classification(400, 3, 2, 3, seed=0)
    >>> model = GroupedMTLSVC().fit(X, y)
    >>> pred = Predictor.from_estimator(model)
    >>> pred.feature_names
    ['c_0', 'c_1', 'c_2']
    >>> p = pred.straggler_probability("n1", "w0", {"c_0": 1.0, "c_1": 20.0, "c_2": 3.0})
    >>> 0.0 < p < 1.0
    True
    >>> bool(np.allclose(pred.predict_proba(X), model.predict_proba(X)[:, 1]))
    True
    """

    def __init__(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]):
        self._meta = meta
        self._arrays = arrays
        self.kind: str = meta["kind"]
        self.feature_names: list[str] = list(meta["feature_names"])
        self.threshold: float = float(meta["threshold"])
        self._center = arrays["center"]
        self._d = len(self.feature_names)
        self._cache: dict[tuple, tuple[np.ndarray, float, float, float, list[float]]] = {}
        if self.kind == "grouped":
            self._w0 = arrays["w0"]
            self._node = {_k: i for i, _k in enumerate(map(native_id, meta["node_ids"]))}
            self._wl = {_k: i for i, _k in enumerate(map(native_id, meta["workload_ids"]))}
            self._task = {_pair(k): i for i, k in enumerate(meta["task_pairs"])}
            self._b = float(meta["intercept"])
            self._platt = (float(meta["platt"][0]), float(meta["platt"][1]))
            known = list(self._task) + [(n, l) for n in self._node for l in self._wl]
        else:
            self._pairs = {_pair(k): i for i, k in enumerate(meta["pairs"])}
            known = list(self._pairs)
        for key in known:
            self._entry(key)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_estimator(cls, estimator: Any) -> Predictor:
        """Predictor from a fitted :class:`GroupedMTLSVC` or :class:`WranglerSVC`."""
        from ._grouped import GroupedMTLSVC
        from ._wrangler import WranglerSVC

        if not isinstance(estimator, GroupedMTLSVC | WranglerSVC):
            raise TypeError(
                f"estimator must be a fitted GroupedMTLSVC or WranglerSVC, "
                f"got {type(estimator).__name__}"
            )
        from sklearn.utils.validation import check_is_fitted  # fitting needs it anyway

        check_is_fitted(estimator)
        d = int(estimator.n_features_in_)
        names = getattr(estimator, "feature_names_in_", None)
        names = [str(c) for c in names] if names is not None else [f"x{j}" for j in range(d)]
        meta: dict[str, Any] = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "feature_names": names,
            "threshold": float(estimator.threshold),
            "classes": [native_id(c) for c in estimator.classes_],
        }
        arrays = {"center": np.asarray(estimator.mean_, dtype=np.float64)}
        if isinstance(estimator, GroupedMTLSVC):
            meta.update(
                kind="grouped",
                variant=estimator.variant,
                node_ids=[native_id(k) for k in estimator.node_weights_],
                workload_ids=[native_id(k) for k in estimator.workload_weights_],
                task_pairs=[list(_pair(k)) for k in estimator.task_weights_],
                intercept=float(estimator.intercept_),
                platt=[estimator.calibration_slope_, estimator.calibration_intercept_],
            )

            def stack(values: Iterable[Any]) -> np.ndarray:
                return np.array(list(values), dtype=np.float64).reshape(-1, d)

            w0 = estimator.w0_
            arrays.update(
                w0=np.zeros(d) if w0 is None else np.asarray(w0, dtype=np.float64),
                node_W=stack(estimator.node_weights_.values()),
                workload_W=stack(estimator.workload_weights_.values()),
                task_W=stack(estimator.task_weights_.values()),
            )
        else:
            pairs = list(estimator.pair_weights_)
            meta.update(
                kind="wrangler",
                pairs=[list(_pair(p)) for p in pairs],
                insufficient_pairs=[
                    [*_pair(p), r] for p, r in estimator.insufficient_pairs_.items()
                ],
                fallback=estimator.fallback,
            )
            arrays.update(
                pair_W=np.array([estimator.pair_weights_[p] for p in pairs]).reshape(-1, d),
                pair_b=np.array([estimator.pair_intercepts_[p] for p in pairs], dtype=float),
                pair_platt=np.array(
                    [estimator.pair_calibration_[p] for p in pairs], dtype=float
                ).reshape(-1, 2),
                fallback_W=np.asarray(estimator.fallback_weights_, dtype=np.float64),
                fallback=np.array(
                    [estimator.fallback_intercept_, *estimator.fallback_calibration_]
                ),
            )
        _validate(meta, arrays, where="estimator")
        return cls(meta, arrays)

    # ------------------------------------------------------------------ scoring
    def _entry(self, key: tuple) -> tuple[np.ndarray, float, float, float, list[float]]:
        """``(W, b', a, c, W as a list)``: probability ``sigmoid(a (x . W + b') + c)`` for
        pair ``key``."""
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        A = self._arrays
        if self.kind == "grouped":
            W = self._w0.copy()
            n, l = key
            if (i := self._node.get(n)) is not None:
                W += A["node_W"][i]
            if (i := self._wl.get(l)) is not None:
                W += A["workload_W"][i]
            if (i := self._task.get(key)) is not None:
                W += A["task_W"][i]
            b, (a, c) = self._b, self._platt
        else:
            i = self._pairs.get(key)
            if i is None:
                W = A["fallback_W"]
                b, a, c = (float(v) for v in A["fallback"])
            else:
                W = A["pair_W"][i]
                b = float(A["pair_b"][i])
                a, c = (float(v) for v in A["pair_platt"][i])
        W = np.ascontiguousarray(W)
        entry = (W, float(b - W @ self._center), a, c, W.tolist())
        self._cache[key] = entry
        return entry

    # ------------------------------------------------------------------ persistence
    def save(self, directory: str | os.PathLike[str], *, key: bytes | str | None = None) -> Path:
        """Write ``predictor.npz`` and ``predictor.json`` (checksums inside) to ``directory``,
        and ``predictor.sig`` when a signing key is configured.

        Nothing in the artifact executes code on load (no pickle). Each file is written
        atomically; the JSON names the SHA-256 of the arrays file. With ``key`` (or, when
        ``key`` is None, the environment variable ``STRAGGLER_MODEL_KEY``) the signature, an
        HMAC-SHA256 over the exact bytes of both files, is written last; a stale signature is
        removed first, so a crash mid-save leaves an artifact that a keyed reader refuses.
        See :mod:`mtl._signing` for the threat model.

        Examples
        --------
        >>> import tempfile
        >>> from mtl import GroupedMTLSVC, make_grouped_classification
        >>> X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
        >>> pred = Predictor.from_estimator(GroupedMTLSVC().fit(X, y))
        >>> out = pred.save(tempfile.mkdtemp(), key="a-secret-of-16+bytes")
        >>> sorted(p.name for p in out.iterdir())
        ['predictor.json', 'predictor.npz', 'predictor.sig']
        >>> load_predictor(out, key="a-secret-of-16+bytes").kind
        'grouped'
        """
        secret = resolve_key(key)
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        np.savez(buf, allow_pickle=False, **self._arrays)
        data = buf.getvalue()
        meta = dict(self._meta)
        meta["arrays"] = {k: [list(v.shape), str(v.dtype)] for k, v in self._arrays.items()}
        meta["arrays_sha256"] = _sha256(data)
        meta["meta_sha256"] = _sha256(_canonical(meta))
        meta_bytes = json.dumps(meta, indent=1, sort_keys=True).encode()
        (out / SIG_FILE).unlink(missing_ok=True)
        atomic_write_bytes(out / ARRAYS_FILE, data)
        atomic_write_bytes(out / META_FILE, meta_bytes)
        if secret is not None:
            files = {META_FILE: meta_bytes, ARRAYS_FILE: data}
            atomic_write_bytes(out / SIG_FILE, signature_document(secret, files))
        return out

    @classmethod
    def load(
        cls, directory: str | os.PathLike[str], *, key: bytes | str | None = None
    ) -> Predictor:
        """Read and verify an artifact written by :meth:`save`.

        With a key (``key``, else ``$STRAGGLER_MODEL_KEY``) the artifact must carry a valid
        signature (:class:`SignatureError` otherwise), checked over the bytes read here
        before anything is parsed. ``predictor.json`` over :data:`MAX_META_BYTES` is refused.
        """
        secret = resolve_key(key)
        d = Path(directory)
        meta_path, arrays_path = d / META_FILE, d / ARRAYS_FILE
        for p in (meta_path, arrays_path):
            if not p.is_file():
                raise FileNotFoundError(f"predictor artifact file missing: {p}")
        size = meta_path.stat().st_size
        if size > MAX_META_BYTES:
            raise ArtifactError(
                f"{meta_path}: {size} bytes, over the {MAX_META_BYTES}-byte cap on predictor "
                f"metadata (padded or not a predictor)"
            )
        meta_bytes = meta_path.read_bytes()[: MAX_META_BYTES + 1]
        if len(meta_bytes) > MAX_META_BYTES:  # grew between stat and read
            raise ArtifactError(f"{meta_path}: over the {MAX_META_BYTES}-byte cap")
        data = arrays_path.read_bytes()
        if secret is not None:
            verify_signature(d / SIG_FILE, secret, {META_FILE: meta_bytes, ARRAYS_FILE: data})
        try:
            meta = json.loads(meta_bytes)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ArtifactError(f"{meta_path}: not valid JSON ({exc})") from exc
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ArtifactError(f"{meta_path}: not a {FORMAT} artifact")
        if meta.get("version") != FORMAT_VERSION:
            raise ArtifactError(
                f"{meta_path}: format version {meta.get('version')!r}, this code reads "
                f"{FORMAT_VERSION}"
            )
        claimed = meta.pop("meta_sha256", None)
        if claimed != _sha256(_canonical(meta)):
            raise ArtifactError(f"{meta_path}: metadata checksum mismatch (edited or corrupt)")
        if meta.get("arrays_sha256") != _sha256(data):
            raise ArtifactError(
                f"{arrays_path}: SHA-256 does not match {META_FILE} (truncated, corrupt or "
                f"replaced)"
            )
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
        except Exception as exc:  # checksum matched, so this is a writer bug or forgery
            raise ArtifactError(f"{arrays_path}: unreadable arrays ({exc})") from exc
        spec = meta.pop("arrays", {})
        meta.pop("arrays_sha256", None)
        for k, (shape, dtype) in spec.items():
            a = arrays.get(k)
            if a is None or list(a.shape) != shape or str(a.dtype) != dtype:
                raise ArtifactError(f"{arrays_path}: array {k!r} missing or wrong shape/dtype")
        _validate(meta, arrays, where=str(d))
        return cls(meta, arrays)

    def __repr__(self) -> str:
        return f"Predictor(kind={self.kind!r}, counters={self._d}, threshold={self.threshold})"


def load_predictor(
    path_or_uri: str | os.PathLike[str],
    *,
    key: bytes | str | None = None,
    tracking_uri: str | None = None,
) -> Predictor:
    """Load a :class:`Predictor` from a directory or an MLflow ``models:/`` / ``runs:/`` URI.

    With a signing key (``key``, else the environment variable ``STRAGGLER_MODEL_KEY``) only
    an artifact signed with that key loads: an unsigned, mis-signed, re-sealed (weights edited,
    checksums recomputed) or swapped one raises :class:`SignatureError` (threat model in
    :mod:`mtl._signing`). Without a key, checksums guard integrity only.

    An MLflow URI needs a tracking server: ``tracking_uri``, else ``$MLFLOW_TRACKING_URI`` or
    ``mlflow.set_tracking_uri``; with none of them an :class:`ArtifactError` says so (MLflow
    would otherwise create an empty ``./mlflow.db`` in the working directory). A URI that
    does not resolve (no such model, version or alias; an unreadable tracking database) is
    an :class:`ArtifactError` naming the URI.

    For a URI, MLflow (imported only here) downloads the artifacts to a temporary directory;
    the predictor is the directory holding ``predictor.json`` -- the URI's root, its
    ``predictor/`` or ``artifacts/predictor/`` sub-directory (where an MLflow pyfunc model
    logged with ``artifacts={"predictor": dir}`` keeps it), or the single match below it.

    Examples
    --------
    >>> import tempfile
    >>> from mtl import GroupedMTLSVC, make_grouped_classification
    >>> X, y = make_grouped_classification(300, 3, 2, 3, seed=0)
    >>> pred = Predictor.from_estimator(GroupedMTLSVC(variant="f0t").fit(X, y))
    >>> again = load_predictor(pred.save(tempfile.mkdtemp()))
    >>> bool((again.predict_proba(X) == pred.predict_proba(X)).all())
    True
    """
    text = os.fspath(path_or_uri)
    if isinstance(text, str) and _URI.match(text):
        import shutil

        try:
            import mlflow  # optional heavy dependency: only on this branch
        except ImportError as exc:
            raise ImportError(
                f"{text}: loading an MLflow URI needs MLflow: pip install "
                f"'straggler-mtl[pipelines]' (or pass the predictor's directory)"
            ) from exc

        is_set = getattr(mlflow, "is_tracking_uri_set", lambda: True)
        if tracking_uri is None and not os.environ.get("MLFLOW_TRACKING_URI") and not is_set():
            raise ArtifactError(
                f"{text}: no MLflow tracking URI (pass tracking_uri=, set MLFLOW_TRACKING_URI "
                f"or call mlflow.set_tracking_uri); not creating ./mlflow.db"
            )
        store = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
        tmp = tempfile.mkdtemp(prefix="predictor-")
        try:
            try:
                if store is None:  # mlflow.set_tracking_uri was called: MLflow resolves it
                    local = mlflow.artifacts.download_artifacts(artifact_uri=text, dst_path=tmp)
                else:  # resolve in that store ourselves (registry included), then download
                    where = _artifact_location(text, store)
                    moved = _relocated_artifact(where, store)  # a run directory moved since
                    if moved is not None:
                        local = str(moved)
                    else:
                        local = mlflow.artifacts.download_artifacts(
                            artifact_uri=where, dst_path=tmp, tracking_uri=store
                        )
            except Exception as exc:  # MlflowException, sqlalchemy errors, OSError, ...
                first = (getattr(exc, "message", None) or str(exc)).strip().splitlines()
                raise ArtifactError(
                    f"{text}: cannot download the model ({type(exc).__name__}: "
                    f"{first[0] if first else ''})"
                ) from exc
            return Predictor.load(_find_artifact_dir(Path(local)), key=key)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if isinstance(text, str) and text.startswith("file://"):
        text = text[len("file://") :]
    return Predictor.load(text, key=key)
