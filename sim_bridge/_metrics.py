"""Metrics: the summary of a finished simulation and the straggler label of each attempt.

The rule itself lives in :mod:`sim_bridge.trace` (:func:`~sim_bridge.trace.straggler_thresholds`,
re-exported here with :func:`~sim_bridge.trace.excluded_counts`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sim_bridge._summary_tallies import SummaryTallies
from sim_bridge.trace import (
    DEFAULT_BETA,
    DEFAULT_MIN_TASKS,
    excluded_counts,
    straggler_thresholds,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SummaryAccumulator",
    "excluded_counts",
    "label_stragglers",
    "straggler_share",
    "straggler_thresholds",
    "summarize",
]


def _stage_of(tasks: pd.DataFrame):
    """The stage column of a trace (its ``phase``), or None: one stage per job."""
    return tasks["phase"] if "phase" in tasks.columns else None


def label_stragglers(
    tasks: pd.DataFrame, beta: float = DEFAULT_BETA, min_tasks: int = DEFAULT_MIN_TASKS
) -> pd.Series:
    """Wrangler's label of each attempt of a trace (see :func:`straggler_thresholds`).

    Returns a float Series aligned with ``tasks``: 1.0 straggler, 0.0 not, NaN for copies,
    for killed originals still under the threshold (censored), and for stages (``phase``)
    of a job with fewer than ``min_tasks`` finished originals, which cannot define a median.
    Without an ``outcome`` column every attempt counts as finished; without a ``phase``
    column every job is one stage.

    Examples
    --------
    >>> import pandas as pd
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
    import pandas as pd

    return pd.Series(label, index=tasks.index, dtype=float)


def straggler_share(
    tasks: pd.DataFrame, beta: float = DEFAULT_BETA, min_tasks: int = DEFAULT_MIN_TASKS
) -> float:
    """Mean of :func:`label_stragglers` over the labelled original attempts (NaN if none)."""
    lab = label_stragglers(tasks, beta, min_tasks).dropna()
    return float(lab.mean()) if len(lab) else float("nan")


class SummaryAccumulator(SummaryTallies):
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
    >>> import pandas as pd
    >>> t = pd.DataFrame({"job_id": ["a"] * 4, "attempt": [0, 0, 0, 1], "duration": [1.0,
    ...     1.0, 5.0, 2.0], "outcome": ["finished"] * 3 + ["killed"], "phase": ["map"] * 4})
    >>> acc = SummaryAccumulator()
    >>> acc.add(t.iloc[:0]); acc.add(t)
    >>> acc.attempts, acc.tasks, acc.killed, acc.task_seconds, acc.straggler_share
    (4, 3, 1, 9.0, 0.3333333333333333)
    """

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
        self._tally(
            label,
            ex_jobs,
            ex_stages,
            attempts=int(len(tasks)),
            tasks=int((tasks["attempt"].to_numpy() == 0).sum()),
            killed=int((outcome == "killed").sum()),
            seconds=float(tasks["duration"].to_numpy(dtype=float).sum()),
        )

    def summary(self, jobs: pd.DataFrame) -> dict:
        """The summary of :func:`summarize` from these attempts and the job table ``jobs``."""
        jct = jobs["jct"].to_numpy(dtype=float)
        makespan = (
            float(jobs["finish_time"].max() - jobs["submit_time"].min()) if len(jobs) else 0.0
        )
        pocd = float(jobs["met_deadline"].mean()) if len(jobs) else float("nan")
        return self._summary(len(jobs), jct, makespan, pocd)


def summarize(jobs: pd.DataFrame, tasks: pd.DataFrame, *, beta: float = DEFAULT_BETA) -> dict:
    """The summary keys (this function owns them) from the two tables.

    ``straggler_share`` is the share of labelled original attempts that straggle (beta x the
    median of their stage of their job, :func:`straggler_thresholds`, stages from the
    ``phase`` column when there is one); ``straggler_excluded_stages`` counts the (job,
    stage) pairs with fewer than 3 finished original attempts, which cannot define a median,
    and ``straggler_excluded_jobs`` the jobs none of whose stages can (with one stage per job
    the two counts are the same). A streaming run computes the same keys chunk by chunk
    (:class:`SummaryAccumulator`).

    Examples
    --------
    >>> import pandas as pd
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
