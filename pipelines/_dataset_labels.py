"""Label stragglers in a validated trace as Wrangler does (:func:`label_stragglers`).

A trace is one row per task attempt. :func:`label_stragglers` keeps the original attempts
(``attempt == 0``) and labels one a straggler when its duration exceeds ``beta`` times the
median duration of the finished original attempts of the same stage (``phase``) of its job:
maps against maps, reduces against reduces. Stages with fewer than ``min_tasks`` finished
original attempts have no meaningful median (with one task the median is the task itself,
with two it is their mean) and are excluded and counted; the default is 3.

An original attempt that did not finish (killed because a copy won, or failed) only gives a
lower bound on its duration: it is labelled a straggler when that bound already exceeds the
threshold, otherwise its label is unknown and it is dropped (counted as ``censored``).

Examples
--------
>>> import pandas as pd
>>> from pipelines._dataset_validate import validate_trace
>>> t = pd.DataFrame({"job_id": ["a"] * 3, "task_id": list("xyz"), "attempt": 0,
...     "workload": "SYN", "node": "n0", "phase": "map", "submit_time": 0.0,
...     "launch_time": 0.0, "end_time": [10.0, 10.0, 30.0],
...     "duration": [10.0, 10.0, 30.0], "outcome": "finished", "c_cpu": 0.1})
>>> label_stragglers(validate_trace(t)).y.tolist()
[0, 0, 1]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sim_bridge.trace import (
    DEFAULT_BETA,
    DEFAULT_MIN_TASKS,
    check_beta,
    counter_columns,
    excluded_counts,
    straggler_thresholds,
)

__all__ = ["LabelledTrace", "label_stragglers"]


@dataclass
class LabelledTrace:
    """Original attempts with a ``straggler`` label, and what was left out.

    Attributes
    ----------
    frame : pandas.DataFrame
        The kept original attempts (index 0..n-1) with a boolean ``straggler`` column and a
        float ``stage_median`` column (the median of the row's stage of its job), sorted by
        ``launch_time`` (ties by job, task).
    counters : list of str
        The counter columns.
    beta, min_tasks : float, int
        The labelling parameters.
    excluded_jobs : int
        Jobs none of whose stages has ``min_tasks`` finished original attempts.
    excluded_rows : int
        Original attempts of the excluded stages.
    censored_rows : int
        Unfinished original attempts whose lower-bound duration did not reach the threshold.
    excluded_stages : int
        (job, stage) pairs with fewer than ``min_tasks`` finished original attempts.
    dropped_workloads : dict
        Workloads removed by :func:`check_classes` (``on_single_class="drop"``), with why.
    """

    frame: pd.DataFrame
    counters: list[str]
    beta: float
    min_tasks: int
    excluded_jobs: int = 0
    excluded_rows: int = 0
    censored_rows: int = 0
    excluded_stages: int = 0
    dropped_workloads: dict[str, str] = field(default_factory=dict)

    @property
    def X(self) -> pd.DataFrame:  # noqa: N802 - scikit-learn naming
        """``node``, ``workload`` and the counters: the model input."""
        return self.frame[["node", "workload", *self.counters]]

    @property
    def y(self) -> np.ndarray:
        """The labels as 0/1 integers."""
        return self.frame["straggler"].to_numpy(dtype=np.int64)

    def summary(self) -> dict:
        """Rows, pairs, straggler share per workload and the exclusions, for summary.json."""
        f = self.frame
        per_wl = f.groupby("workload", sort=True)["straggler"].agg(["size", "mean"])
        return {
            "rows": len(f),
            "pairs": int(f.groupby(["node", "workload"]).ngroups),
            "nodes": int(f["node"].nunique()),
            "workloads": sorted(f["workload"].unique().tolist()),
            "counters": len(self.counters),
            "straggler_share": float(f["straggler"].mean()) if len(f) else float("nan"),
            "straggler_share_by_workload": {str(w): float(r["mean"]) for w, r in per_wl.iterrows()},
            "rows_by_workload": {str(w): int(r["size"]) for w, r in per_wl.iterrows()},
            "beta": self.beta,
            "min_tasks": self.min_tasks,
            "excluded_jobs": self.excluded_jobs,
            "excluded_stages": self.excluded_stages,
            "excluded_rows": self.excluded_rows,
            "censored_rows": self.censored_rows,
            "dropped_workloads": dict(self.dropped_workloads),
        }


def label_stragglers(
    trace: pd.DataFrame,
    beta: float = DEFAULT_BETA,
    min_tasks: int = DEFAULT_MIN_TASKS,
) -> LabelledTrace:
    """Label original attempts: straggler when ``duration > beta * stage median``.

    The median is that of the finished original attempts of the same stage (``phase``) of
    the same job (:func:`sim_bridge.trace.straggler_thresholds`, the one rule).

    Parameters
    ----------
    trace : pandas.DataFrame
        A validated trace (:func:`validate_trace`).
    beta : float
        Threshold factor, > 1 (Wrangler uses 1.3).
    min_tasks : int
        Minimum number of finished original attempts a stage needs for its median (>= 1).

    Returns
    -------
    LabelledTrace

    Examples
    --------
    >>> from pipelines._dataset_validate import validate_trace
    >>> t = pd.DataFrame({"job_id": ["a"] * 4, "task_id": list("wxyz"), "attempt": 0,
    ...     "workload": "SYN", "node": "n0", "phase": "map", "submit_time": 0.0,
    ...     "launch_time": [0.0, 1.0, 2.0, 3.0], "end_time": [10.0, 11.0, 12.0, 23.0],
    ...     "duration": [10.0, 10.0, 10.0, 20.0], "outcome": "finished", "c_cpu": 0.1})
    >>> lt = label_stragglers(validate_trace(t))
    >>> lt.frame["straggler"].tolist(), lt.excluded_jobs
    ([False, False, False, True], 0)

    The long task as the job's only reduce: the maps keep their median, the reduce stage has
    none and is excluded (the job is not: its map stage is labelled).

    >>> lt = label_stragglers(validate_trace(t.assign(phase=["map"] * 3 + ["reduce"])))
    >>> lt.frame["straggler"].tolist(), lt.excluded_jobs, lt.excluded_stages, lt.excluded_rows
    ([False, False, False], 0, 1, 1)
    """
    beta = check_beta(beta, for_training=True)
    if not (isinstance(min_tasks, (int, np.integer)) and min_tasks >= 1):
        raise ValueError(f"min_tasks must be an integer >= 1, got {min_tasks!r}")
    counters = counter_columns(trace)
    orig = trace.loc[trace["attempt"] == 0]
    # the one labelling rule, shared with the simulator's summary (sim_bridge)
    median, label = straggler_thresholds(
        orig["job_id"],
        orig["attempt"],
        orig["outcome"],
        orig["duration"],
        beta,
        min_tasks,
        stage=orig["phase"],
    )
    in_ok = ~np.isnan(median)
    known = ~np.isnan(label)
    straggler = label == 1.0
    excluded_jobs, excluded_stages = excluded_counts(orig["job_id"], orig["phase"], median)
    censored = int((in_ok & ~known).sum())
    frame = orig.loc[known].assign(straggler=straggler[known], stage_median=median[known])
    frame = frame.sort_values(
        ["launch_time", "job_id", "task_id"], kind="mergesort", ignore_index=True
    )
    return LabelledTrace(
        frame=frame,
        counters=counters,
        beta=float(beta),
        min_tasks=int(min_tasks),
        excluded_jobs=excluded_jobs,
        excluded_rows=int((~in_ok).sum()),
        censored_rows=censored,
        excluded_stages=excluded_stages,
    )
