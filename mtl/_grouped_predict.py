"""The prediction methods of :class:`~mtl.GroupedMTLSVC` (raw margin, calibrated
probabilities, decision function, labels and the combined weights of one pair).

Public names
------------
GroupedPrediction
    A mixin over the fitted attributes ``fit`` sets; it holds no state of its own.

Examples
--------
>>> from mtl import GroupedMTLSVC, make_grouped_classification
>>> X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
>>> model = GroupedMTLSVC().fit(X, y)
>>> isinstance(model, GroupedPrediction)
True
>>> W, b = model.combined_weights("n0", "w0")
>>> bool(np.allclose(X.iloc[:1][model.feature_names_in_].to_numpy() @ W + b,
...                  model.margin(X.iloc[:1].assign(node="n0", workload="w0"))))
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.special import expit, logit
from sklearn.utils.validation import check_is_fitted

from ._frame import SINGLE_ID, lookup_ids
from ._grouped_core import GroupedCore
from ._grouped_core import to_local as _to_local
from ._grouped_warnings import warn_unseen_workloads


class GroupedPrediction:
    """Prediction from a fitted :class:`~mtl.GroupedMTLSVC` (a mixin: no state of its own).

    Examples
    --------
    >>> from mtl import GroupedMTLSVC
    >>> issubclass(GroupedMTLSVC, GroupedPrediction)
    True
    """

    classes_: np.ndarray
    threshold: float
    mean_: np.ndarray
    scale_: np.ndarray
    intercept_: float
    calibration_slope_: float
    calibration_intercept_: float
    node_weights_: dict
    workload_weights_: dict
    task_weights_: dict
    _node_index: pd.Index
    _workload_index: pd.Index
    _core: GroupedCore
    _blocks_active: tuple[str, ...]

    if TYPE_CHECKING:

        def _prepare(self, X: Any, *, reset: bool, y: Any = None) -> tuple[Any, Any, Any, Any]: ...

    # ------------------------------------------------------------------ prediction
    def margin(self, X) -> np.ndarray:
        """Raw SVM score ``x . W_t + b`` (eq. 3.11) in standardised units, one per row."""
        check_is_fitted(self)
        Xc, nodes, workloads, _ = self._prepare(X, reset=False)
        if nodes is None:
            known = {*self.node_weights_, *self.workload_weights_}
            known |= {i for pair in self.task_weights_ for i in pair}
            if known - {SINGLE_ID}:
                raise ValueError(
                    f"X has no 'node' and 'workload' columns, but the model was fitted on "
                    f"{len(self.node_weights_)} node(s) and {len(self.workload_weights_)} "
                    "workload(s); give both columns (without them every row would be scored "
                    "with the shared w0 block alone)"
                )
        n = Xc.shape[0]
        Xs = np.subtract(Xc, self.mean_, order="C")
        Xs /= self.scale_
        wl_codes = lookup_ids(self._workload_index, workloads, n)
        if {"workload", "task"} & set(self._blocks_active) and (wl_codes < 0).any():
            new = pd.unique(np.asarray(workloads, dtype=object)[wl_codes < 0]).tolist()
            warn_unseen_workloads(new, int((wl_codes < 0).sum()))
        return self._core.margin(Xs, lookup_ids(self._node_index, nodes, n), wl_codes)

    def predict_proba(self, X) -> np.ndarray:
        """Calibrated probabilities, columns ordered as ``classes_``."""
        check_is_fitted(self)
        p = expit(self.calibration_slope_ * self.margin(X) + self.calibration_intercept_)
        return np.column_stack([1.0 - p, p])

    def decision_function(self, X) -> np.ndarray:
        """Calibrated log-odds minus ``logit(threshold)``; positive means straggler."""
        check_is_fitted(self)
        z = self.calibration_slope_ * self.margin(X) + self.calibration_intercept_
        return z - float(logit(self.threshold))

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where the calibrated probability exceeds ``threshold``."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def combined_weights(self, node, workload) -> tuple[np.ndarray, float]:
        """``(W, b')`` in original units such that the raw margin is ``x . W + b'``.

        ``node``/``workload`` may be unseen; the unseen-id rule of the class applies.
        """
        check_is_fitted(self)
        n_code = lookup_ids(self._node_index, np.array([node], dtype=object), 1)
        l_code = lookup_ids(self._workload_index, np.array([workload], dtype=object), 1)
        core = self._core
        W = core.combined(
            _to_local(core.node_codes, n_code), _to_local(core.workload_codes, l_code)
        )[0]
        W = W / self.scale_
        return W, float(self.intercept_ - W @ self.mean_)
