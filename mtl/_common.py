"""Helpers shared by :class:`~mtl.GroupedMTLSVC` and :class:`~mtl.WranglerSVC`."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def binary_target(y: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, y_pm)`` with ``y_pm`` in {-1, +1}; the second class is the positive one."""
    # scikit-learn is imported when fitting, not by ``import mtl`` (the predictor does not)
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import column_or_1d

    y = column_or_1d(y, warn=True)
    check_classification_targets(y)
    classes, y_idx = np.unique(y, return_inverse=True)
    if classes.shape[0] < 2:
        raise ValueError(f"y has only one class ({classes[0]!r}); a classifier needs two classes")
    if classes.shape[0] > 2:
        raise ValueError(
            f"Only binary classification is supported; y has {classes.shape[0]} classes"
        )
    return classes, np.where(y_idx == 1, 1.0, -1.0)


def class_weights(class_weight: object, classes: np.ndarray, y_pm: np.ndarray) -> np.ndarray:
    """Per-row loss weight from ``class_weight`` (None, ``"balanced"`` or ``{label: w}``)."""
    n = y_pm.shape[0]
    if class_weight is None:
        return np.ones(n)
    pos = y_pm > 0
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(
                f"class_weight must be None, 'balanced' or a dict, got {class_weight!r}"
            )
        n_pos = max(int(pos.sum()), 1)
        n_neg = max(n - int(pos.sum()), 1)
        return np.where(pos, n / (2.0 * n_pos), n / (2.0 * n_neg))
    if isinstance(class_weight, dict):
        w = np.ones(2)
        for k, label in enumerate(classes):
            value = class_weight.get(label, class_weight.get(str(label), 1.0))
            if not (isinstance(value, numbers.Real) and 0 < float(value) < np.inf):
                raise ValueError(
                    f"class_weight[{label!r}] must be a positive number, got {value!r}"
                )
            w[k] = float(value)
        return np.where(pos, w[1], w[0])
    raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {class_weight!r}")


def standardiser(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scale (std, 1 where a counter is constant) of the training counters."""
    mean = X.mean(axis=0)
    sq = np.zeros_like(mean)
    for s in range(0, X.shape[0], 65536):  # chunked: no n x d temporary
        sq += ((X[s : s + 65536] - mean) ** 2).sum(axis=0)
    scale = np.sqrt(sq / X.shape[0])
    scale[~(scale > 1e-12 * np.maximum(1.0, np.abs(mean)))] = 1.0
    return mean, scale


def stratified_folds(y_pm: np.ndarray, n_folds: int, seed: Any) -> np.ndarray:
    """Fold index of every row: each class shuffled by a seeded Generator, dealt round robin.

    Examples
    --------
    >>> f = stratified_folds(np.array([1, 1, 1, -1, -1, -1]), 3, 0)
    >>> sorted(f[:3].tolist()), sorted(f[3:].tolist())
    ([0, 1, 2], [0, 1, 2])
    """
    rng = np.random.default_rng(seed)
    folds = np.empty(y_pm.shape[0], dtype=np.intp)
    offset = 0
    for label in (-1.0, 1.0):
        idx = np.flatnonzero(y_pm == label)
        idx = idx[rng.permutation(idx.shape[0])]
        folds[idx] = (np.arange(idx.shape[0]) + offset) % n_folds
        offset += idx.shape[0]
    return folds


def check_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """Validate a positive (optionally infinite) real parameter, naming it in the error."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        v = float(value)
        if v > 0 and (allow_inf or np.isfinite(v)):
            return v
    kind = "a positive number or inf" if allow_inf else "a positive finite number"
    raise ValueError(f"{name} must be {kind}, got {value!r}")


#: Finite regularisers must lie in this closed range. Below it the problem is numerically
#: unregularised (``nu=1e-300`` makes the solvers spin for hours); above it every weight
#: shrinks to ~0 on any realistic number of rows and the calibrated probabilities collapse.
REGULARISER_RANGE: tuple[float, float] = (1e-8, 1e8)


def check_regulariser(name: str, value: object) -> float:
    """Validate a block regulariser: ``inf`` (no block) or a number in
    :data:`REGULARISER_RANGE`, naming the parameter, the value and the range in the error.

    Examples
    --------
    >>> check_regulariser("nu", 2.0), check_regulariser("tau", float("inf"))
    (2.0, inf)
    >>> check_regulariser("nu", 1e-300)
    Traceback (most recent call last):
    ...
    ValueError: nu must be inf or a number in [1e-08, 1e+08], got 1e-300
    """
    v = check_positive(name, value, allow_inf=True)
    lo, hi = REGULARISER_RANGE
    if np.isfinite(v) and not lo <= v <= hi:
        raise ValueError(f"{name} must be inf or a number in [{lo:g}, {hi:g}], got {value!r}")
    return v


def check_threshold(value: object) -> float:
    if not (isinstance(value, numbers.Real) and 0.0 < float(value) < 1.0):
        raise ValueError(f"threshold must be a probability in (0, 1), got {value!r}")
    return float(value)


def check_cv(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 2:
        return int(value)
    raise ValueError(f"calibration_cv must be None or an integer >= 2, got {value!r}")


def rowwise_dot(X: np.ndarray, W: np.ndarray, which: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """``out[i] = X[i] . W[which[i]]`` in chunks (never an n x d gathered copy).

    Works on C- or Fortran-ordered ``X`` (a DataFrame's values are usually Fortran-ordered);
    each chunk is made row-contiguous before the product.
    """
    n = X.shape[0]
    out = np.empty(n)
    for s in range(0, n, chunk):
        e = min(s + chunk, n)
        np.einsum("ij,ij->i", np.ascontiguousarray(X[s:e]), W[which[s:e]], out=out[s:e])
    return out
