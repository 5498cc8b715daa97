"""The grouped multi-task SVM (seed 004, eq. 3.15-3.16) as a scikit-learn classifier.

Split by job: the warnings live in :mod:`mtl._grouped_warnings`, one solved model in
:mod:`mtl._grouped_core` and the prediction methods in :mod:`mtl._grouped_predict`; this
module keeps the estimator (parameters, validation, fitting) and re-exports the names it
offered before.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import validate_data

from ._calibration import cross_fitted_platt
from ._common import (
    binary_target,
    check_cv,
    check_positive,
    check_regulariser,
    check_threshold,
    class_weights,
    standardiser,
)
from ._frame import encode_ids, split_ids
from ._grouped_core import GroupedCore as _Core
from ._grouped_predict import GroupedPrediction
from ._grouped_warnings import (
    COLLAPSE_FACTOR,
    DegenerateModelWarning,
    UnseenWorkloadWarning,
    warn_unseen_workloads,
)
from ._grouped_warnings import warn_if_collapsed as _warn_if_collapsed
from ._solver import objective, solve_explicit, solve_implicit
from ._structure import VARIANTS, active_blocks, structure_from_codes

AUTO_EXPLICIT_MAX_NNZ = 5_000_000


class GroupedMTLSVC(GroupedPrediction, ClassifierMixin, BaseEstimator):
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


__all__ = [
    "AUTO_EXPLICIT_MAX_NNZ",
    "COLLAPSE_FACTOR",
    "DegenerateModelWarning",
    "GroupedMTLSVC",
    "UnseenWorkloadWarning",
    "warn_unseen_workloads",
]
