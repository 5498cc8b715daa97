"""Synthetic node x workload structured classification data (tests, benchmarks, examples)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def make_grouped_classification(
    n_rows: int = 2000,
    n_nodes: int = 10,
    n_workloads: int = 4,
    n_counters: int = 8,
    *,
    shared: float = 1.0,
    node_scale: float = 1.0,
    workload_scale: float = 1.0,
    task_scale: float = 0.2,
    noise: float = 0.5,
    positive_rate: float = 0.25,
    seed: int = 0,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows whose straggler label follows ``x . (w0 + w_node + w_workload + v_task)`` + noise.

    Pairs are drawn uniformly, so each (node, workload) pair has about
    ``n_rows / (n_nodes n_workloads)`` rows. Counters ``c_0 .. c_{d-1}`` get arbitrary
    offsets and scales (the estimators standardise internally). The intercept is set so that
    about ``positive_rate`` of the rows are positive.

    Returns
    -------
    X : DataFrame with ``node`` (``"n<k>"``), ``workload`` (``"w<k>"``) and counter columns
    y : ndarray of int in {0, 1}

    Examples
    --------
    >>> X, y = make_grouped_classification(400, 5, 2, 3, seed=1)
    >>> X.shape, sorted(X["workload"].unique()), bool(0.15 < y.mean() < 0.35)
    ((400, 5), ['w0', 'w1'], True)
    """
    rng = np.random.default_rng(seed)
    d = n_counters
    w0 = shared * rng.standard_normal(d)
    wn = node_scale * rng.standard_normal((n_nodes, d))
    wl = workload_scale * rng.standard_normal((n_workloads, d))
    vt = task_scale * rng.standard_normal((n_nodes, n_workloads, d))
    node = rng.integers(0, n_nodes, n_rows)
    wload = rng.integers(0, n_workloads, n_rows)
    Z = rng.standard_normal((n_rows, d))
    W = w0 + wn[node] + wl[wload] + vt[node, wload]
    score = np.einsum("ij,ij->i", Z, W) / np.sqrt(d)
    score += noise * rng.standard_normal(n_rows)
    y = (score > np.quantile(score, 1.0 - positive_rate)).astype(int)
    offset = rng.uniform(-5.0, 50.0, d)
    scale = rng.uniform(0.1, 20.0, d)
    X = pd.DataFrame(Z * scale + offset, columns=[f"c_{j}" for j in range(d)])
    X.insert(0, "workload", np.array([f"w{k}" for k in range(n_workloads)])[wload])
    X.insert(0, "node", np.array([f"n{k}" for k in range(n_nodes)])[node])
    return X, y
