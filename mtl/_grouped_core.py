"""One solved grouped model (:class:`GroupedCore`) and the mapping of global id codes to the
codes local to the ids present in its training rows.

Public names
------------
GroupedCore
    The blocks, intercept and solver record of one fit, over the ids present in its rows.
to_local
    Global codes -> positions in a sorted array of present codes (``-1`` when absent).

Examples
--------
>>> to_local(np.array([2, 5, 9]), np.array([5, 3, 9, -1])).tolist()
[1, -1, 2, -1]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._common import rowwise_dot
from ._structure import TaskStructure


@dataclass
class GroupedCore:
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
        node_local = to_local(self.node_codes, node_code)
        wl_local = to_local(self.workload_codes, wl_code)
        L1 = self.workload_codes.shape[0] + 1
        key = (node_local.astype(np.int64) + 1) * L1 + (wl_local + 1)
        inv, uniq = pd.factorize(key)
        W = self.combined(uniq // L1 - 1, uniq % L1 - 1)
        return rowwise_dot(Xs, W, inv) + self.intercept


def to_local(present: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Map global codes to positions in the sorted array ``present`` (-1 when absent)."""
    if present.shape[0] == 0:
        return np.full(codes.shape, -1, dtype=np.intp)
    pos = np.minimum(np.searchsorted(present, codes), present.shape[0] - 1)
    return np.where((present[pos] == codes) & (codes >= 0), pos, -1).astype(np.intp)
