"""Proactive cloning and speculation-aware scheduling: Dolly and Hopper (seed 003 baselines).

* Dolly (Ananthanarayanan et al. 2013): clone every task of a small job at launch, ``c``
  copies from the straggler probability (``c = r + 1 = log(1 - (1 - eps)^(1/N)) / log p``,
  seed 003 Sec. VI.A), within a budget of extra slots (5% of the cluster by default). Dolly's
  delay assignment (downstream tasks wait a short window for an exclusive upstream clone) needs
  an intermediate-data model the engine does not have; here the delay is the window after a
  job's arrival during which clones that did not fit are added as slots free up.
* Hopper (Ren et al. 2015): speculation-aware job scheduling. Jobs are served smallest
  *virtual size* first, ``V = remaining tasks x 2 / beta`` (``beta`` the Pareto tail of task
  times, ``2 / beta`` the slots per task Hopper reserves for speculation when ``beta < 2``);
  each job gets up to ``ceil(V)`` slots, used for its waiting tasks first and then for one
  speculative copy of its slowest running tasks; leftover slots go to any waiting task.
"""

from __future__ import annotations

import math
from itertools import islice

from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import Launch, SpeculationPolicy, check_fraction, check_positive

__all__ = ["Dolly", "Hopper"]


@register_policy
class Dolly(SpeculationPolicy):
    """Dolly: clone small jobs' tasks at launch, c from the straggler probability, in a budget."""

    name = "dolly"

    def __init__(
        self,
        p: float = 0.1,
        epsilon: float = 0.05,
        max_tasks: int = 10,
        budget: float = 0.05,
        delay: float = 0.0,
        p_is: str = "task",
        max_clones: int = 6,
    ):
        self.p = p
        self.epsilon = epsilon
        self.max_tasks = max_tasks
        self.budget = budget
        self.delay = delay
        self.p_is = p_is
        self.max_clones = max_clones

    def validate(self) -> None:
        check_fraction(self, "p", self.p)
        if not 0.0 < self.p < 1.0:
            raise ValueError(f"{self.name}: parameter p must be in (0, 1), got {self.p!r}")
        check_fraction(self, "epsilon", self.epsilon)
        if not 0.0 < self.epsilon < 1.0:
            raise ValueError(
                f"{self.name}: parameter epsilon must be in (0, 1), got {self.epsilon!r}"
            )
        for name in ("max_tasks", "max_clones"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(
                    f"{self.name}: parameter {name} must be an integer >= 1, got {v!r}"
                )
        check_fraction(self, "budget", self.budget)
        check_positive(self, "delay", self.delay, allow_zero=True)
        if self.p_is not in ("task", "job"):
            raise ValueError(
                f"{self.name}: parameter p_is must be 'task' or 'job', got {self.p_is!r}"
            )

    def reset(self) -> None:
        self._owed: dict[int, tuple[float, int]] = {}  # job uid -> (until, clones per task)
        self._cloned: set[int] = set()

    def clones_for(self, n_tasks: int) -> int:
        """Copies per task for a job of ``n_tasks`` (1 = no clone), capped at ``max_clones``."""
        from sim_bridge.theory import dolly_clone_count

        if n_tasks > self.max_tasks:
            return 1
        c = dolly_clone_count(self.p, n_tasks, self.epsilon, p_is=self.p_is)
        return max(1, min(int(c), self.max_clones))

    def _budget_left(self, view) -> int:
        cap = int(math.floor(self.budget * view.total_slots + 1e-9))
        return cap - view.copies_running

    def on_job_arrival(self, view, job):
        c = self.clones_for(job.n_tasks)
        if c <= 1:
            return []
        self._cloned.add(job.uid)
        free = view.free_slot_count
        budget = self._budget_left(view)
        out = []
        short = False
        for task in job.pending.values():
            if free == 0:
                short = True
                break
            out.append(Launch(task))  # the original
            free -= 1
            extra = min(c - 1, free, max(budget, 0))
            out.extend(Launch(task) for _ in range(extra))
            free -= extra
            budget -= extra
            if extra < c - 1:
                short = True
        if short and self.delay > 0:
            self._owed[job.uid] = (view.now + self.delay, c)
        return out

    def on_attempt_finished(self, view, attempt):
        job = attempt.task.job
        if job.done:
            self._owed.pop(job.uid, None)
            self._cloned.discard(job.uid)
        if not self._owed:
            return []
        free = view.free_slot_count
        budget = self._budget_left(view)
        out: list[Launch] = []
        now = view.now
        for uid, (until, c) in list(self._owed.items()):
            if now > until:
                del self._owed[uid]
                continue
            jobs = [j for j in view.active_jobs() if j.uid == uid]
            if not jobs:
                del self._owed[uid]
                continue
            for a in list(jobs[0].running.values()):
                if a.index != 0:
                    continue
                need = c - a.task.n_live
                k = min(need, free, budget)
                if k > 0:
                    out.extend(Launch(a.task) for _ in range(k))
                    free -= k
                    budget -= k
                if free <= 0 or budget <= 0:
                    return out
        return out


@register_policy
class Hopper(SpeculationPolicy):
    """Hopper: speculation-aware scheduling, smallest virtual size (tasks x 2/beta) first."""

    name = "hopper"

    def __init__(self, beta: float = 1.5, interval: float = 5.0, min_elapsed: float = 1.0):
        self.beta = beta
        self.interval = interval
        self.min_elapsed = min_elapsed

    def validate(self) -> None:
        check_positive(self, "beta", self.beta)
        check_positive(self, "interval", self.interval)
        check_positive(self, "min_elapsed", self.min_elapsed, allow_zero=True)

    def virtual_size(self, job) -> float:
        """``remaining tasks x max(1, 2 / beta)``."""
        return (job.n_tasks - job.n_done) * max(1.0, 2.0 / self.beta)

    def _schedule(self, view, speculate: bool) -> list:
        free = view.free_slot_count
        if free == 0:
            return []
        now = view.now
        out: list = []
        # each job's virtual size once (the sort key and the allotment read the same value).
        # Without speculation the pass launches waiting tasks only, so the jobs with none add
        # nothing: it sorts the jobs with waiting tasks (the view keeps them), not every job
        # alive, at every finish (until 2026-11-30 (m), 42% of Hopper's CPU on FB-2010's
        # first quarter hour on 1,000 x 10, where most jobs alive have no task waiting)
        sized = sorted(
            (self.virtual_size(j), j.uid, j)
            for j in (view.active_jobs() if speculate else view.waiting_jobs())
        )
        jobs = [j for _size, _uid, j in sized]
        for size, _uid, job in sized:
            if free == 0:
                break
            allot = math.ceil(size) - len(job.running)
            if allot <= 0:
                continue
            # the first min(allot, free) waiting tasks, without copying the waiting queue
            # (the actions apply after the pass: nothing here changes it)
            for task in islice(job.pending.values(), min(allot, free)):
                out.append(Launch(task))
                allot -= 1
                free -= 1
            if not speculate or allot <= 0 or free == 0:
                continue
            cands = []
            for a in job.running.values():
                if a.task.n_live != 1 or now - a.launch_time < self.min_elapsed:
                    continue
                prog = view.progress(a)
                gained = prog - a.start_fraction
                t_rem = (now - a.launch_time) * (1.0 - prog) / gained if gained > 0 else math.inf
                cands.append((-t_rem, a.uid, a))
            cands.sort(key=lambda c: (c[0], c[1]))
            for _, _, a in cands[: min(allot, free)]:
                out.append(Launch(a.task))
                free -= 1
        if free:  # work conservation: any waiting task, smallest virtual size first
            launched = {x.task.uid for x in out}
            for job in jobs:
                for task in job.pending.values():
                    if free == 0:
                        return out
                    if task.uid in launched:
                        continue
                    out.append(Launch(task))
                    free -= 1
        return out

    def on_job_arrival(self, view, job):
        return self._schedule(view, speculate=False)

    def on_attempt_finished(self, view, attempt):
        return self._schedule(view, speculate=False)

    def on_tick(self, view):
        return self._schedule(view, speculate=True)
