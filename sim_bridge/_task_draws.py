"""Every original attempt's draws: its uniform draw, its skewed base work, its noise multiplier.

The originals see the same draws whatever the policy (common random numbers): each comes from
a stream of the run's seed, consumed task by task in arrival order. :class:`TaskDraws` hands a
job its draws when it arrives (:meth:`TaskDraws.job`), drawn then from the streams, so a run
holds the draws of the jobs alive only, not of the whole workload (16.6 million tasks in an
FB-2010 day: three float arrays of 133 MB each, and about as much again while they were
made). The compiled loop reads the whole workload's arrays at once (:meth:`TaskDraws.whole`,
fresh streams of the same seeds). Both give the same floats: a stream drawn in pieces gives
the values it gives drawn at once, and the rest is element by element
(``tests/test_task_draws.py``).

Examples
--------
>>> import numpy as np
>>> from sim_bridge import JobSpec, Workload
>>> w = Workload("SYN", [JobSpec("a", 0.0, [10.0, 20.0], [5.0]), JobSpec("b", 1.0, [7.0])])
>>> draws = TaskDraws([(j, w) for j in w.jobs], seed=3)
>>> u, work, m = draws.whole()
>>> parts = [draws.job(0), draws.job(1)]
>>> [[x for p in parts for x in p[k]] == a.tolist() for k, a in enumerate((u, work, m))]
[True, True, True]
"""

from __future__ import annotations

from array import array
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from sim_bridge._workloads import JobSpec, Workload
from sim_bridge.world._noise import residual_noise
from sim_bridge.world._skew import SKEW_SIGMA, input_skew

__all__ = ["TaskDraws"]


class TaskDraws:
    """The draws of every original task of ``specs`` (``(JobSpec, Workload)`` pairs in arrival
    order) for a run of ``seed``.

    Parameters
    ----------
    specs : list of (JobSpec, Workload)
    seed : int
    duration_dist : scipy.stats frozen distribution, optional
        Durations drawn from it instead of the uniform draws (drawn for the whole workload up
        front: its sampler may not give the same values drawn in pieces).
    noise : bool
        Residual noise multipliers (else 1).
    skew : (float, float)
        Input skew sigmas of the two stages (lognormal factors of mean 1).
    """

    def __init__(
        self,
        specs: list[tuple[JobSpec, Workload]],
        seed: int,
        *,
        duration_dist: Any = None,
        noise: bool = True,
        skew: tuple[float, float] = SKEW_SIGMA,
    ):
        self._specs = specs
        self.seed = int(seed)
        self.duration_dist = duration_dist
        self.noise = bool(noise)
        self.skew = tuple(skew)
        jobs = list(map(itemgetter(0), specs))
        #: tasks of each job's first and second stage
        self.n_map = np.fromiter(map(attrgetter("n_map"), jobs), np.int64, len(jobs))
        self.n_red = np.fromiter(map(attrgetter("n_reduce"), jobs), np.int64, len(jobs))
        sizes = self.n_map + self.n_red
        #: first task (draw) index of each job
        self.task_start = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self._next = 0  # the job whose draws come next (jobs arrive in order)
        self._whole: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if duration_dist is not None:
            self._whole = self.whole()  # checks the distribution's draws at once
        else:
            self._u_rng = self._u_stream()
            self._skew_rng = self._skew_stream()

    def _u_stream(self) -> np.random.Generator:
        return np.random.default_rng([self.seed, 8])

    def _skew_stream(self) -> np.random.Generator:
        return np.random.default_rng([self.seed, 10])

    def _skewed(self, rng: np.random.Generator, base: np.ndarray, stage: np.ndarray):
        """``base`` work times the input skew of its tasks' ``stage`` (drawn from ``rng``)."""
        if self.duration_dist is None and any(self.skew):
            return base * input_skew(rng, stage, self.skew)
        return base

    def job(self, i: int, u_read: bool = True) -> tuple[list[float], list[float], array]:
        """Job ``i``'s draws, task by task: ``(u, work, noise)``, ``u`` and ``work`` as lists
        of Python floats, ``noise`` as an ``array("d")`` (8 bytes a number, where a list holds
        a 24-byte float object and an 8-byte pointer: a job keeps its noise until its
        originals launch, so a big job waiting holds it for hours). Jobs are asked for in
        order (each once: the streams move on). With ``u_read`` False nobody reads ``u`` (its
        noise is ``noise``): it is one shared 0.0 a task, not a float of its own (the draws
        are made all the same, so the streams and the noise do not change)."""
        if self._whole is not None:
            off = int(self.task_start[i])
            end = off + int(self.n_map[i] + self.n_red[i])
            u_all, work_all, m_all = self._whole
            us = u_all[off:end].tolist() if u_read else [0.0] * (end - off)
            return us, work_all[off:end].tolist(), array("d", m_all[off:end].tobytes())
        if i != self._next:
            raise RuntimeError(f"task draws: job {i} asked for, job {self._next} comes next")
        self._next = i + 1
        spec, w = self._specs[i]
        n_m, n_r = int(self.n_map[i]), int(self.n_red[i])
        n = n_m + n_r
        u = self._u_rng.random(n)
        base = np.concatenate(
            [np.asarray(spec.map_work, dtype=float), np.asarray(spec.reduce_work, dtype=float)]
        )
        stage = np.repeat(np.array([0, 1], np.int64), [n_m, n_r])
        work = self._skewed(self._skew_rng, base, stage)
        if self.noise:
            m = residual_noise(u, np.full(n, w.tail_alpha, dtype=float))
        else:
            m = np.ones(n)
        return (u.tolist() if u_read else [0.0] * n), work.tolist(), array("d", m.tobytes())

    def whole(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every task's draws at once ``(u, work, noise)``, from fresh streams of the same
        seeds (the compiled loop's arrays; the same values :meth:`job` gives)."""
        if self._whole is not None:
            return self._whole
        specs = self._specs
        sizes = self.n_map + self.n_red
        total = int(sizes.sum())
        rng = self._u_stream()
        dist = self.duration_dist
        if dist is not None:
            u = np.asarray(dist.rvs(size=total, random_state=rng), float).reshape(-1)
            if u.size != total or not np.all(np.isfinite(u)) or np.any(u < 0):
                raise ValueError("duration_dist drew a negative or non-finite duration")
        else:
            u = rng.random(total)
        stages = chain.from_iterable(
            map(attrgetter("map_work", "reduce_work"), map(itemgetter(0), specs))
        )
        base = np.fromiter(chain.from_iterable(map(np.ndarray.tolist, stages)), float, total)
        stage = np.zeros(total, np.int64)
        if total:
            mark = np.zeros(total + 1, np.int64)
            np.add.at(mark, self.task_start + self.n_map, 1)
            np.add.at(mark, self.task_start + sizes, -1)
            stage = np.cumsum(mark)[:total]
        work = self._skewed(self._skew_stream(), base, stage)
        if dist is None and self.noise:
            alpha = np.array([w.tail_alpha for _spec, w in specs], float)
            m = residual_noise(u, np.repeat(alpha, sizes))
        else:
            m = np.ones(total)
        return u, work, m
