"""Metrics: the summary of a finished simulation and the straggler label (per job stage)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = [
    "SummaryAccumulator",
    "excluded_counts",
    "label_stragglers",
    "straggler_share",
    "straggler_thresholds",
    "summarize",
]


def _stage_codes(job_id, stage) -> np.ndarray:
    """One integer per row naming its (job, stage) group (``stage=None``: the job alone).

    Examples
    --------
    >>> _stage_codes(["a", "a", "b", "a"], ["map", "reduce", "map", "map"]).tolist()
    [0, 1, 2, 0]
    >>> _stage_codes(["a", "a", "b"], None).tolist()
    [0, 0, 1]
    """
    jobs, _ = pd.factorize(np.asarray(job_id, dtype=object))
    if stage is None:
        return jobs
    stages, names = pd.factorize(np.asarray(stage, dtype=object))
    if len(stages) != len(jobs):
        raise ValueError(f"stage has {len(stages)} entries, job_id has {len(jobs)}")
    codes, _ = pd.factorize(jobs.astype(np.int64) * max(len(names), 1) + stages)
    return codes


def straggler_thresholds(
    job_id,
    attempt,
    outcome,
    duration,
    beta: float = 1.3,
    min_tasks: int = 3,
    *,
    stage=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: its stage's median original run time and the straggler label (the one rule).

    Attempts are compared with the other attempts of the same stage of the same job (maps
    against maps, reduces against reduces, as Mantri and LATE compare like with like): the
    group of a row is its ``(job_id, stage)`` pair, or its job when ``stage`` is None (one
    stage per job). The median of a group is taken over its *finished* original attempts (a
    killed original's run time is censored: it stopped early) and exists when there are at
    least ``min_tasks`` of them. An original attempt is a straggler when its run time exceeds
    ``beta`` x that median: a finished one is labelled 1.0 or 0.0; a killed one is labelled
    1.0 when it had already run past the threshold, and is censored (NaN) otherwise. Copies,
    and originals of stages without a median, get NaN. ``sim_bridge.label_stragglers``,
    ``sim_bridge.summarize`` and ``pipelines.label_stragglers`` all use this function.

    Parameters
    ----------
    job_id, attempt, duration : array-like, one entry per attempt
    outcome : array-like or None
        ``"finished"``/``"killed"`` per attempt (None: every attempt finished).
    beta : float
    min_tasks : int
    stage : array-like or None
        The stage of each attempt (a trace's ``phase``: ``map``/``reduce``/``task``); None:
        every job is one stage.

    Returns
    -------
    median, label : ndarray of float
        The median of the row's (job, stage) group and the label; NaN where undefined.

    Examples
    --------
    >>> med, lab = straggler_thresholds(["a"] * 5, [0, 0, 0, 0, 1], ["finished"] * 3
    ...     + ["killed", "finished"], [10.0, 10.0, 30.0, 2.0, 4.0], beta=1.3)
    >>> med.tolist(), lab.tolist()
    ([10.0, 10.0, 10.0, 10.0, 10.0], [0.0, 0.0, 1.0, nan, nan])

    Maps and reduces of one job have their own medians: the long reduces do not straggle
    against the short maps, and the job's two maps cannot define a median.

    >>> med, lab = straggler_thresholds(["a"] * 5, [0] * 5, None,
    ...     [2.0, 2.0, 40.0, 50.0, 90.0], stage=["map"] * 2 + ["reduce"] * 3)
    >>> med.tolist(), lab.tolist()
    ([nan, nan, 50.0, 50.0, 50.0], [nan, nan, 0.0, 0.0, 1.0])
    """
    if not (isinstance(beta, (int, float, np.floating)) and beta > 0):
        raise ValueError(f"parameter beta must be > 0, got {beta!r}")
    dur = np.asarray(duration, dtype=float)
    orig = np.asarray(attempt) == 0
    fin = orig if outcome is None else orig & (np.asarray(outcome) == "finished")
    codes = _stage_codes(job_id, stage)
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    stats = pd.Series(dur[fin]).groupby(codes[fin]).agg(["median", "size"])
    group_median = np.full(n_groups, np.nan)
    ok = stats["size"].to_numpy() >= min_tasks
    group_median[stats.index.to_numpy()[ok]] = stats["median"].to_numpy()[ok]
    median = group_median[codes] if len(codes) else np.empty(0)
    above = dur > beta * median  # False where the median is NaN
    label = np.where(orig & ~np.isnan(median) & (fin | above), above.astype(float), np.nan)
    return median, label


def _stage_of(tasks: pd.DataFrame):
    """The stage column of a trace (its ``phase``), or None: one stage per job."""
    return tasks["phase"] if "phase" in tasks.columns else None


def excluded_counts(job_id, stage, median) -> tuple[int, int]:
    """``(jobs, stages)`` without a median: jobs none of whose stages has one, and stages.

    Examples
    --------
    >>> excluded_counts(["a", "a", "b"], ["map", "reduce", "map"], [1.0, np.nan, np.nan])
    (1, 2)
    """
    missing = pd.DataFrame(
        {"job": _stage_codes(job_id, None), "stage": _stage_codes(job_id, stage)}
    ).assign(missing=np.isnan(np.asarray(median, dtype=float)))
    by_stage = missing.groupby("stage")["missing"].all()
    by_job = missing.groupby("job")["missing"].all()
    return int(by_job.sum()), int(by_stage.sum())


def label_stragglers(tasks: pd.DataFrame, beta: float = 1.3, min_tasks: int = 3) -> pd.Series:
    """Wrangler's label of each attempt of a trace (see :func:`straggler_thresholds`).

    Returns a float Series aligned with ``tasks``: 1.0 straggler, 0.0 not, NaN for copies,
    for killed originals still under the threshold (censored), and for stages (``phase``)
    of a job with fewer than ``min_tasks`` finished originals, which cannot define a median.
    Without an ``outcome`` column every attempt counts as finished; without a ``phase``
    column every job is one stage.

    Examples
    --------
    >>> t = pd.DataFrame({"job_id": ["a"] * 4 + ["b"], "attempt": [0, 0, 0, 0, 0],
    ...                   "duration": [10.0, 10.0, 11.0, 30.0, 5.0]})
    >>> label_stragglers(t).tolist()
    [0.0, 0.0, 0.0, 1.0, nan]
    >>> label_stragglers(t.assign(phase=["map"] * 3 + ["reduce", "map"])).tolist()
    [0.0, 0.0, 0.0, nan, nan]
    """
    outcome = tasks["outcome"] if "outcome" in tasks.columns else None
    _median, label = straggler_thresholds(
        tasks["job_id"],
        tasks["attempt"],
        outcome,
        tasks["duration"],
        beta,
        min_tasks,
        stage=_stage_of(tasks),
    )
    return pd.Series(label, index=tasks.index, dtype=float)


def straggler_share(tasks: pd.DataFrame, beta: float = 1.3, min_tasks: int = 3) -> float:
    """Mean of :func:`label_stragglers` over the labelled original attempts (NaN if none)."""
    lab = label_stragglers(tasks, beta, min_tasks).dropna()
    return float(lab.mean()) if len(lab) else float("nan")


class SummaryAccumulator:
    """The trace half of :func:`summarize`, fed chunk by chunk (each chunk whole jobs).

    A streaming run writes its trace in chunks and keeps none of it: this keeps what the
    summary needs. Counts and the straggler labels are exact -- a label only depends on the
    attempts of its own (job, stage), which a chunk of whole jobs holds -- so the share and
    the exclusion counts equal :func:`summarize`'s on the whole table. ``task_seconds`` is the
    correctly rounded sum (:func:`math.fsum`) of each chunk's NumPy sum: with one chunk it is
    NumPy's sum exactly; with several it may differ from it in the last bits (NumPy's pairwise
    sum has a relative error of about ``1e-16 log2(n)``).

    Examples
    --------
    >>> t = pd.DataFrame({"job_id": ["a"] * 4, "attempt": [0, 0, 0, 1], "duration": [1.0,
    ...     1.0, 5.0, 2.0], "outcome": ["finished"] * 3 + ["killed"], "phase": ["map"] * 4})
    >>> acc = SummaryAccumulator()
    >>> acc.add(t.iloc[:0]); acc.add(t)
    >>> acc.attempts, acc.tasks, acc.killed, acc.task_seconds, acc.straggler_share
    (4, 3, 1, 9.0, 0.3333333333333333)
    """

    def __init__(self, beta: float = 1.3):
        if not (isinstance(beta, (int, float, np.floating)) and beta > 0):
            raise ValueError(f"parameter beta must be > 0, got {beta!r}")
        self.beta = float(beta)
        self.attempts = 0
        self.tasks = 0
        self.killed = 0
        self.excluded_jobs = 0
        self.excluded_stages = 0
        self._label_sum = 0.0
        self._label_n = 0
        self._seconds: list[float] = []

    def add(self, tasks: pd.DataFrame) -> None:
        """Account the attempts of ``tasks`` (every attempt of each job in it)."""
        if not len(tasks):
            return
        outcome = tasks["outcome"].to_numpy()
        stage = _stage_of(tasks)
        median, label = straggler_thresholds(
            tasks["job_id"], tasks["attempt"], outcome, tasks["duration"], self.beta, stage=stage
        )
        ex_jobs, ex_stages = excluded_counts(tasks["job_id"], stage, median)
        self.excluded_jobs += ex_jobs
        self.excluded_stages += ex_stages
        labelled = label[~np.isnan(label)]
        self._label_sum += float(labelled.sum())
        self._label_n += int(labelled.size)
        self.attempts += int(len(tasks))
        self.tasks += int((tasks["attempt"].to_numpy() == 0).sum())
        self.killed += int((outcome == "killed").sum())
        self._seconds.append(float(tasks["duration"].to_numpy(dtype=float).sum()))

    @property
    def task_seconds(self) -> float:
        return math.fsum(self._seconds) if len(self._seconds) > 1 else sum(self._seconds, 0.0)

    @property
    def straggler_share(self) -> float:
        return self._label_sum / self._label_n if self._label_n else float("nan")

    def summary(self, jobs: pd.DataFrame) -> dict:
        """The summary of :func:`summarize` from these attempts and the job table ``jobs``."""
        jct = jobs["jct"].to_numpy(dtype=float)
        q = np.percentile(jct, [50, 90, 99]) if jct.size else [np.nan] * 3
        return {
            "jobs": int(len(jobs)),
            "tasks": self.tasks,
            "attempts": self.attempts,
            "copies": self.attempts - self.tasks,
            "killed": self.killed,
            "mean_jct": float(jct.mean()) if jct.size else float("nan"),
            "p50_jct": float(q[0]),
            "p90_jct": float(q[1]),
            "p99_jct": float(q[2]),
            "task_seconds": self.task_seconds,
            "makespan": float(jobs["finish_time"].max() - jobs["submit_time"].min())
            if len(jobs)
            else 0.0,
            "pocd": float(jobs["met_deadline"].mean()) if len(jobs) else float("nan"),
            "straggler_share": self.straggler_share,
            "straggler_excluded_jobs": self.excluded_jobs,
            "straggler_excluded_stages": self.excluded_stages,
            "beta": self.beta,
        }


def summarize(jobs: pd.DataFrame, tasks: pd.DataFrame, *, beta: float = 1.3) -> dict:
    """The summary keys of DESIGN.md §6 (plus a few more) from the two tables.

    ``straggler_share`` is the share of labelled original attempts that straggle (beta x the
    median of their stage of their job, :func:`straggler_thresholds`, stages from the
    ``phase`` column when there is one); ``straggler_excluded_stages`` counts the (job,
    stage) pairs with fewer than 3 finished original attempts, which cannot define a median,
    and ``straggler_excluded_jobs`` the jobs none of whose stages can (with one stage per job
    the two counts are the same). A streaming run computes the same keys chunk by chunk
    (:class:`SummaryAccumulator`).

    Examples
    --------
    >>> j = pd.DataFrame({"submit_time": [0.0, 1.0], "finish_time": [5.0, 3.0],
    ...                   "jct": [5.0, 2.0], "met_deadline": [True, False]})
    >>> t = pd.DataFrame({"job_id": ["a", "b"], "attempt": [0, 0], "duration": [5.0, 2.0],
    ...                   "outcome": ["finished", "finished"]})
    >>> s = summarize(j, t)
    >>> s["jobs"], s["mean_jct"], s["task_seconds"], s["makespan"], s["pocd"]
    (2, 3.5, 7.0, 5.0, 0.5)
    >>> s["straggler_excluded_jobs"], s["straggler_excluded_stages"]
    (2, 2)
    """
    acc = SummaryAccumulator(beta)
    acc.add(tasks)
    return acc.summary(jobs)
