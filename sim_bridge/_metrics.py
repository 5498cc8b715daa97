"""Metrics: trace tables from a finished simulation, the summary, straggler labels."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["label_stragglers", "straggler_share", "straggler_thresholds", "summarize"]


def straggler_thresholds(
    job_id, attempt, outcome, duration, beta: float = 1.3, min_tasks: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the job's median original run time and the straggler label (the one rule).

    The median of a job is taken over its *finished* original attempts (a killed original's
    run time is censored: it stopped early) and exists when there are at least ``min_tasks``
    of them. An original attempt is a straggler when its run time exceeds ``beta`` x that
    median: a finished one is labelled 1.0 or 0.0; a killed one is labelled 1.0 when it had
    already run past the threshold, and is censored (NaN) otherwise. Copies, and originals of
    jobs without a median, get NaN. ``sim_bridge.label_stragglers`` and
    ``pipelines.label_stragglers`` both use this function.

    Parameters
    ----------
    job_id, attempt, duration : array-like, one entry per attempt
    outcome : array-like or None
        ``"finished"``/``"killed"`` per attempt (None: every attempt finished).
    beta : float
    min_tasks : int

    Returns
    -------
    median, label : ndarray of float
        NaN where undefined (see above).

    Examples
    --------
    >>> med, lab = straggler_thresholds(["a"] * 5, [0, 0, 0, 0, 1], ["finished"] * 3
    ...     + ["killed", "finished"], [10.0, 10.0, 30.0, 2.0, 4.0], beta=1.3)
    >>> med.tolist(), lab.tolist()
    ([10.0, 10.0, 10.0, 10.0, 10.0], [0.0, 0.0, 1.0, nan, nan])
    """
    if not (isinstance(beta, (int, float, np.floating)) and beta > 0):
        raise ValueError(f"parameter beta must be > 0, got {beta!r}")
    dur = np.asarray(duration, dtype=float)
    orig = np.asarray(attempt) == 0
    fin = orig if outcome is None else orig & (np.asarray(outcome) == "finished")
    codes, uniques = pd.factorize(np.asarray(job_id, dtype=object))
    stats = pd.Series(dur[fin]).groupby(codes[fin]).agg(["median", "size"])
    job_median = np.full(len(uniques), np.nan)
    ok = stats["size"].to_numpy() >= min_tasks
    job_median[stats.index.to_numpy()[ok]] = stats["median"].to_numpy()[ok]
    median = job_median[codes] if len(codes) else np.empty(0)
    above = dur > beta * median  # False where the median is NaN
    label = np.where(orig & ~np.isnan(median) & (fin | above), above.astype(float), np.nan)
    return median, label


def label_stragglers(tasks: pd.DataFrame, beta: float = 1.3, min_tasks: int = 3) -> pd.Series:
    """Wrangler's label of each attempt of a trace (see :func:`straggler_thresholds`).

    Returns a float Series aligned with ``tasks``: 1.0 straggler, 0.0 not, NaN for copies,
    for killed originals still under the threshold (censored), and for jobs with fewer than
    ``min_tasks`` finished originals, which cannot define a median. Without an ``outcome``
    column every attempt counts as finished.

    Examples
    --------
    >>> t = pd.DataFrame({"job_id": ["a"] * 4 + ["b"], "attempt": [0, 0, 0, 0, 0],
    ...                   "duration": [10.0, 10.0, 11.0, 30.0, 5.0]})
    >>> label_stragglers(t).tolist()
    [0.0, 0.0, 0.0, 1.0, nan]
    """
    outcome = tasks["outcome"] if "outcome" in tasks.columns else None
    _median, label = straggler_thresholds(
        tasks["job_id"], tasks["attempt"], outcome, tasks["duration"], beta, min_tasks
    )
    return pd.Series(label, index=tasks.index, dtype=float)


def straggler_share(tasks: pd.DataFrame, beta: float = 1.3, min_tasks: int = 3) -> float:
    """Mean of :func:`label_stragglers` over the labelled original attempts (NaN if none)."""
    lab = label_stragglers(tasks, beta, min_tasks).dropna()
    return float(lab.mean()) if len(lab) else float("nan")


def summarize(jobs: pd.DataFrame, tasks: pd.DataFrame, *, beta: float = 1.3) -> dict:
    """The summary keys of DESIGN.md §6 (plus a few more) from the two tables.

    ``straggler_share`` is the share of labelled original attempts that straggle (beta x job
    median, :func:`straggler_thresholds`); ``straggler_excluded_jobs`` counts the jobs with
    fewer than 3 finished original attempts, which cannot define a median.

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
    outcome = tasks["outcome"].to_numpy()
    median, label = straggler_thresholds(
        tasks["job_id"], tasks["attempt"], outcome, tasks["duration"], beta
    )
    jct = jobs["jct"].to_numpy(dtype=float)
    q = np.percentile(jct, [50, 90, 99]) if jct.size else [np.nan] * 3
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
        "straggler_share": float(np.nanmean(label)) if np.any(~np.isnan(label)) else np.nan,
        "straggler_excluded_jobs": int(
            pd.unique(np.asarray(tasks["job_id"], dtype=object)[np.isnan(median)]).size
        ),
        "beta": float(beta),
    }
