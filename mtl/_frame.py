"""Input handling shared by the estimators: split ``node``/``workload`` ids from counters.

A :class:`pandas.DataFrame` carrying both a ``node`` and a ``workload`` column gives the ids
per row; every other column is a counter. Anything else (a plain array, or a DataFrame with
neither column) is one node and one workload, both with the id :data:`SINGLE_ID`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

NODE = "node"
WORKLOAD = "workload"
SINGLE_ID = "all"


def split_ids(X: Any) -> tuple[object, np.ndarray | None, np.ndarray | None]:
    """Return ``(counters, node_ids, workload_ids)``; ids are ``None`` for single-task input.

    Examples
    --------
    >>> df = pd.DataFrame({"node": ["a", "b"], "workload": ["w", "w"], "c_cpu": [0.1, 0.2]})
    >>> counters, nodes, workloads = split_ids(df)
    >>> list(counters.columns), nodes.tolist(), workloads.tolist()
    (['c_cpu'], ['a', 'b'], ['w', 'w'])
    """
    if not isinstance(X, pd.DataFrame):
        return X, None, None
    has_node, has_wl = NODE in X.columns, WORKLOAD in X.columns
    if not has_node and not has_wl:
        return X, None, None
    if has_node != has_wl:
        missing = WORKLOAD if has_node else NODE
        raise ValueError(
            f"X has a {NODE if has_node else WORKLOAD!r} column but no {missing!r} column; "
            f"give both (or neither, for one node and one workload)"
        )
    ids = []
    for col in (NODE, WORKLOAD):
        values = X[col].to_numpy()
        bad = pd.isna(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"X column {col!r} has a missing id at row {row}")
        ids.append(values)
    return X.drop(columns=[NODE, WORKLOAD]), ids[0], ids[1]


def native_id(value: object) -> object:
    """Plain Python scalar for an id (numpy scalars become int/str/float)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def encode_ids(values: np.ndarray | None, n_rows: int) -> tuple[pd.Index, np.ndarray]:
    """Distinct ids (as a :class:`pandas.Index`) and the code of every row."""
    if values is None:
        return pd.Index([SINGLE_ID], dtype=object), np.zeros(n_rows, dtype=np.intp)
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # ids of mixed, unorderable types
        codes, uniques = pd.factorize(values, sort=False)
    return pd.Index([native_id(u) for u in uniques], dtype=object), codes.astype(np.intp)


def lookup_ids(index: pd.Index, values: np.ndarray | None, n_rows: int) -> np.ndarray:
    """Code of every row in a fitted id index; ``-1`` for an id unseen in training."""
    if values is None:
        values = np.full(n_rows, SINGLE_ID, dtype=object)
    codes, uniques = pd.factorize(values)
    if (codes < 0).any():
        raise ValueError(f"missing id at row {int(np.flatnonzero(codes < 0)[0])}")
    found = index.get_indexer(pd.Index([native_id(u) for u in uniques], dtype=object))
    return found.astype(np.intp)[codes]
