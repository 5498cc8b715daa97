"""Single-fork replication of Wang, Joshi and Wornell (seed 002, Definition 1).

``pi_keep(p, r)``: once ``(1 - p) n`` tasks of a job have finished, give each of the ``p n``
unfinished tasks ``r`` new replicas and keep the original running. ``pi_kill(p, r)``: kill the
original of each unfinished task and launch ``r + 1`` new replicas. The first replica to finish
wins; the engine kills the others at that instant.

The fork point is counted per job and stage (Definition 1 is about one stage of ``n``
parallel tasks; a map/reduce job forks each stage separately): ``m = floor(p n)`` stragglers,
fork when ``n - m`` tasks of the stage are done (Definition 1 assumes ``p n`` is an integer;
this is its natural rounding). On a
cluster without enough free slots the replicas that do not fit are launched as slots free up,
before waiting tasks get them (replicas are decided first, in ``on_attempt_finished``).
"""

from __future__ import annotations

import math
from collections import deque

from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import Kill, Launch, SpeculationPolicy, check_fraction

__all__ = ["PiKeep", "PiKill", "stragglers_at_fork"]


def stragglers_at_fork(n_tasks: int, p: float) -> int:
    """Number of stragglers ``m = floor(p n)`` a single-fork policy replicates.

    Examples
    --------
    >>> stragglers_at_fork(400, 0.1), stragglers_at_fork(10, 0.25), stragglers_at_fork(5, 0.0)
    (40, 2, 0)
    """
    return int(math.floor(p * n_tasks + 1e-9))


class _SingleFork(SpeculationPolicy):
    """Shared machinery of pi_keep / pi_kill."""

    keep: bool = True

    def __init__(self, p: float = 0.1, r: int = 1):
        self.p = p
        self.r = r

    def validate(self) -> None:
        check_fraction(self, "p", self.p)
        if not self.p < 1.0:
            raise ValueError(f"{self.name}: parameter p must be < 1, got {self.p!r}")
        if isinstance(self.r, bool) or not isinstance(self.r, int) or self.r < 0:
            raise ValueError(f"{self.name}: parameter r must be an integer >= 0, got {self.r!r}")

    def reset(self) -> None:
        # the stage each live job last forked (a job's stages fork in order); a finished
        # job's entry goes, so a streamed run holds none a job ever run
        self._forked: dict[int, int] = {}
        # replicas decided at a fork that did not fit in the free slots yet
        self._owed: deque = deque()

    # ------------------------------------------------------------------ hooks
    def on_attempt_finished(self, view, attempt):
        job = attempt.task.job
        if job.done:
            self._forked.pop(job.uid, None)
        else:
            stage = job.stage
            if self._forked.get(job.uid) != stage:
                n = len(job.stages[stage])
                m = stragglers_at_fork(n, self.p)
                if m > 0 and n - job.stage_left[stage] >= n - m:
                    return self._fork(view, job, stage)
        if self._owed:
            return self._pay(view.free_slot_count)
        return []

    # ------------------------------------------------------------------ helpers
    def _fork(self, view, job, stage: int) -> list:
        self._forked[job.uid] = stage
        free = view.free_slot_count
        out: list = []
        n_new = self.r if self.keep else self.r + 1
        if n_new == 0:
            return out
        for task in job.stages[stage]:
            if task.done:
                continue
            if task.state == 1:  # still waiting: it starts now with its replicas
                self._owed.append((task, n_new + (1 if self.keep else 0)))
                continue
            if not self.keep:
                for a in list(task.live.values()):
                    out.append(Kill(a))
                    free += 1
            self._owed.append((task, n_new))
        out.extend(self._pay(free))
        return out

    def _pay(self, free: int) -> list:
        out: list = []
        while self._owed and free > 0:
            task, count = self._owed[0]
            if task.done or task.job.done:
                self._owed.popleft()
                continue
            k = min(count, free)
            out.extend(Launch(task) for _ in range(k))
            free -= k
            if k == count:
                self._owed.popleft()
            else:
                self._owed[0] = (task, count - k)
        return out


@register_policy
class PiKeep(_SingleFork):
    """Single-fork pi_keep(p, r) (seed 002): at (1-p)n done, r more replicas per straggler."""

    name = "pi_keep"
    keep = True


@register_policy
class PiKill(_SingleFork):
    """Single-fork pi_kill(p, r) (seed 002): at (1-p)n done, kill each straggler, launch r+1."""

    name = "pi_kill"
    keep = False
