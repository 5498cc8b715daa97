"""Policy actions applied: launches, kills and wake-ups, in the order a policy returns them.

:class:`PolicyActions` is a mixin of :class:`sim_bridge._engine.Simulator` (it holds no
state: its methods read and write the simulator's). ``_apply`` applies a policy's list of
:class:`~sim_bridge.policies.base.Launch`, :class:`~sim_bridge.policies.base.Kill` and
:class:`~sim_bridge.policies.base.Wake` actions, then calls the speculation policy's
``on_attempt_launched`` for each new attempt once the list is done; an invalid action raises
:class:`~sim_bridge.policies.base.PolicyError` naming the policy, the action and the time.
A killed task with no attempt left goes back to the front of its job's waiting tasks
(``_requeue``); a launch without a node takes a free one away from the task's other attempts
if there is one (``_pick_node``).

Examples
--------
>>> from sim_bridge import Cluster, JobSpec, Workload, get_policy
>>> from sim_bridge._engine import Simulator
>>> from sim_bridge.policies.base import Wake
>>> w = Workload("SYN", [JobSpec("j0", 0.0, [10.0], [])])
>>> sim = Simulator(Cluster(2, 1, seed=0), [w], get_policy("none"), get_policy("fifo"))
>>> sim._apply([Wake(5.0, "tag")], sim.placement)
>>> sim._n_wakes, sim._heap[0][0]
(1, 5.0)
>>> sim._apply(["go"], sim.placement)
Traceback (most recent call last):
...
sim_bridge._errors.PolicyError: policy 'fifo' returned 'go', which is not a Launch, Kill or Wake
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sim_bridge._fair_order import FairOrder
from sim_bridge._jobs import Attempt, Job, Task
from sim_bridge._states import A_RUNNING, DONE, EV_WAKE, WAITING
from sim_bridge._view import SimView
from sim_bridge._waiting_tasks import WaitingTasks
from sim_bridge.policies.base import Kill, Launch, PolicyError, SpeculationPolicy, Wake

__all__ = ["PolicyActions"]


class PolicyActions:
    """The simulator's application of policy actions (mixin of
    :class:`sim_bridge._engine.Simulator`)."""

    # the simulator's state these methods read and write (set by ``SimulatorSetup.__init__``)
    speculation: SpeculationPolicy
    view: SimView
    now: float
    _just_launched: list[Attempt]
    _free: dict[int, int]
    _waiting: dict[int, Job]
    _waiting_dirty: bool
    _fair_order: FairOrder[Job] | None
    _n_waiting: int
    _n_wakes: int
    # the simulator's methods these call (the loop's and the attempt lifecycle's)
    _push: Callable[[float, int, Any], None]
    _launch: Callable[[Launch, Any], None]
    _kill: Callable[[Attempt], None]

    # ----------------------------------------------------------------- actions
    def _apply(self, actions, policy) -> None:
        if actions:
            self._apply_list(actions, policy)
        # on_attempt_launched runs once the whole list is applied, so that the view it sees
        # (free slots) is consistent; its own launches are handled the same way
        while self._just_launched:
            batch, self._just_launched = self._just_launched, []
            spec = self.speculation
            for att in batch:
                acts = spec.on_attempt_launched(self.view, att)
                if acts:
                    self._apply_list(acts, spec)

    def _apply_list(self, actions, policy) -> None:
        for act in actions:
            if type(act) is Launch:
                self._launch(act, policy)
            elif type(act) is Kill:
                a = act.attempt
                if not isinstance(a, Attempt) or a.state != A_RUNNING:
                    raise PolicyError(
                        f"policy {policy.name!r}: {act!r} at t={self.now:.3f}: "
                        "the attempt is not running"
                    )
                self._kill(a)
                task = a.task
                if not task.n_live and task.state != DONE:
                    self._requeue(task)
            elif type(act) is Wake:
                at = act.at
                if not (isinstance(at, (int, float)) and math.isfinite(at) and at >= self.now):
                    raise PolicyError(
                        f"policy {policy.name!r}: {act!r} at t={self.now:.3f}: "
                        "the wake-up time must be finite and not in the past"
                    )
                self._n_wakes += 1
                self._push(float(at), EV_WAKE, (policy, act.tag))
            else:
                raise PolicyError(
                    f"policy {policy.name!r} returned {act!r}, which is not a Launch, Kill or Wake"
                )

    def _requeue(self, task: Task) -> None:
        job = task.job
        task.state = WAITING
        # back to the front of the job's waiting tasks
        rest = job.pending
        if type(rest) is WaitingTasks:  # a big job's (sim_bridge._waiting_tasks)
            rest.push_front(task)
        else:
            job.pending = {task.index: task}
            job.pending.update(rest)
            job._pdel = 0
        self._n_waiting += 1
        if job.uid not in self._waiting:
            if self._waiting and job.uid < next(reversed(self._waiting)):
                self._waiting_dirty = True
            self._waiting[job.uid] = job
            if self._fair_order is not None:
                self._fair_order.mark(job)

    def _pick_node(self, task: Task) -> int | None:
        busy = {a.node for a in task.live.values()}
        for node in self._free:
            if node not in busy:
                return node
        for node in self._free:
            return node
        return None
