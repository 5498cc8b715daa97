"""The attempt lifecycle: an attempt launched on a slot, closed (finished or killed), and its
task and job completed.

:class:`AttemptLifecycle` is a mixin of :class:`sim_bridge._engine.Simulator` (it holds no
state: its methods read and write the simulator's). ``_launch`` checks a
:class:`~sim_bridge.policies.base.Launch`, takes the task off the waiting list and a slot off
the node, lets the attempt physics (:class:`~sim_bridge.world.AttemptPhysics`) solve its end
and pushes its event. ``_close`` releases the slot and, with co-located contention on,
re-solves the node's other tenants. ``_finish`` completes the task with its first finished
attempt (its other attempts are killed at that instant), opens the next stage when the first
is done, and hands a finished job to ``on_job_done``. ``_load_touch`` brings a node's load
averages up to the clock.

Examples
--------
>>> from sim_bridge import Cluster, JobSpec, Workload, get_policy
>>> from sim_bridge._engine import Simulator
>>> from sim_bridge.policies.base import Launch
>>> w = Workload("SYN", [JobSpec("j0", 0.0, [10.0], [])])
>>> sim = Simulator(Cluster(2, 1, seed=0), [w], get_policy("none"), get_policy("fifo"),
...                 duration_dist=None, noise=False, skew=(0.0, 0.0))
>>> task = sim._arrive(0).tasks[0]
>>> sim._launch(Launch(task, node=1), sim.placement)
>>> att = task.attempts[0]
>>> att.node, sim._n_running, sim._n_free, sim._n_waiting
(1, 1, 1, 0)
>>> sim.now = att._end
>>> sim._finish(att)
>>> task.done, att.end_time == att._end, sim._n_running, sim._n_free
(True, True, 0, 2)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from sim_bridge import _closed_events, _task_list
from sim_bridge._closed_attempts import pack_closed
from sim_bridge._cluster import Cluster
from sim_bridge._event_heap import EventQueue
from sim_bridge._extensions import optional_extension
from sim_bridge._fair_order import FairOrder
from sim_bridge._jobs import Attempt, Job, Task, shed_closed
from sim_bridge._record_spill import RecordSpill
from sim_bridge._row_maps import RowMaps
from sim_bridge._states import (
    A_FINISHED,
    A_KILLED,
    BLOCKED,
    DONE,
    EV_SOLVE,
    RUNNING,
    WAITING,
)
from sim_bridge.policies.base import Launch, PolicyError
from sim_bridge.world._attempts import AttemptPhysics, decay_loads

__all__ = ["AttemptLifecycle"]

#: rebuild a job's ``running`` dict once deletions exceed twice what is left
#: (``AttemptLifecycle._close``); off, it keeps the table it grew to (the same trace:
#: ``tests/test_running_compaction.py``)
COMPACT_RUNNING = True


class AttemptLifecycle:
    """The simulator's attempt lifecycle (mixin of :class:`sim_bridge._engine.Simulator`)."""

    # the simulator's state these methods read and write (set by ``SimulatorSetup.__init__``)
    cluster: Cluster
    keep_history: bool
    now: float
    attempts: list[Attempt]
    _tenancy: bool
    _on_job_done: Any
    _hook_launched: bool
    _just_launched: list[Attempt]
    _drop_q: _task_list.DropQueue
    _n_upkeeps: int
    _spill: RecordSpill | None
    _rows: RowMaps | None
    _free: dict[int, int]
    _n_free: int
    _n_running: int
    _n_copies: int
    _n_waiting: int
    _node_running: list[int]
    _node_live: list[dict[int, Attempt]]
    _load: list[list[float]]
    _load_t: list[float]
    _active: dict[int, Job]
    _waiting: dict[int, Job]
    _fair_order: FairOrder[Job] | None
    _attempt_uid: int
    _heap: EventQueue
    _seq: int
    # the simulator's methods these call (job arrivals', policy actions', attempt physics')
    _make_waiting: Callable[[Job, Any], None]
    _pick_node: Callable[[Task], int | None]
    _solve_launch: Callable[[Attempt, Task, Job, int, float, float, int], float]
    _advance: Callable[[Attempt, float], None]
    _work_done: Callable[[Attempt, float], float]
    _hold_live: bool
    _tenants_left: Callable[[int, float], None]
    _push_end: Callable[[Attempt, int], None]

    # ----------------------------------------------------------------- slots / loads
    def _load_touch(self, node: int) -> None:
        decay_loads(self._load, self._load_t, node, self._node_running[node], self.now)

    # ----------------------------------------------------------------- launch and close
    def _launch(self, act: Launch, policy) -> None:
        task = act.task
        now = self.now
        if type(task) is not Task and not isinstance(task, Task):
            raise PolicyError(f"policy {policy.name!r}: {act!r}: task is not a Task")
        state = task.state
        job = task.job
        if state == DONE or state == BLOCKED or job.finish_time is not None:
            why = "the task is already done" if state == DONE else "its stage is not runnable yet"
            raise PolicyError(f"policy {policy.name!r}: {act!r} at t={now:.3f}: {why}")
        sf = act.start_fraction
        if sf != 0.0 or type(sf) is not float:
            if not (isinstance(sf, (int, float)) and 0.0 <= sf < 1.0):
                raise PolicyError(
                    f"policy {policy.name!r}: {act!r}: start_fraction must be in [0, 1), got {sf!r}"
                )
            sf = float(sf)
        free = self._free
        node = act.node
        if node is None:
            node = self._pick_node(task)
            if node is None:
                raise PolicyError(
                    f"policy {policy.name!r}: {act!r} at t={now:.3f}: no free slot in the cluster"
                )
        elif node not in free:
            if not isinstance(node, (int, np.integer)) or not 0 <= node < self.cluster.n_nodes:
                raise PolicyError(f"policy {policy.name!r}: {act!r}: no node {node!r}")
            raise PolicyError(
                f"policy {policy.name!r}: {act!r} at t={now:.3f}: node {node} has no free slot"
            )
        if type(node) is not int:
            node = int(node)
        if state == WAITING:
            pending = job.pending
            del pending[task.index]
            self._n_waiting -= 1
            if not pending:
                self._waiting.pop(job.uid, None)
            elif type(pending) is dict:  # (a big job's WaitingTasks keeps no dead entries)
                # a dict only compacts its deleted entries when it grows, and iterating it walks
                # over them (placement iterates it at every event): rebuild it once deletions
                # exceed 1/16 of what is left (amortised O(1) per deletion, and a walk skips at
                # most max(32, n/16) dead entries)
                pdel = job._pdel + 1
                if pdel > 32 and pdel * 16 > len(pending):
                    job.pending = dict(pending)
                    pdel = 0
                job._pdel = pdel
            task.state = RUNNING
            if task.first_launch is None:
                task.first_launch = now
        # a task not done holds a list, or before its first launch the shared empty tuple
        attempts = cast("list[Attempt]", task.attempts)
        index = len(attempts)
        uid = self._attempt_uid
        self._attempt_uid = uid + 1
        att = Attempt(uid, task, index, node, now, sf)
        node_running = self._node_running
        running_before = node_running[node]
        keep = self.keep_history
        end = self._solve_launch(att, task, job, node, now, sf, running_before)
        spill = self._spill
        if spill is not None:  # a streaming run: its job's launch records past a chunk go
            # to disk (checked here only: the engine's records grow at launches alone)
            recs = job._recs
            if recs is not None and len(recs) >= spill.chunk:
                spill.put(job)
        # lists sized to their attempts: [] then append() allocates room for 4 (88 bytes),
        # [att] 64 and [a0, att] 72 (a list appended to once more grows to room for 8)
        if index > 1:
            attempts.append(att)
        elif index:
            task.attempts = [attempts[0], att]
        else:
            task.attempts = [att]
        task.n_live += 1
        job.running[uid] = att
        if self._fair_order is not None:
            self._fair_order.mark(job)
        self._node_live[node][uid] = att
        node_running[node] = running_before + 1
        self._n_running += 1
        if index:
            self._n_copies += 1
        # take the slot
        c = free[node] - 1
        if c:
            free[node] = c
        else:
            del free[node]
        self._n_free -= 1
        if keep:
            self.attempts.append(att)
        self._seq += 1
        if att._solve is not None:
            att._solve = (self._seq, now, att._solve[2])
            self._heap.push(end, self._seq, EV_SOLVE, att)
        else:  # its end, or where its solve goes on (past the contention paths)
            self._push_end(att, self._seq)
        if self._hook_launched:
            self._just_launched.append(att)

    def _close(self, att: Attempt, state: int) -> None:
        """Close ``att`` (finished or killed, ``state``): its slot released, its co-tenants
        re-solved, and in a streaming run shrunk to what is still read. The compiled close
        (``sim_bridge._lifecycle_core.close``) takes its place where it was built; this one is
        its reference and closes any other attempt class."""
        node = att.node
        now = self.now
        node_running = self._node_running
        n = node_running[node]
        decay_loads(self._load, self._load_t, node, n, now)
        att.state = state
        att.end_time = now
        task = att.task
        uid = att.uid
        task.n_live -= 1
        job = task.job
        running = job.running
        del running[uid]
        if self._fair_order is not None:
            self._fair_order.mark(job)
        # a dict never shrinks on deletion: a big stage's table stays allocated through its
        # tail (118 MB over the 720 jobs alive at 6 h of the FB-2010 day), and iterating it
        # (every speculation scan) walks its dead entries. Rebuilt, in the same order, once
        # deletions exceed twice what is left: at most half a copy per deletion, amortised.
        rdel = job._rdel + 1
        if rdel > 32 and rdel > 2 * len(running) and COMPACT_RUNNING:
            job.running = dict(running)
            rdel = 0
        job._rdel = rdel
        del self._node_live[node][uid]
        if self._tenancy:
            if state != A_KILLED or att._dem is not None:
                self._advance(att, now)  # its progress at the end stays readable
            # (a killed attempt with no co-located demand is read from its running sum
            # since _c0, which _advance does not restart: booked, the last segment would
            # count twice in a later read of its progress)
            self._tenants_left(node, now)
        if state == A_KILLED and self._hold_live and att._work > 0.0:
            # a streamed run whose paths go with its live attempts' reads: the killed
            # attempt's work done at its end is booked now, where SimView.progress reads it
            # (the value _work_done gives at the end, read at any later time)
            att._prog = (now, self._work_done(att, now))
        node_running[node] = n - 1
        self._n_running -= 1
        if att.index:
            self._n_copies -= 1
        # release the slot
        free = self._free
        c = free.get(node)
        free[node] = 1 if c is None else c + 1
        self._n_free += 1
        if not self.keep_history:  # a streaming run: keep only what a closed attempt needs
            rows = shed_closed(att)
            if not rows and not task.n_live and (state == A_FINISHED or task.state == DONE):
                rows = pack_closed(task)  # its last attempt closed: several kept as rows
            if rows and _task_list.DROP_DONE:
                self._drop_q.new.append(task)  # its object may go: DropQueue

    _close_py = _close

    def _upkeep(self) -> None:
        """A streaming run's periodic upkeep (at the engine's checks): the done tasks nobody
        else holds go (:class:`~sim_bridge._task_list.DropQueue`), and the pages of the big
        jobs' rows written since the last return go back to the kernel
        (:meth:`~sim_bridge._row_maps.RowMaps.tick`); every
        :data:`~sim_bridge._closed_events.RELEASE_EVERY` upkeeps, the heap's entries of
        closed attempts let go of them (:mod:`sim_bridge._closed_events`)."""
        self._n_upkeeps += 1
        if (
            _closed_events.RELEASE_CLOSED
            and not self.keep_history  # a run that keeps its history keeps the attempts
            and self._n_upkeeps % _closed_events.RELEASE_EVERY == 0
        ):
            self._heap.replace_objects(_closed_events.release_closed)
        if self._drop_q:
            self._drop_q.sweep()
        if self._rows is not None:
            self._rows.tick()

    def _kill(self, att: Attempt) -> None:
        self._close(att, A_KILLED)

    def _finish(self, att: Attempt) -> None:
        self._close(att, A_FINISHED)
        task = att.task
        job = task.job
        task.state = DONE
        task.finish_time = self.now
        if task.n_live:  # its other running attempts, in launch order (a new dict)
            for other in task.live.values():
                self._close(other, A_KILLED)
        job.n_done += 1
        st = task.stage
        job.stage_left[st] -= 1
        if job.stage_left[st] == 0 and st == 0 and job.stage_left[1] > 0:
            job.stage = 1
            self._make_waiting(job, job.stages[1])
        if job.n_done == job.n_tasks:
            job.finish_time = self.now
            del self._active[job.uid]
            self._waiting.pop(job.uid, None)
            if self._on_job_done is not None:
                self._on_job_done(job)


_core: Any = optional_extension("_lifecycle_core")
if _core is not None:
    _core.set_reference(AttemptLifecycle._close_py, sys.modules[__name__])
    AttemptLifecycle._close = _core.close  # type: ignore[method-assign,assignment]
    AttemptPhysics._solve_launch = _core.solve_launch  # type: ignore[method-assign,assignment]
