"""The rows of a streamed run's job table, kept as columns while its jobs finish.

A streamed run writes its attempts to Parquet and forgets them, but its job table (one row a
job) and its summary's JCT percentiles need every job. :class:`JobRows` keeps what a row
needs in typed arrays: per job five numbers of 8 bytes, its attempt count, and a reference
to its id and workload label (strings the job's spec already holds): 64 bytes. Until
2026-12-02 (y) it kept one Python object of seven fields a job, with the ints and floats those
fields held (``tests/test_stationary_memory.py`` counted 4.2 objects kept a job in all, the
fair order's stamps and the task-seconds' floats among them).
"""

from __future__ import annotations

import math
from array import array
from typing import Any

import numpy as np

__all__ = ["JobRows"]


class JobRows:
    """Finished jobs' rows as columns, in the order they were added.

    Examples
    --------
    >>> from types import SimpleNamespace as Job
    >>> rows = JobRows()
    >>> rows.add(Job(uid=1, job_id="b", workload="SYN", submit_time=5.0, finish_time=9.0,
    ...     deadline=None, n_tasks=2), n_attempts=3)
    >>> rows.add(Job(uid=0, job_id="a", workload="SYN", submit_time=1.0, finish_time=4.0,
    ...     deadline=8.0, n_tasks=1), n_attempts=1)
    >>> cols = rows.columns()  # arrival (uid) order
    >>> cols["job_id"], cols["finish_time"].tolist(), cols["deadline"].tolist()
    (['a', 'b'], [4.0, 9.0], [8.0, nan])
    >>> len(rows), cols["n_attempts"].tolist()
    (2, [1, 3])
    """

    __slots__ = (
        "_uid",
        "_job_id",
        "_workload",
        "_submit",
        "_finish",
        "_deadline",
        "_n_tasks",
        "_n_attempts",
    )

    def __init__(self) -> None:
        self._uid = array("q")
        self._job_id: list[str] = []
        self._workload: list[str] = []
        self._submit = array("d")
        self._finish = array("d")
        self._deadline = array("d")
        self._n_tasks = array("q")
        self._n_attempts = array("q")

    def add(self, job: Any, n_attempts: int) -> None:
        """Keep the row of finished ``job`` (its ``uid``, ``job_id``, ``workload``,
        ``submit_time``, ``finish_time``, ``deadline`` (None read as NaN) and ``n_tasks``)
        and its attempt count."""
        self._uid.append(job.uid)
        self._job_id.append(job.job_id)
        self._workload.append(job.workload)
        self._submit.append(job.submit_time)
        self._finish.append(job.finish_time)
        deadline = job.deadline
        self._deadline.append(math.nan if deadline is None else deadline)
        self._n_tasks.append(job.n_tasks)
        self._n_attempts.append(n_attempts)

    def __len__(self) -> int:
        return len(self._uid)

    def columns(self) -> dict[str, Any]:
        """The rows in arrival order (by ``uid``): ``job_id`` and ``workload`` as lists,
        the rest as NumPy arrays (copies: the columns go on growing)."""
        order = np.argsort(np.frombuffer(self._uid, np.int64), kind="stable")
        take = order.tolist()
        return {
            "job_id": [self._job_id[i] for i in take],
            "workload": [self._workload[i] for i in take],
            "submit_time": np.frombuffer(self._submit, float)[order],
            "finish_time": np.frombuffer(self._finish, float)[order],
            "deadline": np.frombuffer(self._deadline, float)[order],
            "n_tasks": np.frombuffer(self._n_tasks, np.int64)[order],
            "n_attempts": np.frombuffer(self._n_attempts, np.int64)[order],
        }
