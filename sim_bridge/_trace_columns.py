"""The trace's columns as flat NumPy arrays, without pandas: what a streamed run writes to
Arrow row group by row group.

:func:`task_columns` takes the arguments of :func:`sim_bridge.trace.tasks_table` and returns
the columns that function puts in its DataFrame, the same arrays in the same order (its
``cols`` before ``pd.DataFrame(cols)``; ``tests/test_lazy_imports.py`` checks the two
against each other). It is a copy because the trace modules keep their split text byte for
byte (``tests/test_workloads_trace_modules.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sim_bridge._trace_schema import _TRUTH_PREFIX, _objects, counter_column
from sim_bridge._trace_schema import node_names as default_node_names

__all__ = ["task_columns"]


def task_columns(
    *,
    job_id: Any,
    task_id: Any,
    attempt: Any,
    workload: Any,
    node: Any,
    phase: Any,
    submit_time: Any,
    launch_time: Any,
    end_time: Any,
    outcome: Any,
    input_work: Any,
    node_names: np.ndarray | None = None,
    truth: Mapping[str, Any] | None = None,
    counters: Mapping[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """The columns of :func:`sim_bridge.trace.tasks_table` (same arguments) by name, in the
    table's order: :data:`~sim_bridge.trace.TASK_COLUMNS`, then ``truth_*``, then ``c_*``.

    Examples
    --------
    >>> cols = task_columns(job_id=["j"], task_id=["j-m0"], attempt=[0], workload=["SYN"],
    ...     node=[2], phase=["map"], submit_time=[0.0], launch_time=[1.0], end_time=[4.0],
    ...     outcome=["finished"], input_work=[3.0], counters={"load1": [0.5]})
    >>> cols["node"].tolist(), cols["duration"].tolist(), list(cols)[-1]
    (['n0002'], [3.0], 'c_load1')
    """
    launch = np.asarray(launch_time, dtype=np.float64)
    end = np.asarray(end_time, dtype=np.float64)
    node_arr = np.asarray(node)
    if node_arr.dtype.kind in "iu":
        if node_names is None:
            node_names = default_node_names(int(node_arr.max()) + 1 if node_arr.size else 0)
        node_col = node_names[node_arr] if node_arr.size else np.empty(0, dtype=object)
    else:
        node_col = node_arr.astype(object)
    cols: dict[str, Any] = {
        "job_id": _objects(job_id),
        "task_id": _objects(task_id),
        "attempt": np.asarray(attempt, dtype=np.int64),
        "workload": _objects(workload),
        "node": node_col,
        "phase": _objects(phase),
        "submit_time": np.asarray(submit_time, dtype=np.float64),
        "launch_time": launch,
        "end_time": end,
        "duration": end - launch,
        "outcome": _objects(outcome),
        "input_work": np.asarray(input_work, dtype=np.float64),
    }
    for key, values in (truth or {}).items():
        cols[_TRUTH_PREFIX + key] = np.asarray(values, dtype=np.float64)
    for key, values in (counters or {}).items():
        cols[counter_column(key)] = np.asarray(values, dtype=np.float64)
    return cols
