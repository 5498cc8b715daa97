"""Xu & Lau's speculation policies (seeds 000 and 001): SCA, SDA and ESE.

The papers decide once per time slot; on the engine the slot decisions that only place
waiting tasks (cheap: one pass over the jobs with waiting tasks) run at every event that can
free or need a slot (job arrival, attempt finish, scan), so machines never idle between
slots; the decisions that scan every running task (straggler detection of SDA, the backup
set ``D(l)`` of ESE) run on the periodic scan every ``interval`` (the slot length).

With ``slotted=True`` every decision waits for the next slot start (the scan), as in the
papers: slots freed during a slot stay idle until then, and the backup set ``D(l)`` gets them
before the waiting tasks do. Pair it with a placement that leaves slots idle (the experiments
use one); with FIFO placement FIFO fills slots between slot starts.

Task-time model the policies assume (the papers'): a task of base work ``w`` lasts a
Pareto(``alpha``) time with mean ``E[x] = unit_mean * w``, i.e. scale
``E[x] (alpha - 1) / alpha``. Run them with ``duration_dist=scipy.stats.pareto(b=alpha,
scale=unit_mean * (alpha - 1) / alpha)`` to match the model exactly; on the node model they
are the same heuristics with a misspecified model. Remaining time of a running attempt is
estimated from its reported progress, ``elapsed * (1 - progress) / (progress - start)``.
"""

from __future__ import annotations

import functools
import math

from sim_bridge._task_list import task_works
from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import (
    Launch,
    SpeculationPolicy,
    Wake,
    check_fraction,
    check_positive,
)

__all__ = ["ESE", "SCA", "SDA"]


def _check_int(owner, name: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(
            f"{owner.name}: parameter {name} must be an integer >= {minimum}, got {value!r}"
        )


@functools.lru_cache(maxsize=64)
def _sda_sigma_star(alpha: float) -> float:
    from sim_bridge.theory import sda_sigma_star

    return float(sda_sigma_star(alpha))


@functools.lru_cache(maxsize=64)
def _ese_sigma_star(alpha: float) -> float:
    from scipy import stats

    from sim_bridge.theory import ese_sigma_star

    # eqs. 30-33 of seed 000 for Pareto(alpha) (sigma* does not depend on the scale)
    return float(ese_sigma_star(stats.pareto(b=alpha, scale=(alpha - 1.0) / alpha)))


class _SlotScheduler(SpeculationPolicy):
    """Shared machinery: per-job task-time model, SRPT ordering, placement of waiting tasks."""

    def __init__(
        self,
        alpha: float = 2.0,
        unit_mean: float = 1.0,
        interval: float = 1.0,
        slotted: bool = False,
    ):
        self.alpha = alpha
        self.unit_mean = unit_mean
        self.interval: float = interval
        self.slotted = slotted

    def validate(self) -> None:
        check_positive(self, "alpha", self.alpha)
        if not self.alpha > 1.0:
            raise ValueError(f"{self.name}: parameter alpha must be > 1, got {self.alpha!r}")
        check_positive(self, "unit_mean", self.unit_mean)
        check_positive(self, "interval", self.interval)
        if not isinstance(self.slotted, bool):
            raise ValueError(f"{self.name}: parameter slotted must be a bool, got {self.slotted!r}")

    def reset(self) -> None:
        self._mean: dict[int, float] = {}
        self._last_tick: float | None = None

    # ------------------------------------------------------------------ model
    def _mean_x(self, job) -> float:
        """``E[x]`` of the job's tasks (mean base work times ``unit_mean``)."""
        m = self._mean.get(job.uid)
        if m is None:
            m = self.unit_mean * sum(task_works(job)) / job.n_tasks
            self._mean[job.uid] = m
        return m

    def _scale(self, job) -> float:
        return self._mean_x(job) * (self.alpha - 1.0) / self.alpha

    @staticmethod
    def _started(job) -> bool:
        return job.stage > 0 or len(job.pending) < len(job.stages[0])

    def _remaining_work(self, job) -> float:
        return (job.n_tasks - job.n_done) * self._mean_x(job)

    @staticmethod
    def _t_rem(now: float, attempt, prog: float) -> float:
        """Remaining time estimated from progress ``prog`` at ``now`` (inf when no progress
        is reported yet)."""
        el = now - attempt.launch_time
        gained = prog - attempt.start_fraction
        if el <= 0.0 or gained <= 0.0:
            return math.inf
        return el * (1.0 - prog) / gained

    # ------------------------------------------------------------------ levels
    def _place_started(self, view, free: int, out: list) -> int:
        """Waiting tasks of started jobs, smallest remaining workload first, one copy each.

        The passes read a job's waiting tasks only as far as they launch (its queue makes a
        big job's tasks when they are read; the actions apply after the pass, so nothing
        changes the queue while it is read), and :meth:`_mean_x` reads the tasks' works
        without making them (``task_works``). Until 2026-11-30 (m) every pass copied the
        whole queue first, 81% of ESE's CPU on FB-2010's first quarter hour on 1,000 x 10
        (py-spy), and the first mean made every task of a job at its arrival. The same runs
        bit for bit (``tests/test_waiting_tasks.py``)."""
        if free <= 0:
            return free
        jobs = [j for j in view.waiting_jobs() if self._started(j)]
        jobs.sort(key=lambda j: (self._remaining_work(j), j.uid))
        for job in jobs:
            for task in job.pending.values():
                out.append(Launch(task))
                free -= 1
                if free == 0:
                    return 0
        return free

    def _unscheduled(self, view) -> list:
        """Jobs with no task started yet, increasing workload ``m E[x]`` (the papers' chi)."""
        jobs = [j for j in view.waiting_jobs() if not self._started(j)]
        jobs.sort(key=lambda j: (j.n_tasks * self._mean_x(j), j.uid))
        return jobs

    @staticmethod
    def _place_one_each(jobs, free: int, out: list) -> int:
        if free == 0:
            return 0
        for job in jobs:
            for task in job.pending.values():
                out.append(Launch(task))
                free -= 1
                if free == 0:  # (tested after a launch: the next task is not read, so made)
                    return 0
        return free

    # ------------------------------------------------------------------ hooks
    def _schedule(self, view, scan: bool) -> list:  # pragma: no cover - abstract
        raise NotImplementedError

    def _between_slots(self, view) -> list:
        """Slotted mode between two slot starts: nothing, unless the cluster would otherwise
        look stuck (nothing running, tasks waiting), then a Wake at the next slot start."""
        if view.running_count == 0 and view.waiting_count():
            last = self._last_tick if self._last_tick is not None else view.now
            nxt = last + self.interval
            while nxt < view.now:
                nxt += self.interval
            return [Wake(nxt)]
        return []

    def on_job_arrival(self, view, job):
        if self.slotted:
            return self._between_slots(view)
        return self._schedule(view, scan=False)

    def on_attempt_finished(self, view, attempt):
        if attempt.task.job.done:
            self._mean.pop(attempt.task.job.uid, None)
        if self.slotted:
            return self._between_slots(view)
        return self._schedule(view, scan=False)

    def on_tick(self, view):
        self._last_tick = view.now
        return self._schedule(view, scan=True)

    def on_wake(self, view, tag):
        return self._schedule(view, scan=True)


@register_policy
class SCA(_SlotScheduler):
    """Smart Cloning Algorithm (seed 000 Alg. 1): SRPT, then clone new jobs by P2 if they fit."""

    name = "sca"

    def __init__(
        self,
        gamma: float = 0.01,
        r_max: int = 4,
        alpha: float = 2.0,
        unit_mean: float = 1.0,
        interval: float = 1.0,
        slotted: bool = False,
    ):
        super().__init__(alpha, unit_mean, interval, slotted)
        self.gamma = gamma
        self.r_max = r_max

    def validate(self) -> None:
        super().validate()
        check_positive(self, "gamma", self.gamma, allow_zero=True)
        _check_int(self, "r_max", self.r_max, 1)

    def _schedule(self, view, scan):
        from sim_bridge.theory import sca_clone_counts

        free = view.free_slot_count
        out: list = []
        free = self._place_started(view, free, out)  # line 1: remaining tasks, fewest first
        if free == 0:
            return out
        chi = self._unscheduled(view)
        if not chi:
            return out
        ms = [len(j.pending) for j in chi]
        if sum(ms) < free:  # line 6: every new job fits, solve P2 for the clone counts
            counts = sca_clone_counts(
                ms,
                [self._scale(j) for j in chi],
                self.alpha,
                free,
                self.r_max,
                self.gamma,
                method="exact",
            )
            for job, c in zip(chi, counts, strict=True):
                for task in job.pending.values():
                    out.extend(Launch(task) for _ in range(int(c)))
            return out
        self._place_one_each(chi, free, out)  # lines 9-15: one copy each, smallest first
        return out


@register_policy
class SDA(_SlotScheduler):
    """Straggler Detection Algorithm (seed 000 Sec. V): copy if t_rem > sigma E[x] at progress s."""

    name = "sda"

    def __init__(
        self,
        sigma: float | None = None,
        s: float = 0.1,
        copies: int | None = None,
        alpha: float = 2.0,
        unit_mean: float = 1.0,
        interval: float = 1.0,
        slotted: bool = False,
    ):
        super().__init__(alpha, unit_mean, interval, slotted)
        self.sigma = sigma
        self.s = s
        self.copies = copies

    def validate(self) -> None:
        super().validate()
        if self.sigma is not None:
            check_positive(self, "sigma", self.sigma)
        check_fraction(self, "s", self.s)
        if not 0.0 < self.s < 1.0:
            raise ValueError(f"{self.name}: parameter s must be in (0, 1), got {self.s!r}")
        if self.copies is not None:
            _check_int(self, "copies", self.copies, 1)
        elif self.sigma is not None and self.sigma < (self.alpha - 1.0) / self.alpha:
            raise ValueError(
                f"{self.name}: parameter sigma must be >= {(self.alpha - 1.0) / self.alpha:g} to "
                f"derive copies by eq. 27 (or give copies), got {self.sigma!r}"
            )

    def reset(self) -> None:
        from sim_bridge.theory import sda_optimal_copies

        super().reset()
        # eq. 28 (sigma*) and Theorem 3 / eq. 27 (c*, two copies for Pareto)
        alpha = float(self.alpha)
        self._sigma = float(self.sigma) if self.sigma is not None else _sda_sigma_star(alpha)
        self._copies = (
            int(self.copies)
            if self.copies is not None
            else sda_optimal_copies(self.alpha, self._sigma)
        )
        # per job alive: the uids of its originals already tested (one test per task), let go
        # with the job (one set of every uid ever tested grew with the tasks ever run)
        self._checked: dict[int, set[int]] = {}

    def on_attempt_finished(self, view, attempt):
        job = attempt.task.job
        if job.done:
            self._checked.pop(job.uid, None)
        return super().on_attempt_finished(view, attempt)

    def _schedule(self, view, scan):
        free = view.free_slot_count
        out: list = []
        if scan and free > 0 and self._copies > 1:
            now = view.now
            for job in view.active_jobs():
                if not job.running:
                    continue
                ex = self._mean_x(job)
                checked = self._checked.get(job.uid)
                if checked is None:
                    checked = self._checked[job.uid] = set()
                cands = [
                    a
                    for a in job.running.values()
                    if a.index == 0 and a.uid not in checked and a.task.n_live == 1
                ]
                # their progress in one read (the view's compiled loop) when the pass cannot
                # run out of slots within the job, so that it reads each of them, as one
                # view.progress each would; else one by one, up to where the slots run out
                # (a read books what later reads go on from: no read the pass would not make)
                progs = (
                    view.progress_many(cands).tolist()
                    if free > (self._copies - 1) * len(cands)
                    else None
                )
                for i, a in enumerate(cands):
                    prog = view.progress(a) if progs is None else progs[i]
                    if prog < self.s or now <= a.launch_time:
                        continue
                    checked.add(a.uid)
                    t_rem = (now - a.launch_time) * (1.0 - prog) / prog
                    if t_rem > self._sigma * ex:
                        k = min(self._copies - 1, free)
                        out.extend(Launch(a.task) for _ in range(k))
                        free -= k
                        if free == 0:
                            return out
        free = self._place_started(view, free, out)
        if free:
            self._place_one_each(self._unscheduled(view), free, out)
        return out


@register_policy
class ESE(_SlotScheduler):
    """Enhanced Speculative Execution (seed 000 Alg. 2): backups, SRPT, small-job clones."""

    name = "ese"

    def __init__(
        self,
        sigma: float | None = None,
        eta: float = 0.1,
        xi: float = 1.0,
        gamma: float = 0.01,
        r_max: int = 4,
        alpha: float = 2.0,
        unit_mean: float = 1.0,
        interval: float = 1.0,
        slotted: bool = False,
    ):
        super().__init__(alpha, unit_mean, interval, slotted)
        self.sigma = sigma
        self.eta = eta
        self.xi = xi
        self.gamma = gamma
        self.r_max = r_max

    def validate(self) -> None:
        super().validate()
        if self.sigma is not None:
            check_positive(self, "sigma", self.sigma)
        check_positive(self, "eta", self.eta, allow_zero=True)
        check_positive(self, "xi", self.xi, allow_zero=True)
        check_positive(self, "gamma", self.gamma, allow_zero=True)
        _check_int(self, "r_max", self.r_max, 1)

    def reset(self) -> None:
        super().reset()
        # sigma*: eqs. 30-33 of seed 000 for Pareto(alpha), ~1.7 for alpha = 2
        self._sigma = (
            float(self.sigma) if self.sigma is not None else _ese_sigma_star(float(self.alpha))
        )

    def backup_candidates(self, view) -> list:
        """``D(l)``: running single-copy tasks with ``t_rem > sigma E[x]``, longest first."""
        now = view.now
        cands = []
        for job in view.active_jobs():
            if not job.running:
                continue
            thr = self._sigma * self._mean_x(job)
            live = [a for a in job.running.values() if len(a.task.attempts) == 1]
            # their progress in one read of the job's (the view's compiled loop: the values
            # and the reads' bookings of one view.progress each, in the same order)
            for a, prog in zip(live, view.progress_many(live).tolist(), strict=True):
                t_rem = self._t_rem(now, a, prog)
                if t_rem > thr and math.isfinite(t_rem):
                    cands.append((-t_rem, a.uid, a))
        cands.sort(key=lambda c: (c[0], c[1]))
        return [c[2] for c in cands]

    def _schedule(self, view, scan):
        from sim_bridge.theory import ese_is_small_job, ese_small_job_clones

        free = view.free_slot_count
        out: list = []
        if free == 0:
            return out
        if scan:  # lines 2-8: a duplicate for each backup candidate, longest remaining first
            for a in self.backup_candidates(view):
                out.append(Launch(a.task))
                free -= 1
                if free == 0:
                    return out
        free = self._place_started(view, free, out)  # lines 9-15
        if free == 0:
            return out
        chi = self._unscheduled(view)
        n_chi = len(chi)
        for job in chi:  # lines 16-28
            m = len(job.pending)
            ex = self._mean_x(job)
            c = 1
            if m * 2 <= free and ese_is_small_job(m, ex, free, n_chi, self.eta, self.xi):
                c = ese_small_job_clones(
                    m, self._scale(job), self.alpha, self.gamma, self.r_max, free
                )
            for task in job.pending.values():
                k = min(int(c), free)
                out.extend(Launch(task) for _ in range(k))
                free -= k
                if free == 0:  # (tested after a launch: the next task is not read, so made)
                    return out
        return out
