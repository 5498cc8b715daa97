"""The grouped multi-task SVM (seed 004, eq. 3.15-3.16) as a scikit-learn classifier."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit, logit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from ._calibration import cross_fitted_platt
from ._common import (
    binary_target,
    check_cv,
    check_positive,
    check_regulariser,
    check_threshold,
    class_weights,
    rowwise_dot,
    standardiser,
)
from ._frame import SINGLE_ID, encode_ids, lookup_ids, split_ids
from ._solver import objective, solve_explicit, solve_implicit
from ._structure import VARIANTS, TaskStructure, active_blocks, structure_from_codes

AUTO_EXPLICIT_MAX_NNZ = 5_000_000

#: ``fit`` warns when the mean training probability of either class is off its base rate by
#: more than this factor (calibrated probabilities collapsed).
COLLAPSE_FACTOR = 10.0


class DegenerateModelWarning(UserWarning):
    """A fitted model's probabilities collapsed (e.g. regularisers that zero every weight)."""


class UnseenWorkloadWarning(UserWarning):
    """Rows of a workload the model never saw in training are scored from the shared blocks
    (``w0``, the node's block) alone."""


def warn_unseen_workloads(unseen: list, rows: int, stacklevel: int = 3) -> None:
    """Warn that ``rows`` rows of the workloads ``unseen`` get no workload-specific weights."""
    if unseen:
        warnings.warn(
            f"{rows} row(s) of workload(s) {sorted(map(str, unseen))[:5]} unseen in training: "
            "scored from the shared blocks only (no workload-specific weights)",
            UnseenWorkloadWarning,
            stacklevel=stacklevel,
        )


def _warn_if_collapsed(model, proba_mean: float, base_rate: float) -> None:
    """Warn when ``proba_mean`` is off ``base_rate`` by more than :data:`COLLAPSE_FACTOR` in
    either class (probabilities ~0 or ~1 everywhere)."""
    if not 0.0 < base_rate < 1.0:
        return
    low = proba_mean * COLLAPSE_FACTOR < base_rate
    high = (1.0 - proba_mean) * COLLAPSE_FACTOR < 1.0 - base_rate
    if low or high:
        warnings.warn(
            f"GroupedMTLSVC: predicted probabilities collapsed (mean {proba_mean:.3g} on the "
            f"training rows, base rate {base_rate:.3g}) with lambda0={model.lambda0}, "
            f"nu={model.nu}, omega={model.omega}, tau={model.tau}: the regularisers shrink "
            "every weight to ~0; use smaller ones",
            DegenerateModelWarning,
            stacklevel=3,
        )


@dataclass
class _Core:
    """One solved grouped model over the ids present in its training rows.

    ``node_codes`` / ``workload_codes`` list the global id codes present (their position is the
    local code used by ``structure``); ``blocks`` are in standardised units.
    """

    node_codes: np.ndarray
    workload_codes: np.ndarray
    structure: TaskStructure
    blocks: dict[str, np.ndarray]
    intercept: float
    objective: float
    n_iter: int
    converged: bool

    def combined(self, node_local: np.ndarray, wl_local: np.ndarray) -> np.ndarray:
        """Weight vectors for (node, workload) local codes; -1 means unseen (block skipped)."""
        d = next(iter(self.blocks.values())).shape[1]
        W = np.zeros((node_local.shape[0], d))
        if "w0" in self.blocks:
            W += self.blocks["w0"][0]
        if "node" in self.blocks:
            ok = node_local >= 0
            W[ok] += self.blocks["node"][node_local[ok]]
        if "workload" in self.blocks:
            ok = wl_local >= 0
            W[ok] += self.blocks["workload"][wl_local[ok]]
        if "task" in self.blocks:
            s = self.structure
            key = s.task_node.astype(np.int64) * s.n_workloads + s.task_workload
            ok = (node_local >= 0) & (wl_local >= 0)
            q = node_local.astype(np.int64) * s.n_workloads + wl_local
            pos = np.searchsorted(key, q)
            pos = np.minimum(pos, key.shape[0] - 1)
            hit = ok & (key[pos] == q)
            W[hit] += self.blocks["task"][pos[hit]]
        return W

    def margin(self, Xs: np.ndarray, node_code: np.ndarray, wl_code: np.ndarray) -> np.ndarray:
        """Raw SVM score ``x . W_t + b`` for standardised rows with global id codes."""
        node_local = _to_local(self.node_codes, node_code)
        wl_local = _to_local(self.workload_codes, wl_code)
        L1 = self.workload_codes.shape[0] + 1
        key = (node_local.astype(np.int64) + 1) * L1 + (wl_local + 1)
        inv, uniq = pd.factorize(key)
        W = self.combined(uniq // L1 - 1, uniq % L1 - 1)
        return rowwise_dot(Xs, W, inv) + self.intercept


def _to_local(present: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Map global codes to positions in the sorted array ``present`` (-1 when absent)."""
    if present.shape[0] == 0:
        return np.full(codes.shape, -1, dtype=np.intp)
    pos = np.minimum(np.searchsorted(present, codes), present.shape[0] - 1)
    return np.where((present[pos] == codes) & (codes >= 0), pos, -1).astype(np.intp)


class GroupedMTLSVC(ClassifierMixin, BaseEstimator):
    """Grouped multi-task linear SVM of Yadwadkar et al. (seed 004, eq. 3.15-3.16).

    Every (node, workload) pair ``t`` is a task with weight vector
    ``W_t = w0 + w_node + w_workload + v_t`` (eq. 3.15) and the model minimises::

        lambda0 ||w0||^2 + sum_n c_n ||w_n||^2 + sum_l c_l ||w_l||^2 + tau/T sum_t ||v_t||^2
            + C sum_i class_weight(y_i) * loss(y_i (x_i . W_t(i) + b))

    with ``c_n = nu #(n) / T`` and ``c_l = omega #(l) / T``, ``#(g)`` the number of pairs present
    in group ``g`` and ``T`` the number of pairs present (eq. 3.6; on a full N x L grid these are
    the ``nu / N`` and ``omega / L`` of eq. 3.16). The seed's objective has ``C = 1``.

    Parameters
    ----------
    variant : {"f0", "fn", "fl", "f0nl", "f0t", "f0tl", "f0nlt"}, default="f0nl"
        Which blocks exist (seed section 4.1; ``f0nlt`` has all four).
    lambda0, nu, omega, tau : float, default=1.0
        Regularisers of the w0, node, workload and task blocks; ``np.inf`` removes the block
        (a block outside ``variant`` is absent whatever its regulariser). A finite value must
        lie in ``mtl.REGULARISER_RANGE`` (1e-8 to 1e8; ``fit`` raises a ``ValueError`` naming
        the parameter otherwise). Within it, regularisers so strong that every weight shrinks
        to ~0 make the calibrated probabilities collapse: ``fit`` then warns
        (:class:`DegenerateModelWarning`) when the mean probability on the training rows is
        off the training base rate by more than a factor of 10 in either class.
    C : float, default=1.0
        Weight of the loss term.
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        ``solver="implicit"`` optimises the squared hinge only; ``"hinge"`` (the seed's
        ``xi``) needs ``solver="explicit"`` (LinearSVC, dual coordinate descent).
    solver : {"implicit", "explicit", "auto"}, default="auto"
        ``"implicit"``: exact trust-region Newton on the squared hinge without building the
        feature map (fast, memory ~ the data). ``"explicit"``: the CSR block feature map of
        eq. 3.10 and :class:`sklearn.svm.LinearSVC` (the reference; its intercept carries a
        negligible penalty ``b^2 / (2 intercept_scaling^2)``). ``"auto"``: explicit when the
        map has at most ``AUTO_EXPLICIT_MAX_NNZ`` (5e6) non-zeros or ``loss="hinge"``, else
        implicit. The implicit solver loops over tasks in Python, so with thousands of tiny
        groups (a few rows each) on small data liblinear is faster; at 1e5+ rows the implicit
        path wins (see ``bench/bench_mtl_fit.py``).
    class_weight : None, "balanced" or dict, default=None
        Loss weight per class (``"balanced"``: ``n / (2 n_class)``).
    threshold : float, default=0.5
        ``predict`` says "straggler" (``classes_[1]``) when the calibrated probability exceeds it
        (Wrangler acts only on confident predictions).
    calibration_cv : int or None, default=3
        Platt scaling is fitted on cross-fitted decision values from this many stratified folds,
        then the model is refit on all data. ``None`` (or a minority class smaller than the
        fold count) uses in-sample decision values instead (optimistic; see
        ``calibration_mode_``).
    tol : float, default=1e-4
        Stopping tolerance (implicit: gradient norm relative to its value at zero; explicit:
        LinearSVC's ``tol``).
    max_iter : int, default=1000
        Newton iterations (implicit) or LinearSVC's ``max_iter``.
    intercept_scaling : float, default=100.0
        Explicit solver only (see ``solver``). liblinear's dual solver (``loss="hinge"``)
        converges slowly when it is large; use ~1 there.
    random_state : int or None, default=0
        Seed of the calibration folds (a local :class:`numpy.random.Generator`).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive ("straggler") class.
    n_features_in_ : int
        Number of counter columns (``node``/``workload`` excluded).
    feature_names_in_ : ndarray of str
        Counter names, when fitted on a DataFrame with string column names.
    mean_, scale_ : ndarray of shape (n_features_in_,)
        Counter standardisation fitted on the training data.
    w0_ : ndarray of shape (n_features_in_,) or None
        Shared weights in original counter units (``None`` when the block is absent).
    node_weights_, workload_weights_ : dict
        Node id -> vector and workload id -> vector, original units (empty when absent).
    task_weights_ : dict
        ``(node, workload)`` -> ``v_t``, original units (empty when absent).
    intercept_ : float
        Unpenalised intercept ``b`` shared by all tasks. Units: the raw margin (eq. 3.11) is
        ``(x - mean_) . (w0_ + node_weights_[n] + workload_weights_[l] + task_weights_[(n, l)])
        + intercept_``; blocks that are absent or ids unseen in training contribute zero.
    calibration_slope_, calibration_intercept_ : float
        Platt sigmoid ``P(straggler) = 1 / (1 + exp(-(slope * margin + intercept)))``.
    calibration_mode_ : {"cross-fitted", "in-sample"}
    objective_ : float
        Objective (above, intercept unpenalised) at the final fit, standardised units.
    n_iter_ : int
        Solver iterations of the final fit.
    solver_ : {"implicit", "explicit"}
        The path that ran (resolves ``solver="auto"``).

    Notes
    -----
    Unseen ids: a pair unseen in training is scored with the blocks that exist -- ``f0nl``
    uses ``w0 + w_node + w_workload`` (seed section 3.4), ``f0t`` falls back to ``w0``, an unseen
    node contributes no node block, and so on. With no block left the score is the intercept.

    ``decision_function`` returns the calibrated log-odds minus ``logit(threshold)``, an
    increasing affine function of the raw margin that is positive exactly when ``predict``
    says straggler; :meth:`margin` gives the raw SVM score.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["c_cpu", "c_io", "c_mem"])
    >>> X["node"] = rng.choice(["n1", "n2", "n3"], 300)
    >>> X["workload"] = rng.choice(["FB2009", "FB2010"], 300)
    >>> y = (X["c_cpu"] + (X["node"] == "n1") * X["c_io"] > 0.5).astype(int)
    >>> model = GroupedMTLSVC(variant="f0nl").fit(X, y)
    >>> sorted(model.node_weights_)
    ['n1', 'n2', 'n3']
    >>> p = model.predict_proba(X)[:, 1]
    >>> bool(((p > 0.5) == model.predict(X)).all()), model.score(X, y) > 0.85
    (True, True)
    """

    def __init__(
        self,
        variant="f0nl",
        lambda0=1.0,
        nu=1.0,
        omega=1.0,
        tau=1.0,
        C=1.0,
        loss="squared_hinge",
        solver="auto",
        class_weight=None,
        threshold=0.5,
        calibration_cv=3,
        tol=1e-4,
        max_iter=1000,
        intercept_scaling=100.0,
        random_state=0,
    ):
        self.variant = variant
        self.lambda0 = lambda0
        self.nu = nu
        self.omega = omega
        self.tau = tau
        self.C = C
        self.loss = loss
        self.solver = solver
        self.class_weight = class_weight
        self.threshold = threshold
        self.calibration_cv = calibration_cv
        self.tol = tol
        self.max_iter = max_iter
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # ------------------------------------------------------------------ validation
    def _check_params(self) -> tuple[dict[str, float], tuple[str, ...]]:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {self.variant!r}")
        regs = {
            "w0": check_regulariser("lambda0", self.lambda0),
            "node": check_regulariser("nu", self.nu),
            "workload": check_regulariser("omega", self.omega),
            "task": check_regulariser("tau", self.tau),
        }
        blocks = active_blocks(self.variant, regs)
        if not blocks:
            raise ValueError(
                f"variant {self.variant!r} with lambda0={self.lambda0}, nu={self.nu}, "
                f"omega={self.omega}, tau={self.tau} leaves no block (all regularisers inf)"
            )
        check_positive("C", self.C)
        check_positive("tol", self.tol)
        check_positive("intercept_scaling", self.intercept_scaling)
        if not (isinstance(self.max_iter, int | np.integer) and self.max_iter >= 1):
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        if self.solver not in ("implicit", "explicit", "auto"):
            raise ValueError(
                f"solver must be 'implicit', 'explicit' or 'auto', got {self.solver!r}"
            )
        if self.loss not in ("squared_hinge", "hinge"):
            raise ValueError(f"loss must be 'squared_hinge' or 'hinge', got {self.loss!r}")
        if self.loss == "hinge" and self.solver == "implicit":
            raise ValueError(
                "loss='hinge' needs solver='explicit' (the implicit solver is smooth Newton "
                "on the squared hinge)"
            )
        check_threshold(self.threshold)
        check_cv(self.calibration_cv)
        return regs, blocks

    def _prepare(self, X, *, reset: bool, y=None):
        counters, nodes, workloads = split_ids(X)
        if reset:
            Xc, y = validate_data(self, counters, y, dtype=np.float64)
        else:
            Xc = validate_data(self, counters, reset=False, dtype=np.float64)
        return Xc, nodes, workloads, y

    # ------------------------------------------------------------------ fitting
    def _solver_used(self, map_nnz: int) -> str:
        if self.solver != "auto":
            return self.solver
        if self.loss == "hinge" or map_nnz <= AUTO_EXPLICIT_MAX_NNZ:
            return "explicit"
        return "implicit"

    def _fit_core(self, Xs, y_pm, sample_c, node_code, wl_code, regs, blocks) -> _Core:
        node_present, node_local = np.unique(node_code, return_inverse=True)
        wl_present, wl_local = np.unique(wl_code, return_inverse=True)
        structure, row_task = structure_from_codes(
            node_local, wl_local, node_present.shape[0], wl_present.shape[0]
        )
        args = (Xs, y_pm, sample_c, row_task, structure, blocks, regs)
        if self._solver_used(Xs.shape[0] * Xs.shape[1] * len(blocks)) == "implicit":
            sol = solve_implicit(*args, tol=self.tol, max_iter=self.max_iter)
            if not sol.converged:
                warnings.warn(
                    f"GroupedMTLSVC: the Newton solver stopped after {sol.n_iter} iterations "
                    f"above tol={self.tol}; increase max_iter",
                    ConvergenceWarning,
                    stacklevel=3,
                )
        else:
            sol = solve_explicit(
                *args,
                loss=self.loss,
                tol=self.tol,
                max_iter=self.max_iter,
                intercept_scaling=self.intercept_scaling,
            )
        obj = objective(
            Xs, y_pm, sample_c, row_task, structure, sol.blocks, sol.intercept, regs, self.loss
        )
        return _Core(
            node_present,
            wl_present,
            structure,
            sol.blocks,
            sol.intercept,
            obj,
            sol.n_iter,
            sol.converged,
        )

    def fit(self, X, y):
        """Fit the blocks on all rows and the Platt calibration on cross-fitted margins.

        Parameters
        ----------
        X : DataFrame with ``node``, ``workload`` and counter columns, or array (n, d)
        y : array-like of shape (n,), two classes

        Returns
        -------
        self
        """
        regs, blocks = self._check_params()
        Xc, nodes, workloads, y = self._prepare(X, reset=True, y=y)
        classes, y_pm = binary_target(y)
        sample_c = float(self.C) * class_weights(self.class_weight, classes, y_pm)
        mean, scale = standardiser(Xc)
        n = Xc.shape[0]
        node_index, node_code = encode_ids(nodes, n)
        wl_index, wl_code = encode_ids(workloads, n)
        # Rows sorted by (node, workload) once: every subset is then sorted by task as the
        # implicit solver needs, without further copies of the counters.
        order = np.argsort(node_code.astype(np.int64) * len(wl_index) + wl_code, kind="stable")
        Xs = Xc[order]
        del Xc
        Xs -= mean
        Xs /= scale
        y_pm, sample_c = y_pm[order], sample_c[order]
        node_code, wl_code = node_code[order], wl_code[order]

        core, a, c, mode, scores = cross_fitted_platt(
            lambda rows: self._fit_core(
                Xs[rows], y_pm[rows], sample_c[rows], node_code[rows], wl_code[rows], regs, blocks
            ),
            lambda core, rows: core.margin(Xs[rows], node_code[rows], wl_code[rows]),
            y_pm,
            check_cv(self.calibration_cv),
            self.random_state,
        )

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

    def _set_public_blocks(self) -> None:
        core, scale = self._core, self.scale_
        nodes = [self._node_index[i] for i in core.node_codes]
        wls = [self._workload_index[i] for i in core.workload_codes]
        b = core.blocks
        self.w0_ = b["w0"][0] / scale if "w0" in b else None
        self.node_weights_ = (
            {nodes[g]: b["node"][g] / scale for g in range(len(nodes))} if "node" in b else {}
        )
        self.workload_weights_ = (
            {wls[g]: b["workload"][g] / scale for g in range(len(wls))} if "workload" in b else {}
        )
        s = core.structure
        self.task_weights_ = (
            {
                (nodes[s.task_node[t]], wls[s.task_workload[t]]): b["task"][t] / scale
                for t in range(s.n_tasks)
            }
            if "task" in b
            else {}
        )

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
