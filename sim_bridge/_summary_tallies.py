"""What a run's summary accumulates from its trace, chunk by chunk: the one owner of the
state and of the summary's keys shared by :class:`~sim_bridge._metrics.SummaryAccumulator`
(fed pandas tables) and :class:`~sim_bridge._stream_summary.StreamSummary` (fed flat NumPy
columns, without pandas)."""

from __future__ import annotations

import math

import numpy as np

from sim_bridge._straggler_rule import DEFAULT_BETA, check_beta

__all__ = ["SummaryTallies", "exact_add"]


def exact_add(partials: list[float], x: float) -> None:
    """Add ``x`` to the exact sum held as ``partials`` (non-overlapping floats, in place):
    ``math.fsum(partials)`` is then ``math.fsum`` of every value added, for finite values
    whose sum does not overflow (Shewchuk's algorithm, as ``math.fsum`` runs it; the
    recipe is R. Hettinger's ``msum``, Python Cookbook 2nd ed., 18.10).

    Examples
    --------
    >>> partials = []
    >>> for x in [1e100, 1.0, -1e100, 1e-100]:
    ...     exact_add(partials, x)
    >>> math.fsum(partials) == math.fsum([1e100, 1.0, -1e100, 1e-100]) == 1.0
    True
    """
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo:
            partials[i] = lo
            i += 1
        x = hi
    partials[i:] = [x]


class SummaryTallies:
    """Counts, straggler labels and task-seconds of the attempts seen so far.

    ``task_seconds`` is the correctly rounded sum (:func:`math.fsum`) of each chunk's NumPy
    sum: with one chunk it is NumPy's sum exactly; with several it may differ from it in the
    last bits. The chunks' sums are not kept, only their exact running sum
    (:func:`exact_add`: a few floats, however many chunks).

    Examples
    --------
    >>> acc = SummaryTallies()
    >>> acc._tally(np.array([0.0, np.nan, 1.0]), 0, 1, attempts=3, tasks=2, killed=1,
    ...     seconds=7.5)
    >>> acc.attempts, acc.tasks, acc.killed, acc.task_seconds, acc.straggler_share
    (3, 2, 1, 7.5, 0.5)
    """

    def __init__(self, beta: float = DEFAULT_BETA):
        self.beta = check_beta(beta)
        self.attempts = 0
        self.tasks = 0
        self.killed = 0
        self.excluded_jobs = 0
        self.excluded_stages = 0
        self._label_sum = 0.0
        self._label_n = 0
        self._partials: list[float] = []  # the chunks' sums, exactly (exact_add)
        self._chunks = 0

    def _tally(
        self,
        label: np.ndarray,
        ex_jobs: int,
        ex_stages: int,
        *,
        attempts: int,
        tasks: int,
        killed: int,
        seconds: float,
    ) -> None:
        """Account one chunk: its straggler labels (NaN: unlabelled), exclusion counts,
        attempts, first attempts, killed attempts and summed durations."""
        self.excluded_jobs += ex_jobs
        self.excluded_stages += ex_stages
        labelled = label[~np.isnan(label)]
        self._label_sum += float(labelled.sum())
        self._label_n += int(labelled.size)
        self.attempts += attempts
        self.tasks += tasks
        self.killed += killed
        exact_add(self._partials, seconds)
        self._chunks += 1

    @property
    def task_seconds(self) -> float:
        return math.fsum(self._partials) if self._chunks > 1 else sum(self._partials, 0.0)

    @property
    def straggler_share(self) -> float:
        return self._label_sum / self._label_n if self._label_n else float("nan")

    def _summary(self, n_jobs: int, jct: np.ndarray, makespan: float, pocd: float) -> dict:
        """The summary's keys from the job figures (``jct`` an array of the jobs' JCTs)."""
        q = np.percentile(jct, [50, 90, 99]) if jct.size else [np.nan] * 3
        return {
            "jobs": int(n_jobs),
            "tasks": self.tasks,
            "attempts": self.attempts,
            "copies": self.attempts - self.tasks,
            "killed": self.killed,
            "mean_jct": float(jct.mean()) if jct.size else float("nan"),
            "p50_jct": float(q[0]),
            "p90_jct": float(q[1]),
            "p99_jct": float(q[2]),
            "task_seconds": self.task_seconds,
            "makespan": makespan,
            "pocd": pocd,
            "straggler_share": self.straggler_share,
            "straggler_excluded_jobs": self.excluded_jobs,
            "straggler_excluded_stages": self.excluded_stages,
            "beta": self.beta,
        }
