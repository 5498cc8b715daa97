"""Solvers of the grouped MTL objective (see :mod:`mtl._structure` for the objective).

Two paths, one objective:

* :func:`solve_implicit` -- exact trust-region Newton-CG (``scipy.optimize`` ``trust-ncg``)
  on the **squared hinge** loss, intercept unpenalised, that never materialises the block
  feature map. With rows sorted by task, margins come from the T combined weight vectors
  ``W_t`` (one small matrix-vector product per task), per-task gradients are one sparse
  (T x n) times dense (n x d) product, and block gradients / Hessian-vector products are sums
  of per-task terms over the groups (sparse indicator matrices, T x d work).
* :func:`solve_explicit` -- the reference: the explicit CSR block feature map of eq. 3.10 fed
  to :class:`sklearn.svm.LinearSVC` (liblinear), squared hinge with ``dual=False`` (primal
  trust-region Newton) or hinge with ``dual=True``. liblinear penalises the intercept as an
  extra feature of value ``intercept_scaling``: the penalty is ``b^2 / (2 s^2)``, negligible
  for the default ``s = 100`` but not exactly zero.

Both return block weights in the *unscaled* standardised space (``w_g``, not ``u_g``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from ._common import rowwise_dot
from ._structure import TaskStructure, block_feature_map


@dataclass
class Solution:
    """Fitted blocks ``{block: (n_groups, d)}`` in standardised units, intercept, diagnostics."""

    blocks: dict[str, np.ndarray]
    intercept: float
    n_iter: int
    converged: bool


def task_weights(blocks: dict[str, np.ndarray], structure: TaskStructure) -> np.ndarray:
    """Combined per-task weight vectors ``W_t = sum_blocks w_{g(t)}`` (eq. 3.5), shape (T, d)."""
    d = next(iter(blocks.values())).shape[1]
    W = np.zeros((structure.n_tasks, d))
    for block, w in blocks.items():
        _, task_group = structure.groups(block)
        W += w[task_group]
    return W


def _task_margins(X: np.ndarray, starts: np.ndarray, W: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = x_i . W_t(i)`` for rows sorted by task (task t owns ``starts[t]:starts[t+1]``)."""
    for t in range(W.shape[0]):
        s, e = starts[t], starts[t + 1]
        if e > s:
            np.dot(X[s:e], W[t], out=out[s:e])


def objective(
    X: np.ndarray,
    y: np.ndarray,
    sample_c: np.ndarray,
    row_task: np.ndarray,
    structure: TaskStructure,
    blocks: dict[str, np.ndarray],
    intercept: float,
    regs: dict[str, float],
    loss: str = "squared_hinge",
) -> float:
    """Value of ``J(w, b)`` (intercept unpenalised) -- the obvious, slow-but-sure formula.

    ``y`` in {-1, +1}, ``sample_c`` the per-row loss weight ``C * class_weight``.
    """
    reg = 0.0
    for block, w in blocks.items():
        c = structure.penalties(block, regs[block])
        reg += float(np.sum(c * np.einsum("gd,gd->g", w, w)))
    W = task_weights(blocks, structure)
    margin = y * (rowwise_dot(X, W, row_task) + intercept)
    slack = np.maximum(0.0, 1.0 - margin)
    if loss == "squared_hinge":
        slack = slack * slack
    return reg + float(np.dot(sample_c, slack))


class _ImplicitProblem:
    """Squared-hinge objective in the scaled variables ``u`` (regulariser ``1/2 ||u||^2``)."""

    def __init__(
        self,
        X: Any,
        y: np.ndarray,
        sample_c: np.ndarray,
        row_task: np.ndarray,
        starts: np.ndarray,
        structure: TaskStructure,
        blocks: Sequence[str],
        regs: Mapping[str, float],
    ) -> None:
        self.X = X
        self.row_task = row_task
        self.T = structure.n_tasks
        self._hkey: bytes | None = None
        self.y = y
        self.sample_c = sample_c
        self.starts = starts
        self.blocks = blocks
        self.d = X.shape[1]
        self.A = [structure.indicator(b, regs[b]) for b in blocks]
        self.AT = [a.T.tocsr() for a in self.A]
        self.sizes = [a.shape[0] * self.d for a in self.A]
        self.n_params = sum(self.sizes) + 1
        n = X.shape[0]
        T = structure.n_tasks
        # (T x n) row-to-task summation matrix; its data is overwritten with per-row factors.
        self.R = sp.csr_matrix(
            (np.ones(n), np.arange(n, dtype=np.int64), starts.astype(np.int64)), shape=(T, n)
        )
        self._key: bytes | None = None
        self._z = np.empty(n)
        self._active = np.zeros(n, dtype=bool)
        self._f = 0.0
        self._g = np.empty(self.n_params)

    def split(self, theta: np.ndarray) -> list[np.ndarray]:
        parts, o = [], 0
        for a, size in zip(self.A, self.sizes, strict=True):
            parts.append(theta[o : o + size].reshape(a.shape[0], self.d))
            o += size
        return parts

    def combined(self, theta: np.ndarray) -> np.ndarray:
        W: np.ndarray | None = None
        for at, u in zip(self.AT, self.split(theta), strict=True):
            contrib = at @ u
            W = contrib if W is None else W + contrib
        assert W is not None  # a structure has at least one block
        return W

    def aggregate(self, per_row: np.ndarray, R: Any = None, X: Any = None) -> np.ndarray:
        """Block-space vector ``A_b @ (sum_{i in t} per_row_i x_i)`` for every block."""
        R = self.R if R is None else R
        R.data = per_row
        G = R @ (self.X if X is None else X)  # (T, d) per-task sums
        return np.concatenate([(a @ G).ravel() for a in self.A])

    def _active_rows(self) -> None:
        """Hessian-vector products only touch rows with margin < 1 (the generalised Hessian).

        When fewer than half the rows are active, they are copied once per Newton iteration
        (as liblinear's TRON does); otherwise all rows are used with a 0/1 mask.
        """
        if self._hkey == self._key:
            return
        self._hkey = self._key
        act = self._active
        if act.mean() < 0.5:
            idx = np.flatnonzero(act)
            self._Xa = self.X[idx]
            self._ca = 2.0 * self.sample_c[idx]
            starts = np.searchsorted(self.row_task[idx], np.arange(self.T + 1))
            self._sa = starts
            self._Ra = sp.csr_matrix(
                (
                    np.ones(idx.shape[0]),
                    np.arange(idx.shape[0], dtype=np.int64),
                    starts.astype(np.int64),
                ),
                shape=(self.T, idx.shape[0]),
            )
        else:
            self._Xa, self._Ra, self._sa = self.X, self.R, self.starts
            self._ca = 2.0 * self.sample_c * act

    def _evaluate(self, theta: np.ndarray) -> None:
        key = theta.tobytes()
        if key == self._key:
            return
        W = self.combined(theta)
        b = theta[-1]
        z = self._z
        _task_margins(self.X, self.starts, W, z)
        z += b
        z *= self.y  # now the margin m_i
        slack = 1.0 - z
        np.greater(slack, 0.0, out=self._active)
        slack[~self._active] = 0.0
        self._f = 0.5 * float(theta[:-1] @ theta[:-1]) + float(self.sample_c @ (slack * slack))
        r = -2.0 * self.sample_c * slack * self.y
        self._g[:-1] = theta[:-1] + self.aggregate(r)
        self._g[-1] = r.sum()
        self._key = key

    def fun(self, theta: np.ndarray) -> float:
        self._evaluate(theta)
        return self._f

    def jac(self, theta: np.ndarray) -> np.ndarray:
        self._evaluate(theta)
        return self._g.copy()

    def hessp(self, theta: np.ndarray, p: np.ndarray) -> np.ndarray:
        self._evaluate(theta)
        self._active_rows()
        dW = self.combined(p)
        dz = np.empty(self._Xa.shape[0])
        _task_margins(self._Xa, self._sa, dW, dz)
        dz += p[-1]
        s = self._ca * dz
        out = np.empty_like(p)
        out[:-1] = p[:-1] + self.aggregate(s, self._Ra, self._Xa)
        out[-1] = s.sum()
        return out


def solve_implicit(
    X: np.ndarray,
    y: np.ndarray,
    sample_c: np.ndarray,
    row_task: np.ndarray,
    structure: TaskStructure,
    blocks: tuple[str, ...],
    regs: dict[str, float],
    tol: float = 1e-4,
    max_iter: int = 1000,
) -> Solution:
    """Minimise the squared-hinge grouped objective without the explicit feature map.

    ``X`` (standardised, float64), ``y`` in {-1, +1}, ``sample_c`` per-row loss weights,
    ``row_task`` task index per row. Stops when the gradient norm falls below
    ``tol * ||gradient at 0||`` (relative, as liblinear's primal solver).
    """
    order = np.argsort(row_task, kind="stable")
    sorted_ = bool(np.all(order == np.arange(order.shape[0])))
    if not sorted_:
        X = X[order]
        y = y[order]
        sample_c = sample_c[order]
        row_task = row_task[order]
    X = np.ascontiguousarray(X, dtype=np.float64)
    starts = np.searchsorted(row_task, np.arange(structure.n_tasks + 1))
    problem = _ImplicitProblem(
        X,
        y.astype(np.float64),
        sample_c.astype(np.float64),
        row_task,
        starts,
        structure,
        blocks,
        regs,
    )
    theta0 = np.zeros(problem.n_params)
    g0 = float(np.linalg.norm(problem.jac(theta0)))
    gtol = max(tol * g0, 1e-12)
    res = minimize(
        problem.fun,
        theta0,
        jac=problem.jac,
        hessp=problem.hessp,
        method="trust-ncg",
        options={"gtol": gtol, "maxiter": max_iter},
    )
    theta = res.x
    parts = problem.split(theta)
    out = {}
    for block, u in zip(blocks, parts, strict=True):
        c = structure.penalties(block, regs[block])
        out[block] = u / np.sqrt(2.0 * c)[:, None]
    # trust-ncg also stops when the trust region collapses at machine precision (a tol far
    # below what float64 resolves); only running out of iterations counts as not converged.
    converged = bool(np.linalg.norm(problem.jac(theta)) <= gtol or res.nit < max_iter)
    return Solution(out, float(theta[-1]), int(res.nit), converged)


def solve_explicit(
    X: np.ndarray,
    y: np.ndarray,
    sample_c: np.ndarray,
    row_task: np.ndarray,
    structure: TaskStructure,
    blocks: tuple[str, ...],
    regs: dict[str, float],
    loss: str = "squared_hinge",
    tol: float = 1e-4,
    max_iter: int = 1000,
    intercept_scaling: float = 100.0,
    random_state: int | None = 0,
) -> Solution:
    """Reference path: explicit CSR feature map + :class:`sklearn.svm.LinearSVC`.

    ``sample_c`` must be ``C * class_weight[y_i]``; it is passed to LinearSVC as
    ``C=1, sample_weight=sample_c`` (liblinear scales each row's loss by it).
    """
    from sklearn.svm import LinearSVC

    Phi = block_feature_map(X, row_task, structure, blocks, regs)
    svc = LinearSVC(
        C=1.0,
        loss=loss,
        dual=(loss == "hinge"),
        tol=tol,
        max_iter=max_iter,
        fit_intercept=True,
        intercept_scaling=intercept_scaling,
        random_state=random_state,
    )
    svc.fit(Phi, y, sample_weight=sample_c)
    coef = svc.coef_.ravel()
    if svc.classes_[0] != -1:  # pragma: no cover - y is always {-1, +1} here
        raise AssertionError("unexpected class order")
    d = X.shape[1]
    out, o = {}, 0
    for block in blocks:
        n_groups, _ = structure.groups(block)
        u = coef[o : o + n_groups * d].reshape(n_groups, d)
        c = structure.penalties(block, regs[block])
        out[block] = u / np.sqrt(2.0 * c)[:, None]
        o += n_groups * d
    n_iter = int(np.max(svc.n_iter_))
    return Solution(out, float(svc.intercept_[0]), n_iter, n_iter < max_iter)
