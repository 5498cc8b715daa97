"""The trace columns of closed attempts, read once into flat arrays (the objects can then go).

:func:`attempt_columns` reads a list of closed :class:`~sim_bridge._jobs.Attempt` objects.
:func:`job_attempt_columns` reads a done job of a streaming run, whose tasks that ran one
attempt keep it as three integers of the job's rows (:class:`~sim_bridge._jobs.OneFinished`):
the same columns, in the same order (each task's attempts in launch order, tasks in the
job's order), with the launch records' offsets in the job's flat ``_recs``.

Examples
--------
>>> from sim_bridge._jobs import Attempt, Job, Task
>>> job = Job()
>>> job.job_id, job.workload, job.submit_time, job.uid = "j", "SYN", 0.5, 0
>>> att = Attempt(0, Task(0, job, 1, 0, "map", 4.0, 0.1), 0, 3, 1.0, 0.0)
>>> att.state, att.end_time = 1, 2.5
>>> cols = attempt_columns([att])
>>> cols["job_id"].tolist(), cols["node"].tolist(), cols["end_time"].tolist()
(['j'], [3], [2.5])
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np

from sim_bridge._jobs import DONE_F, ONE_ROW, DoneOne

__all__ = ["ATTEMPT_COLUMNS", "attempt_columns", "job_attempt_columns"]

#: the per-row columns of :func:`attempt_columns`, in order
ATTEMPT_COLUMNS = ("job_id", "workload", "submit_time", "node", "launch_time", "end_time",
                   "state", "attempt", "task_index", "phase", "input_work")  # fmt: skip

_A_FINISHED = 1


def attempt_columns(atts: list) -> dict[str, np.ndarray]:
    """The trace columns of closed attempts (:data:`ATTEMPT_COLUMNS`), read from the objects
    column by column with C-level getters (no per-row tuples)."""
    n = len(atts)
    tasks_of = list(map(attrgetter("task"), atts))
    tjobs = list(map(attrgetter("job"), tasks_of))
    return {
        "job_id": np.array(list(map(attrgetter("job_id"), tjobs)), dtype=object),
        "workload": np.array(list(map(attrgetter("workload"), tjobs)), dtype=object),
        "submit_time": np.fromiter(map(attrgetter("submit_time"), tjobs), float, n),
        "node": np.fromiter(map(attrgetter("node"), atts), np.int64, n),
        "launch_time": np.fromiter(map(attrgetter("launch_time"), atts), float, n),
        "end_time": np.fromiter(map(attrgetter("end_time"), atts), float, n),
        "state": np.fromiter(map(attrgetter("state"), atts), np.int8, n),
        "attempt": np.fromiter(map(attrgetter("index"), atts), np.int64, n),
        "task_index": np.fromiter(map(attrgetter("index"), tasks_of), np.int64, n),
        "phase": np.array(list(map(attrgetter("phase"), tasks_of)), dtype=object),
        "input_work": np.fromiter(map(attrgetter("work"), tasks_of), float, n),
    }


def job_attempt_columns(job: Any) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """The columns of a done job's attempts and their launch records' offsets.

    Row for row what :func:`attempt_columns` reads from ``[a for t in job.tasks for a in
    t.attempts]``, without rebuilding the attempts a streaming run kept as rows of the job
    (:class:`~sim_bridge._jobs.OneFinished`: launch and end from the task, uid, node and
    offset from ``job._one``). The offsets are those of each row's launch record in
    ``job._recs`` (None when the attempts hold their records as lists: an in-memory run).

    Examples
    --------
    >>> import sim_bridge
    >>> from sim_bridge import Cluster, JobSpec, Workload
    >>> from sim_bridge._engine import Simulator
    >>> w = Workload("SYN", [JobSpec("j", 0.0, [1.0, 2.0, 3.0], [2.0])])
    >>> done = []
    >>> sim = Simulator(Cluster(2, 1, 0, ideal=True), [w], sim_bridge.get_policy("none"),
    ...     sim_bridge.get_policy("fifo"), noise=False, skew=(0, 0), keep_history=False,
    ...     on_job_done=done.append)
    >>> sim.run()
    >>> cols, offsets = job_attempt_columns(done[0])
    >>> cols["task_index"].tolist(), cols["node"].tolist(), offsets.tolist()
    ([0, 1, 2, 3], [0, 1, 0, 1], [0, 4, 8, 12])
    >>> atts = [a for t in done[0].tasks for a in t.attempts]  # rebuilt: the same columns
    >>> all((attempt_columns(atts)[k] == cols[k]).all() for k in ATTEMPT_COLUMNS)
    True
    """
    tasks = job.tasks
    one = job._one
    if one is None:  # no attempt kept as a row: read the objects
        atts = [a for task in tasks for a in task.attempts]
        cols = attempt_columns(atts)
        if job._recs is None:
            return cols, None
        return cols, np.fromiter(map(attrgetter("_rec"), atts), np.int64, len(atts))
    # a streaming run's storage (sim_bridge._task_list.TaskList): a dropped done task is
    # None there; one that ran one attempt is read from the rows like a DoneOne, not built
    # again; one that ran several (a DoneMany: minus their count in its row) is built
    # again, and its attempts are read as objects
    items = getattr(tasks, "_items", tasks)
    rows = np.frombuffer(one, np.int64).reshape(-1, ONE_ROW)  # uid, node, offset, task uid
    for i in np.flatnonzero(rows[:, 1] < 0).tolist():
        if items[i] is None:
            _ = tasks[i]
    n_t = len(items)
    kept_l = [x is None or type(x) is DoneOne for x in items]
    kept = np.fromiter(kept_l, bool, n_t)
    counts = np.fromiter(
        (1 if k else len(x.attempts) for x, k in zip(items, kept_l, strict=True)), np.int64, n_t
    )
    n = int(counts.sum())
    start = np.cumsum(counts) - counts
    at_kept = start[kept]  # the row of each kept task's one attempt
    obj_rows = np.ones(n, bool)
    obj_rows[at_kept] = False
    atts = [a for x, k in zip(items, kept_l, strict=True) if not k for a in x.attempts]
    objs = attempt_columns(atts)
    index = np.flatnonzero(kept)  # a task's index is its position in the job's tasks
    m = len(index)
    n0 = len(job.stages[0])
    k0 = int(np.searchsorted(index, n0))  # kept tasks of the first stage
    phases = job.spec.phases
    # work, first launch, finish time
    floats = np.frombuffer(job._done_f, np.float64).reshape(-1, DONE_F)
    kept_cols: dict[str, Any] = {
        "node": rows[index, 1],
        "launch_time": floats[index, 1],
        "end_time": floats[index, 2],
        "state": _A_FINISHED,
        "attempt": 0,
        "task_index": index,
        "phase": [phases[0]] * k0 + [phases[1]] * (m - k0),
        "input_work": floats[index, 0],
    }
    cols = {
        "job_id": np.full(n, job.job_id, dtype=object),
        "workload": np.full(n, job.workload, dtype=object),
        "submit_time": np.full(n, job.submit_time, dtype=float),
    }
    for k, v in kept_cols.items():
        col = np.empty(n, dtype=objs[k].dtype)
        col[at_kept] = v
        col[obj_rows] = objs[k]
        cols[k] = col
    offsets = np.empty(n, np.int64)
    offsets[at_kept] = rows[index, 2]
    offsets[obj_rows] = np.fromiter(map(attrgetter("_rec"), atts), np.int64, len(atts))
    return cols, offsets
