"""The summary of a streamed run from flat NumPy columns, without pandas.

A streaming run (``simulate(..., trace_sink=path)``) writes its rows to Parquet and keeps
none of them; its summary is accumulated chunk by chunk (each chunk whole jobs) from the
attempts' flat columns. :class:`StreamSummary` computes the keys of
:class:`~sim_bridge._metrics.SummaryAccumulator` -- and the same values, bit for bit -- with
NumPy alone, so a streamed run never imports pandas: :func:`group_medians` is the median of
``pandas.Series.groupby(...).median()`` (the middle value, or the two middle values' sum
halved) and :func:`straggler_labels` applies :func:`sim_bridge.trace.straggler_thresholds`'
rule to those medians. ``tests/test_lazy_imports.py`` checks both against the pandas
functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim_bridge._straggler_rule import DEFAULT_BETA, DEFAULT_MIN_TASKS, check_beta
from sim_bridge._summary_tallies import SummaryTallies

__all__ = ["StreamSummary", "group_medians", "straggler_labels"]


def _group_codes(job_id: np.ndarray, stage: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per row the code of its job and of its (job, stage) group (codes in sorted order)."""
    _, jobs = np.unique(job_id, return_inverse=True)
    jobs = jobs.reshape(-1).astype(np.int64)
    if stage is None:
        return jobs, jobs
    _, stages = np.unique(stage, return_inverse=True)
    stages = stages.reshape(-1).astype(np.int64)
    n_stages = int(stages.max()) + 1 if stages.size else 1
    return jobs, jobs * n_stages + stages


def group_medians(
    codes: np.ndarray, values: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """The median and the size of ``values`` in each group ``0 .. n_groups - 1`` of ``codes``
    (NaN median for an empty group): the middle value, or the two middle values' sum halved.

    Examples
    --------
    >>> med, size = group_medians(np.array([0, 1, 0, 0, 1]), np.array([3.0, 1, 1, 2, 4]), 3)
    >>> med.tolist(), size.tolist()
    ([2.0, 2.5, nan], [3, 2, 0])
    """
    codes = np.asarray(codes, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    size = np.bincount(codes, minlength=n_groups)
    order = np.lexsort((values, codes))  # by group, then by value
    ordered = values[order]
    start = np.cumsum(size) - size
    med = np.full(n_groups, np.nan)
    some = size > 0
    half = size[some] // 2
    hi = ordered[start[some] + half]
    lo = ordered[start[some] + np.maximum(half - 1, 0)]
    med[some] = np.where(size[some] % 2 == 1, hi, (hi + lo) / 2)
    return med, size


def straggler_labels(
    job_id: np.ndarray,
    attempt: np.ndarray,
    finished: np.ndarray,
    duration: np.ndarray,
    beta: float = DEFAULT_BETA,
    min_tasks: int = DEFAULT_MIN_TASKS,
    *,
    stage: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """:func:`sim_bridge.trace.straggler_thresholds` and
    :func:`sim_bridge.trace.excluded_counts` in one pass, from flat columns (``finished``:
    a bool per attempt instead of the ``outcome`` strings).

    Returns
    -------
    median, label : ndarray of float
    excluded_jobs, excluded_stages : int

    Examples
    --------
    >>> med, lab, ej, es = straggler_labels(np.array(["a"] * 5, dtype=object),
    ...     np.array([0, 0, 0, 0, 1]), np.array([True, True, True, False, True]),
    ...     np.array([10.0, 10.0, 30.0, 2.0, 4.0]), beta=1.3)
    >>> med.tolist(), lab.tolist(), ej, es
    ([10.0, 10.0, 10.0, 10.0, 10.0], [0.0, 0.0, 1.0, nan, nan], 0, 0)
    """
    beta = check_beta(beta)
    dur = np.asarray(duration, dtype=float)
    orig = np.asarray(attempt) == 0
    fin = orig & np.asarray(finished, dtype=bool)
    jobs, codes = _group_codes(np.asarray(job_id, dtype=object), stage)
    n_groups = int(codes.max()) + 1 if codes.size else 0
    group_median, size = group_medians(codes[fin], dur[fin], n_groups)
    group_median[size < min_tasks] = np.nan
    median = group_median[codes] if codes.size else np.empty(0)
    above = dur > beta * median  # False where the median is NaN
    label = np.where(orig & ~np.isnan(median) & (fin | above), above.astype(float), np.nan)
    has = ~np.isnan(median)
    excluded = []
    for group in (jobs, codes):  # a job (a stage) is excluded when none of its rows has one
        rows = np.bincount(group)
        with_median = np.bincount(group, weights=has, minlength=len(rows))
        excluded.append(int(((rows > 0) & (with_median == 0)).sum()))
    return median, label, excluded[0], excluded[1]


class StreamSummary(SummaryTallies):
    """:class:`~sim_bridge._metrics.SummaryAccumulator` fed flat columns, without pandas.

    Parameters
    ----------
    beta : float
        Straggler threshold.

    Examples
    --------
    >>> acc = StreamSummary()
    >>> acc.add(job_id=np.array(["a"] * 4, dtype=object), attempt=np.array([0, 0, 0, 1]),
    ...     finished=np.array([True, True, True, False]), duration=np.array([1.0, 1, 5, 2]),
    ...     phase=np.array(["map"] * 4, dtype=object))
    >>> acc.attempts, acc.tasks, acc.killed, acc.task_seconds, acc.straggler_share
    (4, 3, 1, 9.0, 0.3333333333333333)
    """

    def add(
        self,
        *,
        job_id: np.ndarray,
        attempt: np.ndarray,
        finished: np.ndarray,
        duration: np.ndarray,
        phase: np.ndarray | None,
    ) -> None:
        """Account one chunk of attempts (every attempt of each job in it)."""
        n = len(job_id)
        if not n:
            return
        _median, label, ex_jobs, ex_stages = straggler_labels(
            job_id, attempt, finished, duration, self.beta, stage=phase
        )
        self._tally(
            label,
            ex_jobs,
            ex_stages,
            attempts=n,
            tasks=int((np.asarray(attempt) == 0).sum()),
            killed=int((~np.asarray(finished, dtype=bool)).sum()),
            seconds=float(np.asarray(duration, dtype=float).sum()),
        )

    def summary(self, jobs: dict[str, Any]) -> dict:
        """The keys of :meth:`SummaryAccumulator.summary` from the job columns ``jobs``
        (``jct``, ``submit_time``, ``finish_time``, ``met_deadline`` arrays)."""
        jct = np.asarray(jobs["jct"], dtype=float)
        n = jct.size
        makespan = float(np.max(jobs["finish_time"]) - np.min(jobs["submit_time"])) if n else 0.0
        pocd = float(np.mean(jobs["met_deadline"])) if n else float("nan")
        return self._summary(n, jct, makespan, pocd)
