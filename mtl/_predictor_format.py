"""The predictor artifact's format: its file names and version, its checksums and the
structural checks every artifact passes before a :class:`~mtl.Predictor` is built from it.

Public names
------------
FORMAT, FORMAT_VERSION, META_FILE, ARRAYS_FILE, MAX_META_BYTES
    What ``predictor.json`` declares itself as, its file names and the cap on its size.
ArtifactError
    A predictor artifact is missing a part, corrupt, truncated or tampered with.
sha256, canonical
    Hex SHA-256 of bytes; the canonical JSON bytes a metadata checksum is taken over.
validate_artifact
    The structural checks (array shapes and dtypes, finite numbers, threshold in (0, 1)).

Examples
--------
>>> canonical({"b": 1, "a": [1.5]})
b'{"a":[1.5],"b":1}'
>>> sha256(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
True
>>> validate_artifact({"kind": "bogus", "feature_names": []}, {}, where="here")
Traceback (most recent call last):
...
mtl._predictor_format.ArtifactError: here: unknown predictor kind 'bogus'
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

FORMAT = "straggler-mtl-predictor"
FORMAT_VERSION = 1
META_FILE = "predictor.json"
ARRAYS_FILE = "predictor.npz"
MAX_META_BYTES = 16 * 2**20
"""Cap on the size of ``predictor.json`` (a real one is a few hundred KB at most)."""


class ArtifactError(ValueError):
    """A predictor artifact is missing a part, corrupt, truncated or tampered with."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(meta: Mapping[str, Any]) -> bytes:
    return json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def validate_artifact(meta: dict[str, Any], arrays: dict[str, np.ndarray], *, where: str) -> None:
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
