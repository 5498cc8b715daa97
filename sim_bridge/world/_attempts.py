"""Attempt physics: how long an attempt runs, and the node load averages it moves.

The engine's loop (:mod:`sim_bridge._engine`) decides *when* things happen; this module is
the world model's answer to *how long*: a launched attempt's duration is solved analytically
from its node's contention path (:mod:`sim_bridge._cluster`), its residual noise
(:func:`~sim_bridge.world.residual_noise`, tail exponent :func:`noise_alpha`) and the demand
of the tasks sharing its node (:func:`~sim_bridge.world.tenant_demand`, summed by
:func:`sum_demand`), and re-solved whenever that node's tenants change.

:func:`decay_loads` is the one place the 1-, 5- and 15-minute load averages are updated (the
compiled loop ``sim_bridge/_fifo_core.pyx`` restates it in C, ``_touch``; the compiled and
Python engines are compared row for row in ``tests/test_compiled_engine.py``).

:class:`AttemptPhysics` holds the engine's attempt methods (a mixin of
:class:`sim_bridge._engine.Simulator`: they read and write the simulator's state).

Examples
--------
>>> load, load_t = [[0.0], [0.0], [0.0]], [0.0]
>>> decay_loads(load, load_t, 0, 2, 60.0)
>>> round(load[0][0], 4), load_t[0]
(1.2642, 60.0)
>>> noise_alpha(1.5, 2.0, 0.0, 0.3)
3.0
>>> sum_demand([(0.1, 0.0, 0.2, 0.0), (0.1, 0.0, 0.0, 0.0)])
(0.2, 0.0, 0.2, 0.0)
>>> sum_demand([]) is None
True
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

# the module, not its names: sim_bridge._cluster imports this package, so its names may not be
# bound yet when this module is first imported (an import in the hot function took 2.4% of the
# FB-2010 LATE day's CPU)
import sim_bridge._cluster as _cluster
from sim_bridge._jobs import new_memo, profile_of, read_noise
from sim_bridge._states import A_RUNNING, EV_CHECK, EV_FINISH, EV_SOLVE
from sim_bridge.world import _shared_demands
from sim_bridge.world._interference import tenant_demand
from sim_bridge.world._noise import residual_noise_one

if TYPE_CHECKING:
    from sim_bridge._cluster import Cluster, PastPaths
    from sim_bridge._event_heap import EventQueue
    from sim_bridge._jobs import Attempt, Job, Task

try:  # the compiled others' sums; the Python reference below when not built
    from sim_bridge._tenants_core import others_demand as _others_demand_c
except ImportError:  # pragma: no cover - no C compiler, or an extension built before it
    _others_demand_c = None
try:  # the compiled co-tenants' re-solve; AttemptPhysics._retenant_py when not built
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._retenant_core import add_each as _add_each_c
    from sim_bridge._retenant_core import owns as _owns_c
    from sim_bridge._retenant_core import retenant as _retenant_c
except ImportError:  # pragma: no cover - no C compiler, or an extension built before it
    _retenant_c = _owns_c = _add_each_c = None

__all__ = [
    "LOAD_TAUS",
    "AttemptPhysics",
    "decay_loads",
    "noise_alpha",
    "others_demand",
    "others_demand_py",
    "sum_demand",
]

FAST_TENANTS = True
"""Re-solve a node's co-tenants through the fused loop (:meth:`AttemptPhysics._retenant`)
and sum the others' demands with :func:`others_demand`; False: one ``_advance`` and one
``_resolve`` call per co-tenant and one :func:`sum_demand` each, the obvious path the fused
one is tested against (``tests/test_tenancy_fast_paths.py``). The results are the same bit
for bit."""

DEFER_SOLVES = True
"""Defer end solves under co-located demand (:meth:`AttemptPhysics._defer`); False: solve
each at once, the obvious path deferral is tested against (``tests/test_engine_rooms.py``).
The results are the same bit for bit."""

SHARE_WALKS = True
"""Give co-tenants the step walk of another with the same profile, start and demand in one
re-solve (:meth:`AttemptPhysics._retenant`); False: every co-tenant walks its own, the path
sharing is tested against (``tests/test_tenancy_fast_paths.py``). The results, and the
attempts' rate memos, are the same bit for bit."""

RETENANT_IN_C = True
"""Run :meth:`AttemptPhysics._retenant`'s loop, and the own and added demands of a node's
tenants, in C when ``sim_bridge._retenant_core`` is built; False: in Python
(:meth:`AttemptPhysics._retenant_py`, ``_owns``' list, ``_add``), the reference it is tested
against (``tests/test_tenancy_fast_paths.py``). The results, and the attempts' rate memos,
are the same bit for bit."""

LOAD_TAUS = (60.0, 300.0, 900.0)
"""Time constants (s) of the 1-, 5- and 15-minute load averages."""
_INV_TAU1, _INV_TAU5, _INV_TAU15 = (1.0 / tau for tau in LOAD_TAUS)
_exp = math.exp
_NO_DEMAND = (0.0, 0.0, 0.0, 0.0)
_LOWER = 0.999  # a deferred solve comes due a little before the fastest possible end


def decay_loads(load: Sequence[Any], load_t: Any, node: int, n: float, now: float) -> None:
    """Bring ``node``'s load averages up to ``now``, in place.

    ``load`` holds the 1-, 5- and 15-minute averages (three per-node sequences), ``load_t``
    the time each node's were last brought up to date; ``n`` attempts ran on the node since
    then. Each average relaxes exponentially towards ``n`` with its time constant
    (:data:`LOAD_TAUS`), as the kernel's ``loadavg``. Nothing changes when ``now`` is not
    later than ``load_t[node]``.
    """
    dt = now - load_t[node]
    if dt > 0.0:
        l1, l5, l15 = load
        l1[node] = n + (l1[node] - n) * _exp(-dt * _INV_TAU1)
        l5[node] = n + (l5[node] - n) * _exp(-dt * _INV_TAU5)
        l15[node] = n + (l15[node] - n) * _exp(-dt * _INV_TAU15)
        load_t[node] = now


def noise_alpha(alpha_w: Any, tail: Any, tail_pressure: float, press: Any) -> Any:
    """Tail exponent of an attempt's residual noise: ``alpha_w * tail * (1 - tail_pressure *
    press)``.

    ``alpha_w`` is the workload's exponent, ``tail`` the node's tail factor and ``press`` the
    contention met at launch (``1 - rate * speed``); scalars or numpy arrays.
    """
    return alpha_w * tail * (1.0 - tail_pressure * press)


def sum_demand(owns: Iterable[Sequence[float]]) -> tuple[float, float, float, float] | None:
    """The summed demand ``(cpu, mem, disk, net)`` of co-located tenants' own demands (None
    when there is none: no tenant, or all zero)."""
    c = m = d = n = 0.0
    for own in owns:
        c += own[0]
        m += own[1]
        d += own[2]
        n += own[3]
    if c == 0.0 and m == 0.0 and d == 0.0 and n == 0.0:
        return None
    return (c, m, d, n)


def others_demand_py(
    owns: Sequence[Sequence[float]],
) -> list[tuple[float, float, float, float] | None]:
    """For each tenant ``i``, :func:`sum_demand` of the others' demands ``owns[:i] +
    owns[i + 1:]`` (the reference of :func:`others_demand`; O(n^2) additions).

    Examples
    --------
    >>> others_demand_py([(0.1, 0.0, 0.0, 0.0), (0.0, 0.0, 0.2, 0.0)])
    [(0.0, 0.0, 0.2, 0.0), (0.1, 0.0, 0.0, 0.0)]
    >>> others_demand_py([(0.1, 0.0, 0.0, 0.0)])
    [None]
    """
    owns = list(owns)
    return [sum_demand(owns[:i] + owns[i + 1 :]) for i in range(len(owns))]


def others_demand(
    owns: Sequence[Sequence[float]],
) -> list[tuple[float, float, float, float] | None]:
    """:func:`others_demand_py`, in C when ``sim_bridge._tenants_core`` is built: the same
    additions in the same order, so the same tuples bit for bit, and adjacent tenants of
    equal demand share one sum (removing either leaves the same sequence).

    Examples
    --------
    >>> owns = [(0.1, 0.0, 0.0, 0.0), (0.1, 0.0, 0.0, 0.0), (0.0, 0.3, 0.0, 0.0)]
    >>> others_demand(owns) == others_demand_py(owns)
    True
    """
    if _others_demand_c is not None:
        return _others_demand_c(list(owns))
    return others_demand_py(owns)


def _add(dem, own):
    """``dem + own`` (``dem`` None: no demand yet)."""
    if dem is None:
        return own
    return (dem[0] + own[0], dem[1] + own[1], dem[2] + own[2], dem[3] + own[3])


def _add_each(atts: list[Attempt], own: tuple[float, ...]) -> list[tuple[float, ...]]:
    """``[_add(a._dem, own) for a in atts]``, in C when built (:data:`RETENANT_IN_C`)."""
    if RETENANT_IN_C and _add_each_c is not None:
        got = _add_each_c(atts, own)
        if got is not None:
            return got
    return [_add(a._dem, own) for a in atts]


class AttemptPhysics:
    """The simulator's attempt physics (mixin of :class:`sim_bridge._engine.Simulator`)."""

    # the simulator's state these methods read and write (set by ``Simulator.__init__``)
    cluster: Cluster
    keep_history: bool
    duration_dist: Any
    noise: bool
    interference: float
    tail_pressure: float
    record_truth: bool
    _bounded: bool
    _tenancy: bool
    #: a streamed run that writes counters: each launch record ends with the node's four
    #: background levels at launch (the counters are read from them when the job is written,
    #: so the paths need not keep the launch's step until then)
    _launch_levels: bool = False
    #: the paths go with the live attempts' reads, not the live jobs' (``Simulator._hold_paths``;
    #: a killed attempt's progress at its end is booked when it closes)
    _hold_live: bool = False
    _load: list[list[float]]
    _load_t: list[float]
    _node_live: list[dict[int, Attempt]]
    _pid_demand: dict[int, tuple[float, ...]]
    _dem_pool: dict[tuple[float, ...], tuple[float, ...]]
    _median_cache: dict[tuple[int, int], float]
    _speed: list[float]
    _tail: list[float]
    _rstates: array[float]
    _dstates: array[float]
    _truth: array[float]
    _heap: EventQueue
    _seq: int

    # ----------------------------------------------------------------- launch
    def _solve_launch(
        self,
        att: Attempt,
        task: Task,
        job: Job,
        node: int,
        now: float,
        sf: float,
        running_before: int,
    ) -> float:
        """The physics of a launch: the node's load averages brought up to ``now``, what its
        counters at launch are computed from, the attempt's duration (noise multiplier,
        co-tenants' demand, end time solved on the contention path; the newcomer re-solves
        its co-tenants) and the truth when recorded. Returns the time of its heap event (its
        end, or a checkpoint).

        The compiled launch (``sim_bridge._lifecycle_core.solve_launch``, put in its place
        by ``sim_bridge._sim_lifecycle`` where it was built) does the same; this one is its
        reference (``_solve_launch_py``)."""
        index = att.index
        # load averages of the node, brought up to now (as _load_touch)
        load = self._load
        decay_loads(load, self._load_t, node, running_before, now)
        l1, l5, l15 = load
        # what the node's counters at launch are computed from (trace rows, at the end)
        keep = self.keep_history
        if keep:
            self._rstates.extend((running_before, l1[node], l5[node], l15[node]))
        else:
            # written where its job keeps its records (its offset there): the record is
            # complete at the end of this launch, and nothing rewrites it (an array of its
            # own took 208 bytes a running attempt; a job's records past
            # ``RecordSpill.chunk`` go to disk)
            recs = job._recs
            if recs is None:
                recs = job._recs = array("d")
            rec: array[float] = recs
            att._rec = job._nspill + len(rec)
            rec.extend((running_before, l1[node], l5[node], l15[node]))
        # duration
        if self.duration_dist is not None:
            x = task._u0 if index == 0 else float(self.duration_dist.rvs(random_state=job.rng))
            if not (math.isfinite(x) and x >= 0):
                raise ValueError(f"duration_dist drew an invalid duration {x!r}")
            end = att._end = now + task.work * (1.0 - sf) * x
        else:
            cluster = self.cluster
            pid = att._pid = job.pids[task.stage]
            ideal = cluster.ideal
            if not ideal:
                k0, r0, c0 = cluster.launch_point(node, pid, now)
            if self.noise:
                if self.tail_pressure:
                    # contention met at launch makes the tail heavier (workload-specific)
                    press = 0.0 if ideal else 1.0 - r0 * self._speed[node]
                    alpha = noise_alpha(job.alpha, self._tail[node], self.tail_pressure, press)
                    u = task._u0 if index == 0 else job.rng.random()
                    mult = residual_noise_one(u, alpha)
                elif index == 0:
                    # read once: a streaming run lets a stage's numbers go once all are read
                    mult = job._m[task.index] if keep else read_noise(job, task.index)
                else:
                    alpha = noise_alpha(job.alpha, self._tail[node], 0.0, 0.0)
                    mult = residual_noise_one(job.rng.random(), alpha)
            else:
                mult = 1.0
            work = task.work * mult * (1.0 - sf)
            att._work = work
            dem: tuple[float, ...] | None = None
            if self._tenancy:
                live = self._node_live[node]
                if live:
                    own = self._demand(pid)
                    if FAST_TENANTS:  # the newcomer loads its co-tenants
                        others = list(live.values())
                        dem = sum_demand(self._owns(others))
                        if dem is not None and _shared_demands.SHARE_DEMANDS:
                            one = [dem]
                            _shared_demands.share_demands(one, self._dem_pool)
                            dem = one[0]
                        self._retenant(others, now, _add_each(others, own))
                    else:
                        dem = self._demand_of(live.values())
                        for other in live.values():
                            self._advance(other, now)
                            self._resolve(other, now, _add(other._dem, own))
                if keep:
                    self._dstates.extend(dem or _NO_DEMAND)
                else:
                    rec.extend(dem or _NO_DEMAND)
            if self.record_truth:
                if ideal:
                    r_now = 1.0
                else:
                    r_now = r0 if dem is None else cluster.rate_with(node, pid, k0, dem)
                self._record_truth(task, node, now, mult, r_now, None if keep else rec)
            if self._launch_levels:  # a streamed run (rec: its job's records, this one last)
                rec.extend(cluster.levels_now(node, now))
            if ideal:
                att._c0 = float(now)
                end = att._end = float(now + work)
            elif dem is None:
                att._c0 = c0
                if self._bounded:
                    end = self._settle(
                        att, cluster.end_from(node, pid, now, k0, r0, c0, work, within=True)
                    )
                else:
                    end = att._end = cluster.end_from(node, pid, now, k0, r0, c0, work)
            else:
                att._dem = dem
                if DEFER_SOLVES:
                    end = self._defer(att, now, work)
                elif self._bounded:
                    end = self._settle(
                        att, cluster.end_with(node, pid, now, work, dem, within=True)
                    )
                else:
                    end = att._end = cluster.end_with(node, pid, now, work, dem)
        return end

    _solve_launch_py = _solve_launch

    # ----------------------------------------------------------------- co-located tenants
    def _demand(self, pid: int) -> tuple[float, ...]:
        """The demand one running attempt of profile ``pid`` puts on its node."""
        d = self._pid_demand.get(pid)
        if d is None:
            d = self._pid_demand[pid] = tenant_demand(
                self.cluster._profiles[pid], self.cluster.slots, self.interference
            )
        return d

    def _demand_of(self, attempts: Iterable[Attempt]) -> tuple[float, ...] | None:
        """The summed demand of ``attempts`` (None when there is none)."""
        demand = self._demand
        return sum_demand(demand(profile_of(a)) for a in attempts)

    def _owns(self, attempts: list[Attempt]) -> list[tuple[float, ...]]:
        """Each attempt's own demand (``_demand`` of its profile), in order."""
        known = self._pid_demand
        if RETENANT_IN_C and _owns_c is not None:
            got = _owns_c(attempts, known, self._demand)
            if got is not None:
                return got
        pids = [profile_of(a) for a in attempts]
        return [known[p] if p in known else self._demand(p) for p in pids]

    def _node_demand(self, node: int) -> tuple[float, ...] | None:
        """The demand of the attempts running on ``node`` now (None: none, or co-located
        contention off)."""
        if not self._tenancy:
            return None
        live = self._node_live[node]
        return self._demand_of(live.values()) if live else None

    def _work_done(self, att: Attempt, t: float) -> float:
        """Nominal work ``att`` has done by ``t`` (not past its current segment's end)."""
        pid = profile_of(att)
        cl = self.cluster
        if cl.ideal:
            return att._seg_done + (t - att._seg_t)
        if att._dem is None:
            return att._seg_done + cl.cum_at(att.node, pid, t) - att._c0
        # under demand the work is integrated step by step: a speculation scan reads the
        # progress again and again, so go on from the last read in this segment
        prog = att._prog
        if prog is not None and att._seg_t <= prog[0] <= t:
            done = prog[1] + self._work_under(att, pid, prog[0], t)
        else:
            done = att._seg_done + self._work_under(att, pid, att._seg_t, t)
        att._prog = (t, done)
        return done

    def _work_under(self, att: Attempt, pid: int, t0: float, t1: float) -> float:
        """``Cluster.work_with(att.node, pid, t0, t1, att._dem)`` with the attempt's memo of
        its last step's rate (``att._step_rate``): successive progress reads of a speculation
        scan mostly fall in the same step."""
        memo = att._step_rate
        if memo is None:
            memo = att._step_rate = new_memo()
        return self.cluster.work_with(att.node, pid, t0, t1, att._dem, memo)

    def _retenant(
        self, atts: list[Attempt], now: float, dems: Sequence[tuple[float, ...] | None]
    ) -> None:
        """``_advance(att, now)`` then ``_resolve(att, now, dem)`` for each co-tenant ``att``
        in turn, under its new co-located demand ``dem`` (``dems`` in the same order): a
        node's tenants changed. The same operations in the same order as those calls
        (:data:`FAST_TENANTS` off runs them), inlined for the common cases: an attempt under
        demand advances through the compiled step walk (``TenantRates.work_steps``; a walk
        that stops short, because it needs the paths extended or more than a few steps, is
        redone from the start by ``Cluster.work_with``, which gives the same value: the walks
        only read the paths, and the rate memo changes no value) and its re-solve is
        deferred (:meth:`_defer`).

        Co-tenants of one profile advanced from the same time under equal demands walk the
        same steps to the same work: a node's tenants are mostly a few jobs' stages, and
        after a re-solve they share its time, so the first such walk's result, its work and
        its last step's rate, is given to the others (``walked``), with the rate memo each
        walk would have left (``[last step, its demand, rate]``). The same floats: a step's
        rate is a function of the node, profile, step and demand's values (a zero's sign in
        a demand cannot change it: the load it adds starts from ``+0.0``), and a walk only
        reads the memo's rate where it would compute the same one. Demands with a NaN never
        compare equal, so they always walk. On Alibaba 2017's nodes of 176 slots 99% of the
        walks were given (the first 40,000 events without speculation), on FB-2010's of 10
        with LATE 80%.

        The loop runs in C (``sim_bridge._retenant_core.retenant``: the fields read and
        written in the attempts' slots, :meth:`_due` inlined) when it is built,
        :data:`RETENANT_IN_C` is on and :meth:`_due` is not replaced, else in Python
        (:meth:`_retenant_py`, its reference: the same operations in the same order)."""
        if _shared_demands.SHARE_DEMANDS:  # equal demands, one tuple (the same floats)
            if type(dems) is not list:
                dems = list(dems)
            _shared_demands.share_demands(dems, self._dem_pool)
        cl = self.cluster
        trates = cl._trates
        if cl.ideal or trates is None or not DEFER_SOLVES:
            for att, dem in zip(atts, dems, strict=True):
                self._advance(att, now)
                self._resolve(att, now, dem)
            return
        if (
            RETENANT_IN_C
            and _retenant_c is not None
            and type(self)._due is _BASE_DUE  # (the compiled loop inlines it)
            and _retenant_c(
                self,
                atts,
                now,
                dems,
                cl,
                trates,
                self._speed,
                self._heap.push,
                cl.dt,
                _cluster._CHUNK_MIN,
                SHARE_WALKS,
                _LOWER,
                EV_SOLVE,
            )
        ):
            return
        self._retenant_py(atts, now, dems)

    def _retenant_py(
        self, atts: list[Attempt], now: float, dems: Sequence[tuple[float, ...] | None]
    ) -> None:
        """:meth:`_retenant`'s loop in Python (the reference of the compiled one,
        ``sim_bridge._retenant_core.retenant``), past its obvious path."""
        chunk_min = _cluster._CHUNK_MIN
        cl = self.cluster
        trates = cl._trates
        assert trates is not None  # (_retenant's obvious path takes the case)
        dt = cl.dt
        speed = self._speed
        push = self._heap.push
        work_steps = trates.work_steps
        share = SHARE_WALKS
        # (pid, t0, demand) -> (work, last step, its rate) of a whole walk this call made
        walked: dict[tuple, tuple[float, int, float]] = {}
        for att, dem in zip(atts, dems, strict=True):
            node = att.node
            pid = profile_of(att)
            seg_t = att._seg_t
            if now > seg_t:  # _advance: _work_done(att, now) booked
                old = att._dem
                if old is None:
                    done = att._seg_done + cl.cum_at(node, pid, now) - att._c0
                else:
                    memo = att._step_rate
                    if memo is None:
                        memo = att._step_rate = new_memo()
                    prog = att._prog
                    if prog is not None and seg_t <= prog[0] <= now:
                        t0, base = prog
                    else:
                        t0, base = seg_t, att._seg_done
                    # Cluster.work_with(node, pid, t0, now, old, memo), its short C walk inline
                    k1 = int(now // dt)
                    if k1 < cl._horizon and k1 - int(t0 // dt) <= chunk_min and any(old):
                        # (a walk of no step, t0 == now, leaves the memo as it was)
                        key = (pid, t0, old) if share and t0 < now else None
                        same = None if key is None else walked.get(key)
                        if same is not None:  # another tenant's walk, the same floats
                            work, memo[0], memo[2] = same
                            memo[1] = old
                        else:
                            work, t = work_steps(node, pid, t0, now, 0.0, old, memo)
                            if t < now:
                                work = cl.work_with(node, pid, t0, now, old, memo)
                            elif key is not None:  # a whole walk: the memo holds its last step
                                walked[key] = (work, memo[0], memo[2])
                    else:
                        work = cl.work_with(node, pid, t0, now, old, memo)
                    done = base + work
                att._seg_done = done
                att._seg_t = now
                att._prog = None
            if dem is None or not any(dem):
                self._resolve(att, now, dem)
                continue
            left = att._work - att._seg_done
            if left < 0.0:
                left = 0.0
            att._prog = None
            att._ckpt = None
            # _resolve under demand: _defer, the heap economy
            prev = att._solve
            att._dem = dem
            att._end = math.nan
            end = now + left * speed[node] * _LOWER
            self._seq += 1
            seq = self._seq
            att._solve = (seq, now, left)
            if prev is not None and end >= self._due(att, prev):
                continue
            push(end, seq, EV_SOLVE, att)

    def _advance(self, att: Attempt, now: float) -> None:
        """Close ``att``'s current segment at ``now``: its work done so far is booked."""
        if now > att._seg_t:
            att._seg_done = self._work_done(att, now)
            att._seg_t = now
            att._prog = None

    def _resolve(self, att: Attempt, now: float, dem: tuple[float, ...] | None) -> None:
        """Re-solve ``att``'s end time from ``now`` under the co-located demand ``dem``; its
        old finish event goes stale (the loop skips it)."""
        cl = self.cluster
        pid = profile_of(att)
        left = att._work - att._seg_done
        if left < 0.0:
            left = 0.0
        att._prog = None
        att._ckpt = None
        prev = att._solve  # a deferred solve still pending (its EV_SOLVE is in the heap)
        att._solve = None
        bounded = self._bounded
        if dem is None:
            k0, r0, c0 = cl.launch_point(att.node, pid, now)
            att._dem = None
            att._c0 = c0
            if left <= 0.0:
                end = now
            elif bounded:
                end = self._settle(
                    att, cl.end_from(att.node, pid, now, k0, r0, c0, left, within=True)
                )
            else:
                end = cl.end_from(att.node, pid, now, k0, r0, c0, left)
        else:
            att._dem = dem
            if DEFER_SOLVES:
                end = self._defer(att, now, left)
            elif bounded:
                end = self._settle(att, cl.end_with(att.node, pid, now, left, dem, within=True))
            else:
                end = cl.end_with(att.node, pid, now, left, dem)
        if att._solve is None:
            att._end = end
        self._seq += 1
        seq = self._seq
        if att._solve is not None:
            att._solve = (seq, now, left)
            if prev is not None and end >= self._due(att, prev):
                # the pending solve's EV_SOLVE comes due no later than this one would: it
                # stands for this one (see _solve_deferred), no new heap entry
                return
            self._heap.push(end, seq, EV_SOLVE, att)
        else:
            self._push_end(att, seq)

    def _due(self, att: Attempt, pend: tuple[int, float, float]) -> float:
        """When the deferred solve ``pend`` = ``(seq, t0, work)`` of ``att`` comes due: the
        time :meth:`_defer` returned for it."""
        return pend[1] + pend[2] * self._speed[att.node] * _LOWER

    def _defer(self, att: Attempt, now: float, work: float) -> float:
        """Defer the end solve of ``work`` started at ``now`` under ``att._dem`` (in-memory
        runs): most are superseded by the next change of the node's tenants before the clock
        gets there. Returns a time no later than the end (the rate is at most ``1 / speed``),
        when the loop solves it (``_solve_deferred``) with the same arguments and keeps the
        heap sequence number reserved now, so events come in the same order as if solved now.

        In streaming runs too (``_bounded``): there the deferred solve reads only the
        contention paths drawn so far and goes on where they end (:meth:`_go_on`), to the same
        float, so it gives the in-memory run's events.

        A re-solve deferred again while the previous deferral is pending pushes no EV_SOLVE
        of its own when the pending one comes due no later (:meth:`_resolve`): by induction
        some EV_SOLVE of the attempt due no later than its pending solve's time is always in
        the heap, and the first to come due, whatever its sequence number, re-queues the
        pending solve at its own time (:meth:`_solve_deferred`). Solves and finish events
        are the same; the heap holds fewer stale entries.
        """
        att._solve = (-1, now, work)
        att._end = math.nan  # no finish event matches until it is solved
        return now + work * self._speed[att.node] * _LOWER

    def _solve_deferred(self, att: Attempt, seq: int) -> None:
        """Solve ``att``'s deferred end (its EV_SOLVE with ``seq`` came due) and push its finish
        event with the same sequence number; an EV_SOLVE of an older deferral that came due
        first re-queues the pending one at its due time (see :meth:`_defer`)."""
        pend = att._solve
        if att.state != A_RUNNING or pend is None:
            return  # closed meanwhile, or re-solved without deferral
        if pend[0] != seq:  # an older deferral's entry: the pending one's comes due later
            self._heap.push(self._due(att, pend), pend[0], EV_SOLVE, att)
            return
        att._solve = None
        _seq, t0, work = pend
        pid = profile_of(att)
        cl = self.cluster
        if self._bounded:  # within the paths drawn so far (same float, see _go_on)
            self._settle(att, cl.end_with(att.node, pid, t0, work, att._dem, within=True))
        else:
            att._end = cl.end_with(att.node, pid, t0, work, att._dem)
        self._push_end(att, seq)

    def _settle(self, att: Attempt, end: float | PastPaths) -> float:
        """Book a streaming run's bounded solve of ``att`` (``Cluster.end_with`` or
        ``end_from`` with ``within=True``) and return the time of its heap event: its end,
        or, when the work is not done by the end of the contention paths
        (:class:`~sim_bridge._cluster.PastPaths`, kept in ``att._ckpt``), that end, where
        :meth:`_go_on` goes on with the solve (an ``EV_CHECK``). Either way the end is the
        unbounded solve's."""
        if type(end) is float:
            att._ckpt = None
            att._end = end
            return end
        att._ckpt = end  # type: ignore[assignment]
        att._end = end.at  # type: ignore[union-attr]
        return att._end

    def _push_end(self, att: Attempt, seq: int) -> None:
        """Push ``att``'s solved heap event with ``seq``: its end (``EV_FINISH``), or where its
        solve goes on (``EV_CHECK``, with the :class:`~sim_bridge._cluster.PastPaths`)."""
        stop = att._ckpt
        if stop is None:
            self._heap.push(att._end, seq, EV_FINISH, att)
        else:
            self._heap.push(att._end, seq, EV_CHECK, (att, stop))

    def _go_on(self, att: Attempt, stop: PastPaths, seq: int) -> None:
        """The clock reached the end of the contention paths where ``att``'s solve stopped
        (``stop``, its EV_CHECK with ``seq``): go on with it, the next block drawn, and push
        its end (or where it stops again) with the same sequence number, so events come in
        the order the unbounded solve gives them."""
        pid = profile_of(att)
        self._settle(att, self.cluster.end_resume(att.node, pid, stop, att._dem))
        self._push_end(att, seq)

    def _tenants_left(self, node: int, now: float) -> None:
        """A tenant left ``node``: its other tenants speed up (re-solved end times)."""
        live = self._node_live[node]
        if not live:
            return
        others = list(live.values())
        demand = self._demand
        if FAST_TENANTS:
            self._retenant(others, now, others_demand(self._owns(others)))
            return
        owns = [demand(profile_of(a)) for a in others]
        for i, att in enumerate(others):
            self._advance(att, now)
            # the others' demand, summed in the same order as _demand_of would
            self._resolve(att, now, sum_demand(owns[:i] + owns[i + 1 :]))

    def _record_truth(
        self,
        task: Task,
        node: int,
        now: float,
        mult: float,
        r_now: float,
        rec: array | None = None,
    ) -> None:
        """The hidden truth of a launch: nominal work, noise, the node's slowdown and the
        median node's (same profile, same instant, no co-located tasks); appended to ``rec``
        (a streaming attempt's launch record) when given."""
        cluster = self.cluster
        if cluster.ideal:
            med = 1.0
        else:
            pid = task.job.pids[task.stage]
            key = (pid, int(now // cluster.dt))
            cached = self._median_cache.get(key)
            if cached is None:
                if len(self._median_cache) > 65536:
                    self._median_cache.clear()
                cached = self._median_cache[key] = float(
                    np.median(1.0 / cluster.step_rates(pid, key[1]))
                )
            med = cached
        (self._truth if rec is None else rec).extend((task.work * mult, mult, 1.0 / r_now, med))


#: the deferral's due time the compiled re-solve inlines (a replaced one sends it to Python)
_BASE_DUE = AttemptPhysics._due
