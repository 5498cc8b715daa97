"""Metrics: trace tables from a finished simulation, the summary, straggler labels."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["label_stragglers", "straggler_share", "summarize"]


def label_stragglers(tasks: pd.DataFrame, beta: float = 1.3, min_tasks: int = 3) -> pd.Series:
    """Wrangler's label: an original attempt (``attempt == 0``) is a straggler when its duration
    exceeds ``beta`` x the median duration of its job's original attempts.

    Returns a float Series aligned with ``tasks`` (1.0 straggler, 0.0 not, NaN for copies and
    for jobs with fewer than ``min_tasks`` originals, which cannot define a median).

    Examples
    --------
    >>> t = pd.DataFrame({"job_id": ["a"] * 4 + ["b"], "attempt": [0, 0, 0, 0, 0],
    ...                   "duration": [10.0, 10.0, 11.0, 30.0, 5.0]})
    >>> label_stragglers(t).tolist()
    [0.0, 0.0, 0.0, 1.0, nan]
    """
    if not beta > 0:
        raise ValueError(f"parameter beta must be > 0, got {beta!r}")
    orig = tasks["attempt"].to_numpy() == 0
    out = pd.Series(np.nan, index=tasks.index, dtype=float)
    sub = tasks.loc[orig, ["job_id", "duration"]]
    grp = sub.groupby("job_id", sort=False)["duration"]
    med = grp.transform("median")
    cnt = grp.transform("size")
    lab = (sub["duration"] > beta * med).astype(float)
    lab[cnt < min_tasks] = np.nan
    out.loc[sub.index] = lab
    return out


def straggler_share(tasks: pd.DataFrame, beta: float = 1.3, min_tasks: int = 3) -> float:
    """Mean of :func:`label_stragglers` over the labelled original attempts (NaN if none)."""
    lab = label_stragglers(tasks, beta, min_tasks).dropna()
    return float(lab.mean()) if len(lab) else float("nan")


def summarize(jobs: pd.DataFrame, tasks: pd.DataFrame, *, beta: float = 1.3) -> dict:
    """The summary keys of DESIGN.md §6 (plus a few more) from the two tables.

    ``straggler_share`` is the share of labelled original attempts that straggle (beta x job
    median); ``straggler_excluded_jobs`` counts the jobs with fewer than 3 original attempts,
    which cannot define a median.

    Examples
    --------
    >>> j = pd.DataFrame({"submit_time": [0.0, 1.0], "finish_time": [5.0, 3.0],
    ...                   "jct": [5.0, 2.0], "met_deadline": [True, False]})
    >>> t = pd.DataFrame({"job_id": ["a", "b"], "attempt": [0, 0], "duration": [5.0, 2.0],
    ...                   "outcome": ["finished", "finished"]})
    >>> s = summarize(j, t)
    >>> s["jobs"], s["mean_jct"], s["task_seconds"], s["makespan"], s["pocd"]
    (2, 3.5, 7.0, 5.0, 0.5)
    """
    jct = jobs["jct"].to_numpy(dtype=float)
    q = np.percentile(jct, [50, 90, 99]) if jct.size else [np.nan] * 3
    outcome = tasks["outcome"].to_numpy()
    n_tasks = int((tasks["attempt"].to_numpy() == 0).sum())
    return {
        "jobs": int(len(jobs)),
        "tasks": n_tasks,
        "attempts": int(len(tasks)),
        "copies": int(len(tasks) - n_tasks),
        "killed": int((outcome == "killed").sum()),
        "mean_jct": float(jct.mean()) if jct.size else float("nan"),
        "p50_jct": float(q[0]),
        "p90_jct": float(q[1]),
        "p99_jct": float(q[2]),
        "task_seconds": float(tasks["duration"].to_numpy(dtype=float).sum()),
        "makespan": float(jobs["finish_time"].max() - jobs["submit_time"].min())
        if len(jobs)
        else 0.0,
        "pocd": float(jobs["met_deadline"].mean()) if len(jobs) else float("nan"),
        "straggler_share": straggler_share(tasks, beta),
        "straggler_excluded_jobs": int(
            (tasks.loc[tasks["attempt"].to_numpy() == 0].groupby("job_id").size() < 3).sum()
        ),
        "beta": float(beta),
    }
