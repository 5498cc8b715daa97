"""Task structure of the grouped MTL model and the block feature map (seed 004, eq. 3.6-3.11).

A *task* is one (node, workload) pair present in the training data. The model has up to four
*blocks* (the partitionings of the seed's eq. 3.4-3.5):

=========  ==========================  ===================================
block      groups                      penalty coefficient ``c_g``
=========  ==========================  ===================================
``w0``     one group with all tasks    ``lambda0``
``node``   one group per node          ``nu * #(node group) / T``
``workload`` one group per workload    ``omega * #(workload group) / T``
``task``   one group per task          ``tau / T``
=========  ==========================  ===================================

``#(p, g)`` counts the tasks (node-workload pairs) *present* in group ``g`` and ``T`` the
number of present tasks (eq. 3.6). On a complete N x L grid this is exactly eq. 3.16:
``nu * L / (N L) = nu / N`` and ``omega / L``.

The objective of both solvers is

    J(w, b) = sum_g c_g ||w_g||^2 + C sum_i s_i loss(y_i (x_i . W_t(i) + b))

with ``W_t = w0 + w_node(t) + w_workload(t) + v_t`` and ``s_i`` the class weights. The change
of variables ``u_g = sqrt(2 c_g) w_g`` turns the regulariser into ``1/2 ||u||^2`` (LinearSVC's)
and the data into the block feature map ``phi_g(x) = delta(g(t), g) x / sqrt(2 c_g)``
(eq. 3.7-3.10 with the seed's free constant ``lambda = 1/2``), so that
``u . phi(x) = x . W_t`` (eq. 3.11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

BLOCKS: tuple[str, ...] = ("w0", "node", "workload", "task")

VARIANTS: dict[str, tuple[str, ...]] = {
    "f0": ("w0",),
    "fn": ("node",),
    "fl": ("workload",),
    "f0nl": ("w0", "node", "workload"),
    "f0t": ("w0", "task"),
    "f0tl": ("w0", "workload", "task"),
    "f0nlt": ("w0", "node", "workload", "task"),
}


@dataclass(frozen=True)
class TaskStructure:
    """Which tasks exist and how they fall into the groups of every block.

    Attributes
    ----------
    n_nodes, n_workloads : int
        Number of distinct node and workload ids seen in training.
    task_node, task_workload : ndarray of shape (T,)
        Node and workload index of every task, tasks sorted by (node, workload).
    """

    n_nodes: int
    n_workloads: int
    task_node: np.ndarray
    task_workload: np.ndarray

    @property
    def n_tasks(self) -> int:
        return int(self.task_node.shape[0])

    def groups(self, block: str) -> tuple[int, np.ndarray]:
        """Number of groups of ``block`` and the group index of every task."""
        T = self.n_tasks
        if block == "w0":
            return 1, np.zeros(T, dtype=np.intp)
        if block == "node":
            return self.n_nodes, self.task_node.astype(np.intp)
        if block == "workload":
            return self.n_workloads, self.task_workload.astype(np.intp)
        if block == "task":
            return T, np.arange(T, dtype=np.intp)
        raise ValueError(f"unknown block {block!r}; expected one of {BLOCKS}")

    def penalties(self, block: str, reg: float) -> np.ndarray:
        """Coefficients ``c_g = reg * #(p, g) / T`` of eq. 3.6 for every group of ``block``."""
        n_groups, task_group = self.groups(block)
        counts = np.bincount(task_group, minlength=n_groups).astype(np.float64)
        return reg * counts / self.n_tasks

    def indicator(self, block: str, reg: float) -> sp.csr_matrix:
        """Sparse ``(n_groups, T)`` matrix with ``1 / sqrt(2 c_g)`` where task t is in group g.

        ``A.T @ u`` maps scaled block weights ``u`` to per-task weight contributions and
        ``A @ G`` sums per-task gradients into block gradients (both in the scaled space).
        """
        n_groups, task_group = self.groups(block)
        scale = 1.0 / np.sqrt(2.0 * self.penalties(block, reg))
        T = self.n_tasks
        return sp.csr_matrix((scale[task_group], (task_group, np.arange(T))), shape=(n_groups, T))


def structure_from_codes(
    node_code: np.ndarray, workload_code: np.ndarray, n_nodes: int, n_workloads: int
) -> tuple[TaskStructure, np.ndarray]:
    """Build the task structure from per-row node/workload codes.

    Returns the structure and the task index of every row.

    Examples
    --------
    >>> s, t = structure_from_codes(np.array([0, 1, 0]), np.array([0, 0, 0]), 2, 1)
    >>> s.n_tasks, t.tolist()
    (2, [0, 1, 0])
    """
    key = node_code.astype(np.int64) * n_workloads + workload_code.astype(np.int64)
    uniq, row_task = np.unique(key, return_inverse=True)
    structure = TaskStructure(
        n_nodes=n_nodes,
        n_workloads=n_workloads,
        task_node=(uniq // n_workloads).astype(np.intp),
        task_workload=(uniq % n_workloads).astype(np.intp),
    )
    return structure, row_task.astype(np.intp)


def active_blocks(variant: str, regs: dict[str, float]) -> tuple[str, ...]:
    """Blocks of ``variant`` whose regulariser is finite (an infinite one removes the block)."""
    return tuple(b for b in VARIANTS[variant] if math.isfinite(regs[b]))


def block_feature_map(
    X: np.ndarray,
    row_task: np.ndarray,
    structure: TaskStructure,
    blocks: tuple[str, ...],
    regs: dict[str, float],
) -> sp.csr_matrix:
    """The explicit block feature map ``phi`` of eq. 3.10 as a CSR matrix.

    Column layout: blocks in the order given, inside a block group ``g`` occupies columns
    ``g * d .. (g + 1) * d - 1``. Row ``i`` holds ``x_i / sqrt(2 c_g)`` in the group of its
    task for every block, zeros elsewhere (eq. 3.9).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> s, t = structure_from_codes(np.array([0, 1]), np.array([0, 0]), 2, 1)
    >>> Phi = block_feature_map(X, t, s, ("w0", "node"), {"w0": 0.5, "node": 1.0})
    >>> Phi.shape, Phi.nnz
    ((2, 6), 8)
    >>> Phi.toarray()[0].tolist()
    [1.0, 2.0, 1.0, 2.0, 0.0, 0.0]
    """
    n, d = X.shape
    k = len(blocks)
    indices = np.empty((n, k, d), dtype=np.int32)
    data = np.empty((n, k, d), dtype=np.float64)
    offset = 0
    cols = np.arange(d, dtype=np.int64)
    for j, block in enumerate(blocks):
        n_groups, task_group = structure.groups(block)
        scale = 1.0 / np.sqrt(2.0 * structure.penalties(block, regs[block]))
        g = task_group[row_task]
        indices[:, j, :] = offset + g[:, None] * d + cols[None, :]
        np.multiply(X, scale[g][:, None], out=data[:, j, :])
        offset += n_groups * d
    indptr = np.arange(0, n * k * d + 1, k * d, dtype=np.int64)
    return sp.csr_matrix((data.reshape(-1), indices.reshape(-1), indptr), shape=(n, offset))
