"""The scheduler-facing predictor and its safe, non-executable artifact (JSON + .npz)."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Hashable, Iterable, Mapping, Sequence
from numbers import Real
from operator import mul as _mul
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from scipy.special import expit

from ._atomic import atomic_write_bytes
from ._common import rowwise_dot
from ._frame import NODE, SINGLE_ID, WORKLOAD, native_id
from ._signing import SIG_FILE, resolve_key, signature_document, verify_signature

FORMAT = "straggler-mtl-predictor"
FORMAT_VERSION = 1
META_FILE = "predictor.json"
ARRAYS_FILE = "predictor.npz"
MAX_META_BYTES = 16 * 2**20
"""Cap on the size of ``predictor.json`` (a real one is a few hundred KB at most)."""
_URI = re.compile(r"^(models|runs|mlflow-artifacts):/", re.IGNORECASE)


class ArtifactError(ValueError):
    """A predictor artifact is missing a part, corrupt, truncated or tampered with."""


class PredictorInputError(ValueError):
    """Input to a predictor lacks a counter, or a counter is NaN / infinite."""


@runtime_checkable
class PredictorProtocol(Protocol):
    """What a scheduler (e.g. the simulator bridge) needs from a straggler predictor.

    The simulator states the same protocol as ``sim_bridge.trace.PredictorProtocol`` (with
    the optional ``straggler_probability_values`` fast path and ``bind_view`` hook it uses
    when present); ``mtl`` does not import ``sim_bridge``, and a test checks the two agree.

    ``threshold`` and ``feature_names`` are read-only members: a plain attribute of any
    subtype (``list[str]``) or a property satisfies them.
    """

    @property
    def threshold(self) -> float: ...

    @property
    def feature_names(self) -> Sequence[str]: ...

    def straggler_probability(
        self, node: Hashable, workload: Hashable, counters: Mapping[str, float]
    ) -> float:
        """Probability that a task launched now on ``node`` for ``workload`` straggles."""
        ...

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        """Straggler probability per row of a frame with node, workload and counters."""
        ...


def _sigmoid(t: float) -> float:
    if t >= 0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(meta: Mapping[str, Any]) -> bytes:
    return json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _pair(key: Sequence[Hashable]) -> tuple[Hashable, Hashable]:
    return (native_id(key[0]), native_id(key[1]))


class Predictor:
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

    def straggler_probability(
        self, node: Hashable, workload: Hashable, counters: Mapping[str, float]
    ) -> float:
        """Calibrated probability that a task launched now on ``node`` for ``workload`` straggles.

        ``counters`` maps every name in :attr:`feature_names` to its value (extra keys are
        ignored). Ids compare by value *and type* with the training ids.
        """
        try:
            x = list(map(counters.__getitem__, self.feature_names))
        except KeyError as exc:
            missing = [f for f in self.feature_names if f not in counters]
            raise PredictorInputError(
                f"counters lack {missing[:5]} (the predictor needs {len(self.feature_names)} "
                f"counters: {self.feature_names[:5]}...)"
            ) from exc
        return self._probability(node, workload, x)

    def _probability(self, node: Hashable, workload: Hashable, x: list) -> float:
        """``sigmoid(a (x . W + b') + c)`` of pair ``(node, workload)`` for the counter values
        ``x`` (feature order, length checked): a plain Python dot product, about twice as
        fast as NumPy's on one row of ~30 counters."""
        _W, b, a, c, w_list = self._entry((node, workload))
        try:
            z = float(sum(map(_mul, w_list, x))) + b
        except (TypeError, ValueError) as exc:
            names = self.feature_names
            wrong = [(f, v) for f, v in zip(names, x, strict=True) if not isinstance(v, Real)]
            what = f"counter {wrong[0][0]!r} is {wrong[0][1]!r}, " if wrong else ""
            raise PredictorInputError(f"counters must be numbers: {what}{exc}") from exc
        if not math.isfinite(z):
            bad = [f for f, v in zip(self.feature_names, x, strict=True) if not math.isfinite(v)]
            raise PredictorInputError(
                f"counter(s) {bad} are NaN or infinite for node {node!r}, workload {workload!r}"
            )
        return _sigmoid(a * z + c)

    def straggler_probability_values(
        self, node: Hashable, workload: Hashable, values: Sequence[float]
    ) -> float:
        """:meth:`straggler_probability` from the counter values in :attr:`feature_names`
        order (no mapping to build or look up: the fast path of a scheduler's hot loop).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from mtl import GroupedMTLSVC, Predictor
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame({"node": ["a", "b"] * 20, "workload": "w",
        ...                   "c_cpu": rng.random(40), "c_mem": rng.random(40)})
        >>> y = (X["c_cpu"] > 0.5).astype(int)
        >>> p = Predictor.from_estimator(GroupedMTLSVC(variant="f0nl").fit(X, y))
        >>> row = {"c_cpu": 0.9, "c_mem": 0.2}
        >>> p.straggler_probability_values("a", "w", [0.9, 0.2]) == p.straggler_probability(
        ...     "a", "w", row)
        True
        """
        shape = np.shape(values) if isinstance(values, np.ndarray) else None
        if shape is not None and len(shape) == 1:
            values = values.tolist()
        elif type(values) is not list and shape is None:
            values = list(values)
        if shape not in (None, (self._d,)) or len(values) != self._d:
            raise PredictorInputError(
                f"expected {self._d} counter values in feature_names order "
                f"({self.feature_names[:5]}...), got shape {np.shape(values)}"
            )
        return self._probability(node, workload, values)

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        """Straggler probability (shape ``(n,)``) for every row of ``frame``.

        ``frame`` has ``node`` and ``workload`` columns (both may be omitted for a model fitted
        on a plain array) and every counter in :attr:`feature_names`; extra columns are ignored.
        """
        if not isinstance(frame, pd.DataFrame):
            raise PredictorInputError(
                f"frame must be a pandas DataFrame, got {type(frame).__name__}"
            )
        missing = [f for f in self.feature_names if f not in frame.columns]
        if missing:
            raise PredictorInputError(f"frame lacks counter column(s) {missing}")
        X = frame[self.feature_names].to_numpy(dtype=np.float64)
        bad = ~np.isfinite(X)
        if bad.any():
            r, j = np.argwhere(bad)[0]
            raise PredictorInputError(
                f"counter {self.feature_names[j]!r} is {X[r, j]} at row {r} of the frame"
            )
        n = X.shape[0]
        has = (NODE in frame.columns, WORKLOAD in frame.columns)
        if has == (False, False):
            if self._trained_ids():
                raise PredictorInputError(
                    f"frame has no 'node' and 'workload' columns, but this predictor was "
                    f"trained on {self._trained_ids()}; give both columns (without them every "
                    "row would be scored as an unseen node and workload)"
                )
            nodes = np.full(n, SINGLE_ID, dtype=object)
            wls = nodes
        elif all(has):
            nodes = frame[NODE].to_numpy(dtype=object)
            wls = frame[WORKLOAD].to_numpy(dtype=object)
        else:
            raise PredictorInputError("frame needs both a 'node' and a 'workload' column")
        ncode, nuniq = pd.factorize(pd.Series(nodes, dtype=object))
        lcode, luniq = pd.factorize(pd.Series(wls, dtype=object))
        if (ncode < 0).any() or (lcode < 0).any():
            raise PredictorInputError("frame has a missing node or workload id")
        known = self._known_workloads()
        if known:
            # once per predictor and workload: a scheduler scores thousands of batches
            warned = self.__dict__.setdefault("_warned_unseen", set())
            unseen = [
                i
                for i, w in enumerate(luniq)
                if native_id(w) not in known and native_id(w) not in warned
            ]
            if unseen:
                from ._grouped import warn_unseen_workloads

                warned.update(native_id(luniq[i]) for i in unseen)
                rows = int(np.isin(lcode, unseen).sum())
                warn_unseen_workloads([luniq[i] for i in unseen], rows)
        combo, cuniq = pd.factorize(ncode.astype(np.int64) * max(len(luniq), 1) + lcode)
        entries = [
            self._entry(
                (
                    native_id(nuniq[k // max(len(luniq), 1)]),
                    native_id(luniq[k % max(len(luniq), 1)]),
                )
            )
            for k in cuniq
        ]
        W = np.array([e[0] for e in entries]).reshape(-1, self._d)
        bac = np.array([e[1:4] for e in entries]).reshape(-1, 3)
        z = rowwise_dot(X, W, combo) + bac[combo, 0]
        t = bac[combo, 1] * z + bac[combo, 2]
        return expit(t)

    def _known_workloads(self) -> set:
        """Workloads with workload-specific weights (empty: the model has none, so no
        workload is "unseen")."""
        if self.kind == "grouped":
            return set(self._wl) | {p[1] for p in self._task}
        return {p[1] for p in self._pairs}

    def _trained_ids(self) -> str:
        """What the model knows of nodes and workloads (``""`` for a model fitted on a plain
        array, whose only ids are the single-task ones)."""
        if self.kind == "grouped":
            ids = set(self._node) | set(self._wl) | {i for p in self._task for i in p}
            counts = (len(self._node), len(self._wl))
        else:
            ids = {i for p in self._pairs for i in p}
            counts = (len({p[0] for p in self._pairs}), len({p[1] for p in self._pairs}))
        if ids <= {SINGLE_ID}:
            return ""
        return f"{counts[0]} node(s) and {counts[1]} workload(s)"

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


def _validate(meta: dict[str, Any], arrays: dict[str, np.ndarray], *, where: str) -> None:
    """Structural checks shared by :meth:`Predictor.from_estimator` and :meth:`Predictor.load`."""
    try:
        kind = meta["kind"]
        d = len(meta["feature_names"])
        need: dict[str, tuple[int, ...]] = {"center": (d,)}
        if kind == "grouped":
            need.update(
                w0=(d,),
                node_W=(len(meta["node_ids"]), d),
                workload_W=(len(meta["workload_ids"]), d),
                task_W=(len(meta["task_pairs"]), d),
            )
            scalars = [meta["intercept"], *meta["platt"]]
        elif kind == "wrangler":
            P = len(meta["pairs"])
            need.update(
                pair_W=(P, d), pair_b=(P,), pair_platt=(P, 2), fallback_W=(d,), fallback=(3,)
            )
            scalars = []
        else:
            raise ArtifactError(f"{where}: unknown predictor kind {kind!r}")
        if not 0.0 < float(meta["threshold"]) < 1.0:
            raise ArtifactError(f"{where}: threshold {meta['threshold']!r} not in (0, 1)")
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ArtifactError):
            raise
        raise ArtifactError(f"{where}: incomplete predictor metadata ({exc!r})") from exc
    for k, shape in need.items():
        a = arrays.get(k)
        if a is None or a.shape != shape or a.dtype != np.float64:
            got = None if a is None else (a.shape, str(a.dtype))
            raise ArtifactError(f"{where}: array {k!r} should be float64 {shape}, got {got}")
        if not np.isfinite(a).all():
            raise ArtifactError(f"{where}: array {k!r} has NaN or infinite values")
    if not all(isinstance(s, int | float) and math.isfinite(s) for s in scalars):
        raise ArtifactError(f"{where}: non-finite intercept or calibration")


def _find_artifact_dir(root: Path) -> Path:
    for cand in (root, root / "predictor", root / "artifacts" / "predictor"):
        if (cand / META_FILE).is_file():
            return cand
    found = sorted(p.parent for p in root.rglob(META_FILE))
    if len(found) == 1:
        return found[0]
    if not found:
        raise FileNotFoundError(
            f"no {META_FILE} under the downloaded artifacts at {root} (expected a "
            f"'predictor/' directory in the MLflow model's artifacts)"
        )
    raise ArtifactError(f"several predictor artifacts under {root}: {[str(p) for p in found]}")


def _artifact_location(uri: str, store_uri: str) -> str:
    """The artifact URI (``file:///...``, ``s3://...``) behind a ``models:/NAME@ALIAS``,
    ``models:/NAME/VERSION`` or ``runs:/RUN/PATH`` URI, looked up in ``store_uri`` (tracking
    and registry alike: MLflow's own download ignores a registry passed to it and opens the
    default one, creating ``./mlflow.db``)."""
    from mlflow import MlflowClient

    client = MlflowClient(store_uri, registry_uri=store_uri)
    if uri.startswith("models:/"):
        ref = uri[len("models:/") :]
        name, sep, alias = ref.partition("@")
        if sep:
            version = client.get_model_version_by_alias(name, alias).version
        else:
            name, _, version = ref.partition("/")
        return client.get_model_version_download_uri(name, version)
    if uri.startswith("runs:/"):
        run_id, _, sub = uri[len("runs:/") :].partition("/")
        return client.get_run(run_id).info.artifact_uri.rstrip("/") + "/" + sub
    return uri  # mlflow-artifacts:/ and the like: MLflow resolves those itself


def _relocated_artifact(where: str, store_uri: str) -> Path | None:
    """Where artifacts recorded at ``where`` are now, when their run directory was moved.

    The store (``sqlite:///DIR/mlflow.db``, as ``straggler train`` writes it) records absolute
    artifact paths under ``OLD/mlartifacts/``. When that path no longer exists and
    ``DIR/mlartifacts/`` holds the same relative path, that is the model. ``None`` otherwise
    (not a SQLite store, not a file artifact, or nothing there).
    """
    import re
    from urllib.parse import unquote, urlparse

    m = re.match(r"^sqlite:///(.+)$", store_uri)
    parsed = urlparse(where)
    if not m or parsed.scheme not in ("", "file"):
        return None
    old = unquote(parsed.path)
    if Path(old).exists() or "/mlartifacts/" not in old:
        return None
    candidate = Path(m.group(1)).parent / "mlartifacts" / old.split("/mlartifacts/", 1)[1]
    return candidate if candidate.exists() else None


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
