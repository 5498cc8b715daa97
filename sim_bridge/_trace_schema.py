"""The trace's schema: its columns and dtypes, node and counter names, and the one builder of
trace and job tables (:func:`tasks_table`, :func:`jobs_table`) both event loops call.

Public through :mod:`sim_bridge.trace`.

Examples
--------
>>> node_name(7), counter_column("cpu_user")
('n0007', 'c_cpu_user')
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
else:

    class _LazyModule(type(np)):
        """A module imported when one of its names is first read (its names then copied
        here): the trace modules bind pandas as ``pd`` through it, so that ``import
        sim_bridge`` and a streamed run load no pandas (~45 MB of RSS); type checkers see the
        real module. Defined here, not in a helper module: these modules import nothing of
        the project but each other (``tests/test_trace_contract.py``)."""

        def __getattr__(self, attr):
            module = __import__(self.__name__)
            self.__dict__.update(module.__dict__)
            return getattr(module, attr)

    pd = _LazyModule("pandas")

__all__ = [
    "COUNTER_PREFIX",
    "JOB_COLUMNS",
    "NODE_FORMAT",
    "OUTCOMES",
    "REQUIRED_COLUMNS",
    "TASK_COLUMNS",
    "counter_column",
    "counter_columns",
    "jobs_table",
    "node_index",
    "node_name",
    "node_names",
    "task_ids",
    "tasks_table",
]


#: The columns of a trace (one row per task attempt, in this order) and their dtypes (``str``:
#: pandas' string dtype, which pandas 3 infers for Python strings). After them: ``truth_*``
#: (float64, only when recorded) and the ``c_*`` counters (float64).
TASK_COLUMNS: dict[str, str] = {
    "job_id": "str",
    "task_id": "str",
    "attempt": "int64",
    "workload": "str",
    "node": "str",
    "phase": "str",
    "submit_time": "float64",
    "launch_time": "float64",
    "end_time": "float64",
    "duration": "float64",
    "outcome": "str",
    "input_work": "float64",
}

#: The columns every trace must have to be trained on, with the kind of value they hold
#: (``str``, ``int`` or ``float``): :data:`TASK_COLUMNS` without the simulator's extras.
REQUIRED_COLUMNS: dict[str, str] = {
    name: {"str": "str", "int64": "int", "float64": "float"}[dtype]
    for name, dtype in TASK_COLUMNS.items()
    if name != "input_work"
}

#: The columns of a job table (one row per job) and their dtypes.
JOB_COLUMNS: dict[str, str] = {
    "job_id": "str",
    "workload": "str",
    "submit_time": "float64",
    "finish_time": "float64",
    "jct": "float64",
    "deadline": "float64",
    "met_deadline": "bool",
    "n_tasks": "int64",
    "n_attempts": "int64",
}

#: What became of an attempt (the ``outcome`` column).
OUTCOMES: tuple[str, ...] = ("finished", "killed", "failed")

#: Prefix of the node counter columns (``c_cpu_user``, ...): a counter ``name`` of the
#: simulator is the trace column ``COUNTER_PREFIX + name``.
COUNTER_PREFIX = "c_"

#: How a trace names simulator node ``i``.
NODE_FORMAT = "n{:04d}"

_TRUTH_PREFIX = "truth_"
_DIGITS = re.compile(r"(\d+)$")


def node_name(node: int, node_format: str = NODE_FORMAT) -> str:
    """The trace's name of simulator node ``node``.

    Examples
    --------
    >>> node_name(7), node_name(7, "node-{}")
    ('n0007', 'node-7')
    """
    return node_format.format(int(node))


def node_names(n_nodes: int, node_format: str = NODE_FORMAT) -> np.ndarray:
    """The names of nodes ``0 .. n_nodes - 1`` (an object array, to index by node).

    Examples
    --------
    >>> node_names(3).tolist()
    ['n0000', 'n0001', 'n0002']
    """
    return np.array([node_format.format(i) for i in range(int(n_nodes))], dtype=object)


def node_index(node: Hashable) -> int:
    """The simulator index of a node id (an integer, or a name ending in digits).

    Examples
    --------
    >>> node_index("n0042"), node_index(3)
    (42, 3)
    """
    if isinstance(node, (int, np.integer)):
        return int(node)
    m = _DIGITS.search(str(node))
    if m is None:
        raise ValueError(f"cannot read a node index from node id {node!r}")
    return int(m.group(1))


def counter_column(name: str) -> str:
    """The trace column of simulator counter ``name``.

    Examples
    --------
    >>> counter_column("load1")
    'c_load1'
    """
    return COUNTER_PREFIX + name


def counter_columns(frame: pd.DataFrame) -> list[str]:
    """The counter columns (``c_*``) of a table, in table order.

    Examples
    --------
    >>> counter_columns(pd.DataFrame(columns=["node", "c_cpu", "c_mem", "duration"]))
    ['c_cpu', 'c_mem']
    """
    return [c for c in frame.columns if isinstance(c, str) and c.startswith(COUNTER_PREFIX)]


# ---------------------------------------------------------------------------- the table builder


def task_ids(job_ids: Sequence[str], phases: Sequence[str], index: Sequence[int]) -> list[str]:
    """Task ids ``<job>-<first letter of the phase><index within the stage>``.

    Examples
    --------
    >>> task_ids(["j", "j"], ["map", "reduce"], [3, 0])
    ['j-m3', 'j-r0']
    """
    return [f"{j}-{p[0]}{i}" for j, p, i in zip(job_ids, phases, index, strict=True)]


def tasks_table(
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
) -> pd.DataFrame:
    """A trace (:data:`TASK_COLUMNS`, then ``truth_*``, then ``c_*``) from column arrays.

    Both event loops build their trace here; ``duration`` is ``end_time - launch_time``.

    Parameters
    ----------
    job_id, task_id, workload, phase, outcome : array-like of str
    attempt : array-like of int
    node : array-like of int, or of str
        Node indices (mapped through ``node_names``, default :func:`node_names`) or names.
    submit_time, launch_time, end_time, input_work : array-like of float
    node_names : ndarray, optional
        The name of each node index (built when ``node`` holds indices and it is None).
    truth : mapping of str to array, optional
        Hidden truth columns, written as ``truth_<key>`` in the mapping's order.
    counters : mapping of str to array, optional
        Counter columns by simulator name, written as ``c_<name>`` in the mapping's order.

    Examples
    --------
    >>> t = tasks_table(job_id=["j"], task_id=["j-m0"], attempt=[0], workload=["SYN"],
    ...     node=[2], phase=["map"], submit_time=[0.0], launch_time=[1.0], end_time=[4.0],
    ...     outcome=["finished"], input_work=[3.0], counters={"load1": [0.5]})
    >>> row = t.to_dict("records")[0]
    >>> row["node"], row["duration"], row["c_load1"]
    ('n0002', 3.0, 0.5)
    >>> list(t.columns) == [*TASK_COLUMNS, "c_load1"], t["attempt"].dtype
    (True, dtype('int64'))
    """
    from sim_bridge._trace_columns import task_columns  # the one owner of the columns

    return pd.DataFrame(
        task_columns(
            job_id=job_id,
            task_id=task_id,
            attempt=attempt,
            workload=workload,
            node=node,
            phase=phase,
            submit_time=submit_time,
            launch_time=launch_time,
            end_time=end_time,
            outcome=outcome,
            input_work=input_work,
            node_names=node_names,
            truth=truth,
            counters=counters,
        )
    )


def jobs_table(
    *,
    job_id: Any,
    workload: Any,
    submit_time: Any,
    finish_time: Any,
    deadline: Any,
    n_tasks: Any,
    n_attempts: Any,
) -> pd.DataFrame:
    """A job table (:data:`JOB_COLUMNS`) from column arrays; ``jct`` is ``finish - submit``
    and ``met_deadline`` ``finish <= deadline``.

    Examples
    --------
    >>> j = jobs_table(job_id=["a"], workload=["SYN"], submit_time=[1.0], finish_time=[5.0],
    ...     deadline=[4.0], n_tasks=[2], n_attempts=[3])
    >>> row = j.to_dict("records")[0]
    >>> row["jct"], row["met_deadline"]
    (4.0, False)
    """
    submit = np.asarray(submit_time, dtype=np.float64)
    finish = np.asarray(finish_time, dtype=np.float64)
    deadline = np.asarray(deadline, dtype=np.float64)
    return pd.DataFrame(
        {
            "job_id": _objects(job_id),
            "workload": _objects(workload),
            "submit_time": submit,
            "finish_time": finish,
            "jct": finish - submit,
            "deadline": deadline,
            "met_deadline": finish <= deadline,
            "n_tasks": np.asarray(n_tasks, dtype=np.int64),
            "n_attempts": np.asarray(n_attempts, dtype=np.int64),
        }
    )


def _objects(values: Any) -> np.ndarray:
    """``values`` as an object array (strings stay Python strings)."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    out = np.empty(len(values), dtype=object)
    out[:] = list(values) if not isinstance(values, np.ndarray) else values
    return out
