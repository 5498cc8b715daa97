"""The one straggler rule (:func:`straggler_thresholds`), its default factor
(:data:`DEFAULT_BETA`) and its checks; public through :mod:`sim_bridge.trace`.

Examples
--------
>>> DEFAULT_BETA, DEFAULT_MIN_TASKS
(1.3, 3)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: ``import sim_bridge`` loads no pandas
    from sim_bridge._trace_schema import pd

__all__ = [
    "DEFAULT_BETA",
    "DEFAULT_MIN_TASKS",
    "check_beta",
    "excluded_counts",
    "stage_codes",
    "straggler_thresholds",
]


#: Default straggler factor. Wrangler (Yadwadkar, Ananthanarayanan and Katz, SoCC 2014)
#: labels a task a straggler when it runs longer than ``beta`` times the median task of its
#: job, with ``beta = 1.3``; we compare within the stage (maps with maps, reduces with
#: reduces), as Mantri (OSDI 2010) and LATE (OSDI 2008) compare like with like.
DEFAULT_BETA = 1.3

#: Default minimum number of finished original attempts a stage needs for its median (with
#: one task the median is the task itself, with two it is their mean).
DEFAULT_MIN_TASKS = 3


def check_beta(beta: Any, *, for_training: bool = False) -> float:
    """Validate a straggler factor and return it as a float.

    The rule is defined for any ``beta > 0`` (a simulation's summary may report the share at
    any factor); labels to *train* on need a finite ``beta > 1`` (at or below 1 about half of
    every stage would be "stragglers").

    Examples
    --------
    >>> check_beta(1.3), check_beta(0.5)
    (1.3, 0.5)
    >>> check_beta(0.9, for_training=True)
    Traceback (most recent call last):
    ...
    ValueError: parameter beta must be a finite number > 1, got 0.9
    """
    ok_type = isinstance(beta, (int, float, np.integer, np.floating)) and not isinstance(
        beta, (bool, np.bool_)
    )
    if for_training:
        if not (ok_type and math.isfinite(beta) and beta > 1):
            raise ValueError(f"parameter beta must be a finite number > 1, got {beta!r}")
    elif not (ok_type and beta > 0):
        raise ValueError(f"parameter beta must be > 0, got {beta!r}")
    return float(beta)


def stage_codes(job_id: Any, stage: Any) -> np.ndarray:
    """One integer per row naming its (job, stage) group (``stage=None``: the job alone).

    Examples
    --------
    >>> stage_codes(["a", "a", "b", "a"], ["map", "reduce", "map", "map"]).tolist()
    [0, 1, 2, 0]
    >>> stage_codes(["a", "a", "b"], None).tolist()
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
    job_id: Any,
    attempt: Any,
    outcome: Any,
    duration: Any,
    beta: float = DEFAULT_BETA,
    min_tasks: int = DEFAULT_MIN_TASKS,
    *,
    stage: Any = None,
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
        Straggler factor, > 0 (:func:`check_beta`).
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
    beta = check_beta(beta)
    dur = np.asarray(duration, dtype=float)
    orig = np.asarray(attempt) == 0
    fin = orig if outcome is None else orig & (np.asarray(outcome) == "finished")
    codes = stage_codes(job_id, stage)
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    stats = pd.Series(dur[fin]).groupby(codes[fin]).agg(["median", "size"])
    group_median = np.full(n_groups, np.nan)
    ok = stats["size"].to_numpy() >= min_tasks
    group_median[stats.index.to_numpy()[ok]] = stats["median"].to_numpy()[ok]
    median = group_median[codes] if len(codes) else np.empty(0)
    above = dur > beta * median  # False where the median is NaN
    label = np.where(orig & ~np.isnan(median) & (fin | above), above.astype(float), np.nan)
    return median, label


def excluded_counts(job_id: Any, stage: Any, median: Any) -> tuple[int, int]:
    """``(jobs, stages)`` without a median: jobs none of whose stages has one, and stages.

    Examples
    --------
    >>> excluded_counts(["a", "a", "b"], ["map", "reduce", "map"], [1.0, np.nan, np.nan])
    (1, 2)
    """
    missing = pd.DataFrame(
        {"job": stage_codes(job_id, None), "stage": stage_codes(job_id, stage)}
    ).assign(missing=np.isnan(np.asarray(median, dtype=float)))
    by_stage = missing.groupby("stage")["missing"].all()
    by_job = missing.groupby("job")["missing"].all()
    return int(by_job.sum()), int(by_stage.sum())
