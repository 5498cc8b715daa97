"""Wrangler's baseline: one linear SVM per (node, workload) pair (seed 004, ref. [4])."""

from __future__ import annotations

import numbers
import os
import warnings

import numpy as np
from scipy.special import expit, logit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from sklearn.utils.validation import check_is_fitted, validate_data

from ._calibration import cross_fitted_platt
from ._common import (
    binary_target,
    check_cv,
    check_positive,
    check_threshold,
    class_weights,
    rowwise_dot,
    standardiser,
)
from ._frame import encode_ids, lookup_ids, split_ids

MODEL = "model"
TOO_FEW_ROWS = "too_few_rows"
ONE_CLASS = "one_class"
UNSEEN = "unseen"
_STATUSES = (MODEL, TOO_FEW_ROWS, ONE_CLASS, UNSEEN)


class WranglerSVC(ClassifierMixin, BaseEstimator):
    """One calibrated linear SVM per (node, workload) pair, as Wrangler (Yadwadkar et al. 2014).

    Pairs with too little data -- fewer than ``min_rows`` rows, or a single class -- get no
    model: they are recorded in ``insufficient_pairs_`` with the reason and predict with the
    fallback, as do pairs unseen in training. Evaluations count them through
    :meth:`pair_status` / :meth:`is_supported` (Table 1's "Insufficient data").

    Parameters
    ----------
    C : float, default=1.0
        LinearSVC's ``C`` for every pair (``1/2 ||w||^2 + C sum loss``).
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        ``"squared_hinge"`` uses liblinear's primal solver, ``"hinge"`` its dual.
    class_weight : None, "balanced" or dict, default="balanced"
        Class-imbalance handling inside every pair's SVM.
    min_rows : int, default=10
        A pair needs at least this many training rows (and both classes) for a model.
    fallback : {"global", "prior"}, default="global"
        What insufficient and unseen pairs predict with: ``"global"`` a calibrated linear SVM
        trained on all rows; ``"prior"`` the training straggler rate as a constant probability.
    threshold : float, default=0.5
        ``predict`` says straggler when the calibrated probability exceeds it.
    calibration_cv : int or None, default=3
        Per pair, Platt scaling on cross-fitted decision values from this many stratified folds
        (then the pair's SVM is refit on all its rows); ``None`` or a pair whose minority class
        has fewer rows than folds uses in-sample decision values.
    intercept_scaling : float, default=1.0
        LinearSVC's (the per-pair intercept is penalised as in a standard linear SVM).
    tol, max_iter : LinearSVC's stopping parameters.
    random_state : int or None, default=0
        Seed of the calibration folds.
    verbose : bool, default=False
        Show a progress bar over the pairs (tqdm; ``TQDM_DISABLE=1`` silences it).

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_, mean_, scale_
        As :class:`GroupedMTLSVC` (counters standardised with global statistics).
    pair_weights_ : dict
        ``(node, workload)`` -> weights in original counter units; the margin is
        ``(x - mean_) . pair_weights_[p] + pair_intercepts_[p]``.
    pair_intercepts_ : dict
    pair_calibration_ : dict
        ``(node, workload)`` -> Platt ``(slope, intercept)`` on the margin.
    insufficient_pairs_ : dict
        ``(node, workload)`` -> ``"too_few_rows"`` or ``"one_class"``.
    fallback_weights_, fallback_intercept_, fallback_calibration_
        The fallback model in the same form (zeros / 0 / ``(0, logit(prior))`` for
        ``fallback="prior"``).
    n_iter_ : int
        Largest liblinear iteration count over all the SVMs fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from mtl import make_grouped_classification
    >>> X, y = make_grouped_classification(600, 3, 2, 4, seed=0)
    >>> keep = ~((X.node == "n0") & (X.workload == "w1")).to_numpy()
    >>> keep[np.flatnonzero(~keep)[:3]] = True  # leave that pair only 3 rows
    >>> model = WranglerSVC().fit(X[keep], y[keep])
    >>> model.insufficient_pairs_
    {('n0', 'w1'): 'too_few_rows'}
    >>> status = model.pair_status(X[keep])
    >>> int((status == "too_few_rows").sum()), int((~model.is_supported(X[keep])).sum())
    (3, 3)
    >>> model.pair_status(X.head(1).assign(node="n9")).tolist()
    ['unseen']
    """

    #: the largest liblinear iteration count of the fits so far (set by ``fit``)
    _n_iter: int

    def __init__(
        self,
        C=1.0,
        loss="squared_hinge",
        class_weight="balanced",
        min_rows=10,
        fallback="global",
        threshold=0.5,
        calibration_cv=3,
        intercept_scaling=1.0,
        tol=1e-4,
        max_iter=1000,
        random_state=0,
        verbose=False,
    ):
        self.C = C
        self.loss = loss
        self.class_weight = class_weight
        self.min_rows = min_rows
        self.fallback = fallback
        self.threshold = threshold
        self.calibration_cv = calibration_cv
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _check_params(self) -> None:
        check_positive("C", self.C)
        check_positive("tol", self.tol)
        check_positive("intercept_scaling", self.intercept_scaling)
        check_threshold(self.threshold)
        check_cv(self.calibration_cv)
        if self.loss not in ("squared_hinge", "hinge"):
            raise ValueError(f"loss must be 'squared_hinge' or 'hinge', got {self.loss!r}")
        if self.fallback not in ("global", "prior"):
            raise ValueError(f"fallback must be 'global' or 'prior', got {self.fallback!r}")
        ok = isinstance(self.min_rows, numbers.Integral) and not isinstance(self.min_rows, bool)
        if not (ok and int(self.min_rows) >= 2):
            raise ValueError(f"min_rows must be an integer >= 2, got {self.min_rows!r}")
        if not (isinstance(self.max_iter, numbers.Integral) and int(self.max_iter) >= 1):
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")

    def _svc(self) -> LinearSVC:
        return LinearSVC(
            C=float(self.C),
            loss=self.loss,
            dual=(self.loss == "hinge"),
            class_weight=self._svc_class_weight,
            intercept_scaling=float(self.intercept_scaling),
            tol=float(self.tol),
            max_iter=int(self.max_iter),
        )

    def _fit_one(self, Xs: np.ndarray, y_pm: np.ndarray) -> tuple[np.ndarray, float, float, float]:
        """Calibrated SVM on one set of rows: ``(w, b, platt_a, platt_c)``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svc, a, c, _, _ = cross_fitted_platt(
                lambda rows: self._svc().fit(Xs[rows], y_pm[rows]),
                lambda svc, rows: svc.decision_function(Xs[rows]),
                y_pm,
                check_cv(self.calibration_cv),
                self.random_state,
            )
        self._n_iter = max(self._n_iter, int(np.max(svc.n_iter_)))
        return svc.coef_.ravel().copy(), float(svc.intercept_[0]), a, c

    def fit(self, X, y):
        """Fit one calibrated SVM per pair with enough data, and the fallback.

        Parameters
        ----------
        X : DataFrame with ``node``, ``workload`` and counter columns, or array (n, d)
        y : array-like of shape (n,), two classes

        Returns
        -------
        self
        """
        self._check_params()
        counters, nodes, workloads = split_ids(X)
        Xc, y = validate_data(self, counters, y, dtype=np.float64)
        classes, y_pm = binary_target(y)
        cw = class_weights(self.class_weight, classes, y_pm)  # validates class_weight
        if isinstance(self.class_weight, dict):  # labels -> the internal -1 / +1
            self._svc_class_weight = {-1.0: float(cw[y_pm < 0][0]), 1.0: float(cw[y_pm > 0][0])}
        else:
            self._svc_class_weight = self.class_weight
        mean, scale = standardiser(Xc)
        Xs = np.subtract(Xc, mean, order="C")
        Xs /= scale
        del Xc
        n, d = Xs.shape
        node_index, node_code = encode_ids(nodes, n)
        wl_index, wl_code = encode_ids(workloads, n)
        key = node_code.astype(np.int64) * len(wl_index) + wl_code
        order = np.argsort(key, kind="stable")
        uniq, starts = np.unique(key[order], return_index=True)
        bounds = np.append(starts, n)

        self._n_iter = 0
        pairs, W, B, P = [], [], [], []
        insufficient = {}
        from tqdm.auto import tqdm

        quiet = not self.verbose or os.environ.get("TQDM_DISABLE", "") not in ("", "0")
        bar = tqdm(uniq, desc="WranglerSVC pairs", disable=quiet)
        for j, k in enumerate(bar):
            pair = (node_index[int(k // len(wl_index))], wl_index[int(k % len(wl_index))])
            rows = order[bounds[j] : bounds[j + 1]]
            yk = y_pm[rows]
            if rows.shape[0] < self.min_rows:
                insufficient[pair] = TOO_FEW_ROWS
                continue
            if np.all(yk == yk[0]):
                insufficient[pair] = ONE_CLASS
                continue
            w, b, a, c = self._fit_one(Xs[rows], yk)
            pairs.append(pair)
            W.append(w)
            B.append(b)
            P.append((a, c))

        if self.fallback == "global":
            fw, fb, fa, fc = self._fit_one(Xs, y_pm)
        else:
            prior = ((y_pm > 0).sum() + 1.0) / (n + 2.0)
            fw, fb, fa, fc = np.zeros(d), 0.0, 0.0, float(logit(prior))

        self.classes_ = classes
        self.mean_, self.scale_ = mean, scale
        self._pairs = pairs
        self._node_index, self._workload_index = node_index, wl_index
        # (node, workload) code -> model index (fallback: len(pairs)) and status code
        self._pair_table = np.full((len(node_index), len(wl_index)), len(pairs), dtype=np.intp)
        self._status_table = np.full(self._pair_table.shape, _STATUSES.index(UNSEEN))
        for i, (nd, wl) in enumerate(pairs):
            j, k = node_index.get_loc(nd), wl_index.get_loc(wl)
            self._pair_table[j, k] = i
            self._status_table[j, k] = _STATUSES.index(MODEL)
        for (nd, wl), reason in insufficient.items():
            self._status_table[node_index.get_loc(nd), wl_index.get_loc(wl)] = _STATUSES.index(
                reason
            )
        # standardised-space stacks, the fallback last
        self._W = np.vstack([*W, fw]) if W else fw[None, :].copy()
        self._b = np.array([*B, fb])
        self._platt = np.array([*P, (fa, fc)], dtype=np.float64).reshape(-1, 2)
        self.insufficient_pairs_ = insufficient
        self.pair_weights_ = {p: W[i] / scale for i, p in enumerate(pairs)}
        self.pair_intercepts_ = {p: B[i] for i, p in enumerate(pairs)}
        self.pair_calibration_ = {p: P[i] for i, p in enumerate(pairs)}
        self.fallback_weights_ = fw / scale
        self.fallback_intercept_ = fb
        self.fallback_calibration_ = (fa, fc)
        self.n_iter_ = self._n_iter
        return self

    # ------------------------------------------------------------------ prediction
    def _rows(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Standardised counters, model index per row (fallback last), status code per row."""
        check_is_fitted(self)
        counters, nodes, workloads = split_ids(X)
        Xc = validate_data(self, counters, reset=False, dtype=np.float64)
        n = Xc.shape[0]
        nc = lookup_ids(self._node_index, nodes, n)
        lc = lookup_ids(self._workload_index, workloads, n)
        known = (nc >= 0) & (lc >= 0)
        which = np.full(n, len(self._pairs), dtype=np.intp)
        status = np.full(n, len(_STATUSES) - 1, dtype=np.intp)  # unseen
        which[known] = self._pair_table[nc[known], lc[known]]
        status[known] = self._status_table[nc[known], lc[known]]
        Xs = np.subtract(Xc, self.mean_, order="C")
        Xs /= self.scale_
        return Xs, which, status

    def pair_status(self, X) -> np.ndarray:
        """Per row: ``"model"``, ``"too_few_rows"``, ``"one_class"`` or ``"unseen"``."""
        _, _, status = self._rows(X)
        return np.array(_STATUSES, dtype=object)[status]

    def is_supported(self, X) -> np.ndarray:
        """Boolean per row: True where the row's pair has its own SVM (no fallback)."""
        _, which, _ = self._rows(X)
        return which < len(self._pairs)

    def margin(self, X) -> np.ndarray:
        """Raw SVM score of each row's pair model (the fallback's where it has none)."""
        Xs, which, _ = self._rows(X)
        return rowwise_dot(Xs, self._W, which) + self._b[which]

    def _log_odds(self, X) -> np.ndarray:
        Xs, which, _ = self._rows(X)
        m = rowwise_dot(Xs, self._W, which) + self._b[which]
        return self._platt[which, 0] * m + self._platt[which, 1]

    def predict_proba(self, X) -> np.ndarray:
        """Calibrated probabilities, columns ordered as ``classes_``."""
        p = expit(self._log_odds(X))
        return np.column_stack([1.0 - p, p])

    def decision_function(self, X) -> np.ndarray:
        """Calibrated log-odds minus ``logit(threshold)``; positive means straggler."""
        return self._log_odds(X) - float(logit(self.threshold))

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where the calibrated probability exceeds ``threshold``."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
