"""Reactive speculation baselines: none, Hadoop MRv2, LATE, Spark, MapReduce backups, Mantri.

Each scan sees only what a real scheduler sees: attempts' progress (as reported by task
trackers), elapsed times, finished attempts' durations, the task's input size (``task.work``)
and node history. None reads an attempt's future end time.
"""

from __future__ import annotations

import math
import os
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import (
    Action,
    Kill,
    Launch,
    SpeculationPolicy,
    check_fraction,
    check_positive,
)

try:  # LATE's scan in C, with the progress loop (built by pip install; optional)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._progress_core import late_scan as _late_scan
    from sim_bridge._progress_core import late_slow_nodes as _late_slow_nodes
    from sim_bridge._progress_core import mantri_scan as _mantri_scan
except ImportError:  # pragma: no cover - an install without a C compiler
    _late_scan = _late_slow_nodes = _mantri_scan = None

#: Run LATE's scan through the compiled ``late_scan`` when it is built (and the view's
#: progress loop is compiled: ``sim_bridge._view.PROGRESS_IN_C``); False: the Python scan
#: (``LATE._ranked_py``), its reference. The same scans bit for bit
#: (``tests/test_progress_core.py``, ``tests/test_late_scan.py``).
LATE_SCAN_IN_C = True

#: Run Mantri's tick through the compiled ``mantri_scan`` likewise; False: the Python tick
#: (``Mantri._on_tick_py``), its reference. The same actions from the same reads
#: (``tests/test_progress_core.py``).
MANTRI_SCAN_IN_C = True

__all__ = [
    "BackupTasks",
    "HadoopSpeculator",
    "LATE",
    "Mantri",
    "NoSpeculation",
    "SparkSpeculation",
    "Spark4Speculation",
]


@register_policy
class NoSpeculation(SpeculationPolicy):
    """No speculation: every task runs its original attempt only."""

    name = "none"


class _Durations:
    """Run times of the attempts that finished a stage's tasks: running sums (exact mean and
    sd) and a sorted snapshot refreshed when the count grew by 2% (exact below 50 values).

    Only the snapshot and the run times added since it are kept (C doubles, 8 bytes a value:
    a LATE day's live jobs hold millions). A refresh sorts the snapshot and the new ones
    together (NumPy's stable sort, a Timsort: the snapshot is one run, so it costs about a
    sort of the new ones and a merge), which gives the array a sort of every value added
    would: the same multiset of floats, sorted. Until
    2026-11-30 (l) every value was also kept in arrival order, and LATE's inverse rates as a
    third array: 24 bytes a finished task instead of 8.

    Examples
    --------
    >>> d = _Durations()
    >>> for v in (3.0, 1.0, 2.0):
    ...     d.add(v)
    >>> len(d), d.mean(), d.sorted().tolist(), d.inverse_array().tolist()
    (3, 2.0, [1.0, 2.0, 3.0], [0.3333333333333333, 0.5, 1.0])
    """

    __slots__ = (
        "_new",
        "_n",
        "total",
        "total_sq",
        "_sorted",
        "_inv",
        "_inv_of",
        "_view",
        "_view_of",
    )

    def __init__(self) -> None:
        self._new: array[float] = array("d")  # added since the snapshot, in arrival order
        self._n = 0
        self.total = 0.0
        self.total_sq = 0.0
        self._sorted = np.empty(0)
        self._inv: list[float] = []
        self._inv_of: np.ndarray | None = None
        self._view: memoryview | None = None  # not pickled (__getstate__)
        self._view_of: np.ndarray | None = None

    def add(self, d: float) -> None:
        self._new.append(d)
        self._n += 1
        self.total += d
        self.total_sq += d * d

    def __len__(self) -> int:
        return self._n

    def mean(self) -> float:
        return self.total / self._n

    def std(self) -> float:
        n = self._n
        m = self.total / n
        return math.sqrt(max(self.total_sq / n - m * m, 0.0))

    def sorted(self) -> np.ndarray:
        """Every value added, ascending, as of the last refresh (a new array at each)."""
        n = self._n
        n_sorted = len(self._sorted)
        if n != n_sorted and (n < 50 or n - n_sorted >= 0.02 * n_sorted):
            both = np.concatenate((self._sorted, np.frombuffer(self._new)))
            self._sorted = np.sort(both, kind="stable")
            self._new = array("d")
        return self._sorted

    def inverse_array(self) -> np.ndarray:
        """``1 / d`` for the positive ``d`` of :meth:`sorted`, ascending (the progress rates
        of the finished tasks of the snapshot), computed at each call: the compiled LATE scan
        divides as it reads (``_progress_core._kth`` with ``inverse``) and keeps no copy."""
        done = self.sorted()
        return np.ascontiguousarray((1.0 / done[done > 0])[::-1])

    def inverse_rates(self) -> list[float]:
        """:meth:`inverse_array` as a list of floats, converted only when the snapshot
        changes (the Python scan's; the compiled one reads it only where it leaves a case to
        NumPy)."""
        done = self.sorted()
        if self._inv_of is not done:
            self._inv = self.inverse_array().tolist()
            self._inv_of = done
        return self._inv

    def sorted_view(self) -> memoryview:
        """:meth:`sorted` as a ``memoryview`` (its items read as Python floats, by
        :func:`_count_below`'s bisection), made only when the snapshot changes. A list of
        the floats, kept for Mantri until 2026-11-30 (l), held 32 bytes a value more."""
        done = self.sorted()
        view = self._view
        if view is None or self._view_of is not done:
            view = self._view = done.data
            self._view_of = done
        return view

    def __getstate__(self) -> dict[str, Any]:
        # a memoryview cannot be pickled: it is made again when next read
        return {k: getattr(self, k) for k in self.__slots__ if k not in ("_view", "_view_of")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._view = self._view_of = None


_EMPTY = _Durations()


def _quantile_linear(rates: list[float], done: list[float], q: float) -> float:
    """``float(np.quantile(rates + done, q))`` (method ``"linear"``), bit for bit, without
    NumPy's per-call overhead (a LATE scan calls it per job and tick on pools of a few
    values). ``done`` is ascending. The two order statistics are picked from one sort
    (Timsort merges the sorted ``done`` run in linear time) and interpolated with NumPy's
    own formula (``_lerp``: ``a + (b - a) g``, or ``b - (b - a) (1 - g)`` for ``g >= 0.5``).
    Cases outside the interpolating branch (``q`` not a float, the last index, a NaN rate or
    rates summing to NaN) are left to NumPy.
    """
    n = len(rates) + len(done)
    if isinstance(q, float) and n >= 2:
        vi = (n - 1) * float(q)
        total = sum(rates)
        if 0.0 <= vi < n - 1 and total == total:  # no NaN among the rates
            lo = int(vi)  # floor (vi >= 0)
            g = vi - lo
            pool = done + rates
            pool.sort()
            a = pool[lo]
            b = pool[lo + 1]
            diff = b - a
            return b - diff * (1 - g) if g >= 0.5 else a + diff * g
    return float(np.quantile(np.concatenate([np.asarray(rates, dtype=float), done]), q))


def _compiled_progress_args(view) -> tuple | None:
    """What a compiled scan reads the progress with (``SimView._progress_args``), or None
    when the view is not a ``SimView`` or its progress loop is not compiled."""
    progress_args = getattr(view, "_progress_args", None)
    return None if progress_args is None else progress_args()


def _count_below(values: Sequence[float] | memoryview, x: float, arr: np.ndarray) -> int:
    """``int(np.searchsorted(arr, x))`` (side ``"left"``: the number of values below ``x``)
    for ``values`` holding ``arr``'s floats sorted ascending (a list, or the array's
    ``memoryview``: :meth:`_Durations.sorted_view`), by bisection on them (no NumPy call
    per lookup). Both agree on every float once NaN is out of the way (NumPy sorts NaN
    last; ``bisect`` would misplace it), so NaN in ``x`` or ``values`` goes to NumPy.

    Examples
    --------
    >>> arr = np.array([1.0, 2.0, 2.0, 3.0])
    >>> [_count_below(memoryview(arr), x, arr) for x in (0.5, 2.0, 2.5, 9.0)]
    [0, 1, 3, 4]
    """
    if x != x or (len(values) and values[-1] != values[-1]):
        return int(np.searchsorted(arr, x))
    return bisect_left(values, x)


class _StageStats(SpeculationPolicy):
    """Keeps, per (job, stage) of the jobs alive, the run times of the attempts that finished
    a task; a job's first stage's go when a task of its second stage finishes."""

    def reset(self) -> None:
        self._durs: dict[tuple[int, int], _Durations] = {}

    def on_attempt_finished(self, view, attempt):
        task = attempt.task
        job = task.job
        if job.done:
            self._durs.pop((job.uid, 0), None)
            self._durs.pop((job.uid, 1), None)
            return []
        key = (job.uid, task.stage)
        stats = self._durs.get(key)
        if stats is None:
            stats = self._durs[key] = _Durations()
            if task.stage:
                # the first stage is over (a job's stage only moves on) and its run times are
                # read no more (_stage_durations reads the job's stage): three arrays of
                # 8 bytes a task, held through the whole second stage until 2026-11-29 (g)
                self._durs.pop((job.uid, 0), None)
        stats.add(attempt.end_time - attempt.launch_time)
        return []

    def _stage_durations(self, job) -> _Durations:
        return self._durs.get((job.uid, job.stage), _EMPTY)


#: entries of HadoopSpeculator._next_ok kept before the passed ones are dropped
_PRUNE_MIN = 64


@register_policy
class HadoopSpeculator(_StageStats):
    """Hadoop MRv2 default speculator: copy the task whose estimated end most exceeds
    mean + 1.0 sd of finished tasks (caps max(10, 1% of tasks, 10% of running))."""

    name = "hadoop"

    def __init__(
        self,
        slowtask_threshold: float = 1.0,
        min_allowed: int = 10,
        proportion_running: float = 0.1,
        proportion_total: float = 0.01,
        min_done_fraction: float = 0.05,
        interval: float = 1.0,
        retry_after_speculate: float = 15.0,
    ):
        self.slowtask_threshold = slowtask_threshold
        self.min_allowed = min_allowed
        self.proportion_running = proportion_running
        self.proportion_total = proportion_total
        self.min_done_fraction = min_done_fraction
        self.interval = interval
        self.retry_after_speculate = retry_after_speculate

    def validate(self) -> None:
        check_positive(self, "slowtask_threshold", self.slowtask_threshold, allow_zero=True)
        check_positive(self, "min_allowed", self.min_allowed, allow_zero=True)
        check_fraction(self, "proportion_running", self.proportion_running)
        check_fraction(self, "proportion_total", self.proportion_total)
        check_fraction(self, "min_done_fraction", self.min_done_fraction)
        check_positive(self, "interval", self.interval)
        check_positive(self, "retry_after_speculate", self.retry_after_speculate, allow_zero=True)

    def reset(self) -> None:
        super().reset()
        self._next_ok: dict[int, float] = {}
        self._prune_at = _PRUNE_MIN

    def on_tick(self, view):
        free = view.free_slot_count
        if not free:
            return []
        now = view.now
        if len(self._next_ok) > self._prune_at:
            # an entry at or before now acts as no entry (the clock never goes back): drop
            # them, finished jobs' included, so the dict holds the jobs still waiting
            self._next_ok = {u: t for u, t in self._next_ok.items() if t > now}
            self._prune_at = 2 * len(self._next_ok) + _PRUNE_MIN
        out = []
        for job in view.active_jobs():
            if not job.running or self._next_ok.get(job.uid, 0.0) > now:
                continue
            stage = job.stages[job.stage]
            durs = self._stage_durations(job)
            if not len(durs) or len(durs) < self.min_done_fraction * len(stage):
                continue
            mean = durs.mean()
            sd = durs.std()
            threshold = mean + self.slowtask_threshold * sd
            live = list(job.running.values())
            n_spec = sum(1 for a in live if a.index > 0)
            cap = max(
                self.min_allowed,
                self.proportion_running * len(live),
                self.proportion_total * job.n_tasks,
            )
            if n_spec >= cap:
                continue
            cands = [
                a
                for a in live
                if a.task.n_live == 1 and len(a.task.attempts) == 1 and a.task.stage == job.stage
            ]
            if not cands:
                continue
            prog = view.progress_many(cands)
            best, best_value = None, 0.0
            for a, p in zip(cands, prog, strict=True):
                if p <= 0.0:
                    continue
                est_run = (now - a.launch_time) / p
                if est_run <= threshold:
                    continue
                value = (a.launch_time + est_run) - (now + mean)
                if value > best_value:
                    best, best_value = a, value
            if best is not None:
                out.append(Launch(best.task))
                self._next_ok[job.uid] = now + self.retry_after_speculate
                free -= 1
                if not free:
                    break
        return out


@register_policy
class LATE(_StageStats):
    """LATE (Zaharia et al. 2008): copy the slow task with the longest estimated time to end,
    on a node that is not slow; at most 10% of the slots run copies."""

    name = "late"

    def __init__(
        self,
        speculative_cap: float = 0.1,
        slow_task_threshold: float = 0.25,
        slow_node_threshold: float = 0.25,
        min_elapsed: float = 5.0,
        interval: float = 5.0,
    ):
        self.speculative_cap = speculative_cap
        self.slow_task_threshold = slow_task_threshold
        self.slow_node_threshold = slow_node_threshold
        self.min_elapsed = min_elapsed
        self.interval = interval

    def validate(self) -> None:
        check_fraction(self, "speculative_cap", self.speculative_cap)
        check_fraction(self, "slow_task_threshold", self.slow_task_threshold)
        check_fraction(self, "slow_node_threshold", self.slow_node_threshold)
        check_positive(self, "min_elapsed", self.min_elapsed, allow_zero=True)
        check_positive(self, "interval", self.interval)

    def reset(self) -> None:
        super().reset()
        # per node: work done and time spent by finished attempts (float sums in C doubles:
        # cheaper to add to one at a time than NumPy arrays, the same IEEE sums, and read by
        # _slow_nodes_now as arrays without a copy; lists of 33k floats took a scan of an
        # FB-2010 day ~5% of its CPU to convert)
        self._node_work: array[float] | None = None
        self._node_time: array[float] | None = None
        # _slow_nodes' answer, valid until the next finished attempt changes the sums
        self._slow: np.ndarray | None = None
        self._slow_stale = True

    def on_attempt_finished(self, view, attempt):
        if self._node_work is None or self._node_time is None:  # both None until here
            self._node_work = array("d", bytes(8 * view.n_nodes))
            self._node_time = array("d", bytes(8 * view.n_nodes))
        run = attempt.end_time - attempt.launch_time
        if run > 0:
            node = attempt.node
            self._node_work[node] += float(attempt.task.work * (1.0 - attempt.start_fraction))
            self._node_time[node] += float(run)
            self._slow_stale = True
        return super().on_attempt_finished(view, attempt)

    def _slow_nodes(self) -> np.ndarray | None:
        """Nodes whose speed (work done per second by finished attempts) is below the
        ``slow_node_threshold`` quantile of the nodes seen so far (None: fewer than four
        seen). Recomputed only after a finished attempt changed the per-node sums: a scan
        every few seconds on a big cluster would otherwise redo the same quantile."""
        if self._slow_stale:
            self._slow = self._slow_nodes_now()
            self._slow_stale = False
        return self._slow

    def _slow_nodes_now(self) -> np.ndarray | None:
        """:meth:`_slow_nodes` computed now: in C when built (``late_slow_nodes``, with the
        scan's selection of its cut: no copy or sort of every node's speed), else, and in
        the cases it leaves to NumPy, by :meth:`_slow_nodes_py`, its reference (the same
        array, ``tests/test_late_cut_selection.py``)."""
        if _late_slow_nodes is not None and LATE_SCAN_IN_C and self._node_time is not None:
            got = _late_slow_nodes(self._node_work, self._node_time, self.slow_node_threshold)
            if got is not NotImplemented:
                return got
        return self._slow_nodes_py()

    def _slow_nodes_py(self) -> np.ndarray | None:
        if self._node_work is None or self._node_time is None:
            return None
        node_time = np.frombuffer(self._node_time)  # views: read, never written
        seen = node_time > 0
        if seen.sum() < 4:
            return None
        work = np.frombuffer(self._node_work)
        speed = np.where(seen, work / np.where(seen, node_time, 1.0), np.nan)
        cut = np.nanquantile(speed, self.slow_node_threshold)
        return seen & (speed < cut)

    def on_tick(self, view):
        free = view.free_slot_count
        if not free:
            return []
        cap = max(1, int(self.speculative_cap * view.total_slots))
        budget = min(free, cap - view.copies_running)
        if budget <= 0:
            return []
        ranked = self._ranked(view)
        if not ranked:
            return []
        slow = self._slow_nodes()
        out: list[Launch] = []
        cands = iter(ranked)
        for node, count in view.free.items():
            if slow is not None and slow[node]:
                continue
            for _ in range(count):
                item = next(cands, None)
                while item is not None and item[2].node == node:
                    item = next(cands, None)
                if item is None:
                    return out
                out.append(Launch(item[2].task, node))
                budget -= 1
                if budget <= 0:
                    return out
        return out

    def _ranked(self, view) -> list[tuple[float, int, Any]]:
        """The slow tasks' live attempts, ``(estimated time left, uid, attempt)``, longest
        estimated time left first.

        A job's candidates are the attempts of its runnable stage that run alone on their
        task, for at least ``min_elapsed``, with a positive progress rate below the stage's
        ``slow_task_threshold`` percentile of rates (running and finished attempts). Jobs
        without a possible candidate are skipped before any progress is read.

        The scan runs in C (``sim_bridge._progress_core.late_scan``: a pass over the jobs
        alive, their progress read by the view's compiled loop, rates, cuts, estimates and
        the ranking in C doubles) when it is built, else in Python (:meth:`_ranked_py`, its
        reference: the same reads in the same order and the same IEEE operations;
        ``tests/test_late_scan.py`` also holds both equal to the obvious per-job scan at
        every scan of whole runs).
        """
        if (
            _late_scan is not None
            and LATE_SCAN_IN_C
            and type(self)._stage_durations is _StageStats._stage_durations
        ):
            args = _compiled_progress_args(view)
            if args is not None:
                return _late_scan(  # ranked in C, in _rank_key's order
                    view.active_jobs(),
                    view.now,
                    self.min_elapsed,
                    self._durs,
                    _EMPTY,
                    self.slow_task_threshold,
                    _quantile_linear,
                    *args,
                    rank_key=_rank_key,
                )
        return self._ranked_py(view)

    def _pass_one_py(self, view) -> tuple[list, list[int], list[int], list, list, list]:
        """:meth:`_ranked_py`'s first pass: the jobs that may yield a candidate, their live
        attempts of the runnable stage end to end (``batch``), per job their count, the
        index of its first possible candidate and its stage's durations, and the attempts'
        launch times and start fractions."""
        now = view.now
        min_el = self.min_elapsed
        sizes: list[int] = []
        firsts: list[int] = []  # per job: the index (in its live) of that first attempt
        stats: list[_Durations] = []
        batch: list = []
        for job in view.active_jobs():
            running = job.running
            if not running:
                continue
            stage = job.stage
            live = [a for a in running.values() if a.task.stage == stage]
            first = -1
            for i, a in enumerate(live):
                if now - a.launch_time >= min_el and a.task.n_live == 1:
                    first = i
                    break
            if first < 0:
                continue  # no candidate: the scan below would rank nothing
            durs = self._stage_durations(job)
            if len(live) + len(durs) < 2:
                continue  # nothing to compare a lone task with
            sizes.append(len(live))
            firsts.append(first)
            stats.append(durs)
            batch += live
        launch = [a.launch_time for a in batch]
        start = [a.start_fraction for a in batch]
        return batch, sizes, firsts, stats, launch, start

    def _ranked_py(self, view) -> list[tuple[float, int, Any]]:
        """:meth:`_ranked` in Python: the first pass (:meth:`_pass_one_py`), the progress
        of the jobs it kept in one :meth:`SimView.progress_many` call, and their rates,
        tests and estimates on arrays (the same IEEE operations, element by element, as the
        per-attempt formulas)."""
        now = view.now
        min_el = self.min_elapsed
        batch, sizes, firsts, stats, launch_l, start_l = self._pass_one_py(view)
        ranked: list[tuple[float, int, Any]] = []
        if not batch:
            return ranked
        prog = view.progress_many(batch)
        launch = np.array(launch_l, dtype=float)
        start = np.array(start_l, dtype=float)
        elapsed = now - launch
        started = now > launch
        with np.errstate(all="ignore"):  # the per-attempt formulas raise no warnings either
            rates = np.where(started, (prog - start) / np.where(started, elapsed, 1.0), 0.0)
            # a candidate: not (r <= 0 or elapsed < min_elapsed), and alone on its task
            ok = ~((rates <= 0.0) | (elapsed < min_el))
        rate_list = rates.tolist()
        q = self.slow_task_threshold
        cuts = np.full(len(sizes), np.nan)
        has = np.zeros(len(sizes), dtype=bool)
        k = 0
        for j, n in enumerate(sizes):
            i = firsts[j]
            # the job has a candidate (then its stage's cut is read, as the obvious scan
            # reads it: the durations' snapshot refreshes on reads)
            found = bool(ok[k + i])  # that attempt is alone on its task and old enough
            if not found:
                for i2 in range(k + i + 1, k + n):
                    if ok[i2] and batch[i2].task.n_live == 1:
                        found = True
                        break
            if found:
                has[j] = True
                # SlowTaskThreshold: percentile of the progress rates of the stage's running
                # and finished tasks (a finished task's rate is 1 / its run time)
                cuts[j] = _quantile_linear(rate_list[k : k + n], stats[j].inverse_rates(), q)
            k += n
        with np.errstate(invalid="ignore"):
            sel = ok & np.repeat(has, sizes) & ~(rates >= np.repeat(cuts, sizes))
        idx = np.flatnonzero(sel)
        if not idx.size:
            return ranked
        with np.errstate(all="ignore"):
            est = ((1.0 - prog[idx]) / rates[idx]).tolist()
        for i, e in zip(idx.tolist(), est, strict=True):
            a = batch[i]
            if a.task.n_live == 1:
                ranked.append((e, a.uid, a))
        ranked.sort(key=_rank_key)
        return ranked


def _rank_key(item: tuple[float, int, Any]) -> tuple[float, int]:
    """LATE's order: the longest estimated time left first, then the oldest attempt."""
    return (-item[0], item[1])


@register_policy
class SparkSpeculation(_StageStats):
    """Spark speculation (classic defaults quantile 0.75, multiplier 1.5): once a quantile of
    a stage's tasks finished, copy every task running longer than multiplier x their median."""

    name = "spark"

    def __init__(
        self,
        quantile: float = 0.75,
        multiplier: float = 1.5,
        min_runtime: float = 0.1,
        interval: float = 1.0,
    ):
        self.quantile = quantile
        self.multiplier = multiplier
        self.min_runtime = min_runtime
        self.interval = interval

    def validate(self) -> None:
        check_fraction(self, "quantile", self.quantile)
        check_positive(self, "multiplier", self.multiplier)
        check_positive(self, "min_runtime", self.min_runtime, allow_zero=True)
        check_positive(self, "interval", self.interval)

    def on_tick(self, view):
        free = view.free_slot_count
        if not free:
            return []
        now = view.now
        out = []
        for job in view.active_jobs():
            if not job.running:
                continue
            n_stage = len(job.stages[job.stage])
            durs = self._stage_durations(job)
            need = max(1, math.floor(self.quantile * n_stage))
            if len(durs) < need:
                continue
            threshold = max(self.multiplier * float(np.median(durs.sorted())), self.min_runtime)
            for a in list(job.running.values()):
                if (
                    a.task.stage == job.stage
                    and a.task.n_live == 1
                    and now - a.launch_time > threshold
                ):
                    out.append(Launch(a.task))
                    free -= 1
                    if not free:
                        return out
        return out


@register_policy
class Spark4Speculation(SparkSpeculation):
    """Spark 4 speculation defaults: quantile 0.9, multiplier 3."""

    name = "spark4"

    def __init__(
        self,
        quantile: float = 0.9,
        multiplier: float = 3.0,
        min_runtime: float = 0.1,
        interval: float = 1.0,
    ):
        super().__init__(quantile, multiplier, min_runtime, interval)


@register_policy
class BackupTasks(SpeculationPolicy):
    """MapReduce backup tasks (Dean & Ghemawat 2004): near the end of a stage, back up every
    task still in progress once."""

    name = "backup"

    def __init__(self, threshold: float = 0.9, interval: float = 5.0):
        self.threshold = threshold
        self.interval = interval

    def validate(self) -> None:
        check_fraction(self, "threshold", self.threshold)
        check_positive(self, "interval", self.interval)

    def on_tick(self, view):
        free = view.free_slot_count
        if not free:
            return []
        out = []
        for job in view.active_jobs():
            if job.pending or not job.running:
                continue
            n_stage = len(job.stages[job.stage])
            left = job.stage_left[job.stage]
            if n_stage - left < self.threshold * n_stage:
                continue
            for a in list(job.running.values()):
                if len(a.task.attempts) == 1:
                    out.append(Launch(a.task))
                    free -= 1
                    if not free:
                        return out
        return out


@register_policy
class Mantri(_StageStats):
    """Mantri (Ananthanarayanan et al. 2010): duplicate when P(t_rem > 2 t_new) > delta = 0.25;
    kill and restart an outlier whose remaining time exceeds a new copy's by a margin."""

    name = "mantri"

    def __init__(
        self,
        delta: float = 0.25,
        restart_margin: float = 30.0,
        max_copies: int = 3,
        min_samples: int = 3,
        interval: float = 5.0,
    ):
        self.delta = delta
        self.restart_margin = restart_margin
        self.max_copies = max_copies
        self.min_samples = min_samples
        self.interval = interval

    def validate(self) -> None:
        check_fraction(self, "delta", self.delta)
        check_positive(self, "restart_margin", self.restart_margin, allow_zero=True)
        check_positive(self, "max_copies", self.max_copies)
        check_positive(self, "min_samples", self.min_samples)
        check_positive(self, "interval", self.interval)

    def on_tick(self, view):
        """The copies and restarts of this tick.

        The tick runs in C (``sim_bridge._progress_core.mantri_scan``: the jobs' progress read
        by the view's compiled loop, the remaining times and counts in C doubles) when it is
        built, else in Python (:meth:`_on_tick_py`, its reference: the same reads in the same
        order and the same IEEE operations; ``tests/test_progress_core.py`` runs both at
        every tick of whole runs). In Python the tick was some 57% of a Mantri replay's CPU
        (py-spy, FB-2010's first half hour on 2,000 nodes, 2026-11-30).
        """
        if (
            _mantri_scan is not None
            and MANTRI_SCAN_IN_C
            and type(self)._stage_durations is _StageStats._stage_durations
        ):
            args = _compiled_progress_args(view)
            if args is not None:
                return _mantri_scan(
                    view.active_jobs(),
                    view.now,
                    view.free_slot_count,
                    self.delta,
                    self.restart_margin,
                    self.max_copies,
                    self.min_samples,
                    self._durs,
                    _EMPTY,
                    _count_below,
                    Launch,
                    Kill,
                    *args,
                )
        return self._on_tick_py(view)

    def _on_tick_py(self, view) -> list[Action]:
        """:meth:`on_tick` in Python."""
        now = view.now
        free = view.free_slot_count
        out: list[Action] = []
        for job in view.active_jobs():
            if not job.running:
                continue
            durs = self._stage_durations(job)
            if len(durs) < self.min_samples:
                continue
            mean_new = durs.mean()
            t_new = durs.sorted()
            t_view = durs.sorted_view()
            n = t_new.size
            live = [a for a in job.running.values() if a.task.stage == job.stage]
            prog = view.progress_many(live).tolist()
            seen: set[int] = set()
            for a, p in zip(live, prog, strict=True):
                task = a.task
                if task.uid in seen:
                    continue
                seen.add(task.uid)
                el = now - a.launch_time
                if el <= 0.0:
                    continue
                # remaining time of the task: the best of its live attempts
                c = task.n_live
                if c > 1:
                    t_rem = math.inf
                    for b in task.live.values():
                        pb = view.progress(b)
                        eb = now - b.launch_time
                        if pb > b.start_fraction and eb > 0:
                            t_rem = min(t_rem, (1.0 - pb) * eb / (pb - b.start_fraction))
                else:
                    gained = p - a.start_fraction
                    t_rem = (1.0 - p) * el / gained if gained > 0 else math.inf
                if math.isinf(t_rem):
                    t_rem = el + mean_new  # no progress yet: at least as long as it has run
                # P(t_rem > t_new (c+1)/c) from the stage's empirical t_new
                p_dup = _count_below(t_view, t_rem * c / (c + 1), t_new) / n
                if free and c < self.max_copies and p_dup > self.delta:
                    out.append(Launch(task))
                    free -= 1
                    continue
                if (
                    not free
                    and c == 1
                    and len(task.attempts) == 1
                    and t_rem > mean_new + self.restart_margin
                    and _count_below(t_view, t_rem, t_new) / n > 0.5
                ):
                    out.append(Kill(a))
                    out.append(Launch(task))
        return out
