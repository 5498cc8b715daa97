"""Deadline-aware speculation of seed 003: Shed and Shed+ (PoCD maximisation).

Both assume Pareto(``beta``, ``t_min``) attempt times with ``t_min = t_min_factor x work``
(run them with ``duration_dist=scipy.stats.pareto(b=beta, scale=t_min_factor)`` to match) and
use each job's absolute ``deadline``.

* Shed (the preliminary version): at each job arrival, one common number ``r`` of extra
  attempts for every task of the new job, all launched with the job (clones), the smallest
  ``r <= MAX`` whose PoCD (Theorem 1) reaches ``target``, within a fraction ``lam`` of the
  cluster's slots; no re-optimisation later.
* Shed+ (Algorithm 1): once a new job has progressed ``xi`` or ``theta`` seconds after the
  last check, (2) jobs past their deadline stop being speculated (their extra attempts are
  killed; the engine must still finish them), (5) every job estimates each straggler's Pareto
  shape from its remaining time (eq. 14), (7-27) the greedy allocation of extra attempts
  (``sim_bridge.theory.shed_plus_allocation``, MAX per straggler, budget ``lam m - sum N_j -
  |J|``), then for each straggler all but its fastest attempt are killed and ``r`` new
  attempts start from the fastest one's byte offset (``Launch(start_fraction=progress)``,
  eq. 16 with no launch overhead). A straggler is a task whose PoCD with no extra attempt
  (eq. 9) is below ``target``.
"""

from __future__ import annotations

import math

import numpy as np

from sim_bridge._task_list import task_works
from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import (
    Kill,
    Launch,
    SpeculationPolicy,
    check_fraction,
    check_positive,
)

__all__ = ["Shed", "ShedPlus"]

_MAX_SHAPE = 50.0  # shape used when the remaining time is at the Pareto minimum (no tail)


def _check_max(owner, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"{owner.name}: parameter max_extra must be an integer >= 0, got {value!r}"
        )


class _DeadlineBase(SpeculationPolicy):
    def __init__(self, beta, t_min_factor, lam, max_extra, target):
        self.beta = beta
        self.t_min_factor = t_min_factor
        self.lam = lam
        self.max_extra = max_extra
        self.target = target

    def validate(self) -> None:
        check_positive(self, "beta", self.beta)
        check_positive(self, "t_min_factor", self.t_min_factor)
        check_fraction(self, "lam", self.lam)
        _check_max(self, self.max_extra)
        check_fraction(self, "target", self.target)

    def _t_min(self, job) -> float:
        return self.t_min_factor * sum(task_works(job)) / job.n_tasks


@register_policy
class Shed(_DeadlineBase):
    """Shed (seed 003): at arrival, one common clone count r per job for its PoCD, within lam m."""

    name = "shed"

    def __init__(
        self,
        beta: float = 1.5,
        t_min_factor: float = 1.0,
        lam: float = 1.0,
        max_extra: int = 5,
        target: float = 0.99,
    ):
        super().__init__(beta, t_min_factor, lam, max_extra, target)

    def choose_r(self, view, job) -> int:
        """Smallest ``r`` with Theorem 1 PoCD >= target that fits, else the largest that fits."""
        from sim_bridge.theory import pocd_new_job

        n = len(job.pending)
        cap = int(math.floor(self.lam * view.total_slots + 1e-9)) - view.running_count
        room = min(cap, view.free_slot_count)
        fit = room // n - 1 if n else -1
        if fit < 0:
            return 0
        fit = min(fit, self.max_extra)
        left = job.deadline - view.now
        if left <= 0:
            return 0
        t_min = self._t_min(job)
        for r in range(fit + 1):
            if pocd_new_job(n, left, t_min, self.beta, r) >= self.target:
                return r
        return fit

    def on_job_arrival(self, view, job):
        r = self.choose_r(view, job)
        if r == 0:
            return []
        out: list[Launch] = []
        for task in job.pending.values():
            out.extend(Launch(task) for _ in range(r + 1))
        return out


@register_policy
class ShedPlus(_DeadlineBase):
    """Shed+ (seed 003 Alg. 1): periodic greedy PoCD allocation to stragglers, progress kept."""

    name = "shed+"

    def __init__(
        self,
        beta: float = 1.5,
        t_min_factor: float = 1.0,
        lam: float = 1.0,
        max_extra: int = 5,
        target: float = 0.9,
        xi: float = 0.1,
        theta: float = 60.0,
        interval: float = 5.0,
        transfer: bool = True,
        rule: str = "paper",
    ):
        super().__init__(beta, t_min_factor, lam, max_extra, target)
        self.xi = xi
        self.theta = theta
        self.interval = interval
        self.transfer = transfer
        self.rule = rule

    def validate(self) -> None:
        super().validate()
        check_fraction(self, "xi", self.xi)
        check_positive(self, "theta", self.theta)
        check_positive(self, "interval", self.interval)
        if not isinstance(self.transfer, bool):
            raise ValueError(
                f"{self.name}: parameter transfer must be a bool, got {self.transfer!r}"
            )
        if self.rule not in ("paper", "log_gain"):
            raise ValueError(
                f"{self.name}: parameter rule must be 'paper' or 'log_gain', got {self.rule!r}"
            )

    def reset(self) -> None:
        self._last = -math.inf
        self._fresh: set[int] = set()  # jobs that have not reached xi progress yet
        self.decisions = 0  # number of Algorithm 1 runs (read after a simulation)
        self._t_mins: dict[int, float] = {}  # per job alive: its t_min, once computed

    def _t_min(self, job) -> float:
        """:meth:`_DeadlineBase._t_min`, computed once per job (its tasks' works do not
        change) and kept while it is alive: every run of Algorithm 1 reads it for every job
        with running tasks, and it sums the job's tasks."""
        t = self._t_mins.get(job.uid)
        if t is None:
            t = self._t_mins[job.uid] = super()._t_min(job)
        return t

    def on_job_arrival(self, view, job):
        self._fresh.add(job.uid)
        return []

    def on_attempt_finished(self, view, attempt):
        job = attempt.task.job
        if job.done:
            self._fresh.discard(job.uid)
            self._t_mins.pop(job.uid, None)
        return []

    @staticmethod
    def _task_states(view, tasks) -> list[tuple]:
        """Per task of ``tasks``, in order: (its live attempts, the fastest, its progress, the
        task's estimated remaining time). The live attempts' progress is read in one
        ``progress_many`` for all the tasks (the same reads in the same order as one call a
        task, which was a quarter of Shed+'s CPU on FB-2010's first quarter hour on 1,000 x
        10 until 2026-11-30 (m)); the fastest is ``np.argmax``'s (the first of the largest,
        NaN first)."""
        lives = [list(task.live.values()) for task in tasks]
        prog = view.progress_many([a for live in lives for a in live]).tolist()
        now = view.now
        out = []
        i = 0
        for live in lives:
            n = len(live)
            k = int(np.argmax(prog[i : i + n])) if n != 1 else 0
            best, phi = live[k], prog[i + k]
            i += n
            el = now - best.launch_time
            gained = phi - best.start_fraction
            t_rem = el * (1.0 - phi) / gained if gained > 0 and el > 0 else math.inf
            out.append((live, best, phi, t_rem))
        return out

    def on_tick(self, view):
        due = view.now - self._last >= self.theta
        for job in view.active_jobs():
            if job.uid in self._fresh:
                originals = [a for a in job.running.values() if a.index == 0]
                done = job.n_done + sum(view.progress_many(originals).tolist())
                if done / job.n_tasks >= self.xi:  # line 1: a new job progressed xi
                    self._fresh.discard(job.uid)
                    due = True
        return self.optimize(view) if due else []

    def optimize(self, view) -> list:
        """One run of Algorithm 1: kills and launches for every active job."""
        self._last = view.now
        self.decisions += 1
        return self._plan(view)

    def _plan(self, view) -> list:
        from sim_bridge.theory import ShedJob, shed_plus_allocation, task_pocd

        now = view.now
        kills: list = []
        states = []  # (job, [(task, best, phi)], ShedJob)
        for job in view.active_jobs():
            if not job.running:
                continue
            tasks = {a.task.uid: a.task for a in job.running.values()}.values()
            per_task = []
            for task, (live, best, phi, t_rem) in zip(
                tasks, self._task_states(view, tasks), strict=True
            ):
                # the AM keeps only the fastest attempt of every task before re-optimising
                kills.extend(Kill(a) for a in live if a is not best)
                per_task.append((task, best, phi, t_rem))
            if job.deadline <= now:  # line 2: missed its deadline, no more speculation
                continue
            t_min = self._t_min(job)
            phis, shapes, strag = [], [], []
            for _task, _best, phi, t_rem in per_task:
                x_m = (1.0 - phi) * t_min
                if not math.isfinite(t_rem):
                    shape = float(self.beta)
                elif t_rem <= x_m * (1.0 + 1e-9):
                    shape = _MAX_SHAPE
                else:
                    shape = min(_MAX_SHAPE, t_rem / (t_rem - x_m))  # eq. 14
                phis.append(min(phi, 1.0))
                shapes.append(shape)
            d_rel = job.deadline - job.submit_time
            el = now - job.submit_time
            p0 = task_pocd(phis, shapes, np.zeros(len(phis), int), d_rel, el, t_min)
            strag = list(p0 < self.target)
            if any(strag):
                states.append((job, per_task, ShedJob(d_rel, el, t_min, phis, shapes, strag)))
        out: list = list(kills)
        room = view.free_slot_count + len(kills) - view.waiting_count()
        if not states or room <= 0:
            return out
        alloc = shed_plus_allocation(
            [s[2] for s in states],
            capacity=self.lam * view.total_slots,
            max_extra=self.max_extra,
            rule=self.rule,
        )
        for (_job, per_task, _sj), r in zip(states, alloc, strict=True):
            for (task, _best, phi, _t), k in zip(per_task, r, strict=True):
                if k <= 0 or phi >= 0.999:
                    continue
                k = min(int(k), room)
                sf = float(phi) if self.transfer else 0.0
                out.extend(Launch(task, start_fraction=sf) for _ in range(k))
                room -= k
                if room <= 0:
                    return out
        return out
