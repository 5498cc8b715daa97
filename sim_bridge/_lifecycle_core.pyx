# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The attempt lifecycle's compiled parts (optional extension, built by pip install).

:func:`close` is ``sim_bridge._sim_lifecycle.AttemptLifecycle._close_py`` and
:func:`solve_launch` is ``sim_bridge.world.AttemptPhysics._solve_launch_py``, the references
that run without a C compiler, for the compiled :class:`~sim_bridge._attempt_core.Attempt`:
the same operations in the same order on the same objects, with the attempt's fields read
and written in place, the node's load averages decayed in C (``exp`` of the C library, which
``math.exp`` calls: the same floats), a streamed run's shedding of a finished attempt
(``sim_bridge._jobs.shed_closed``) and the co-tenants' re-solve called without the Python
frames between. Any other attempt, and a launch outside the common path (a duration
distribution, noise that depends on the node, recorded truth), goes to the reference.
``tests/test_lifecycle_core.py`` holds the two to the same fields after every close and
launch, and to the same tables.
"""

from array import array

from libc.math cimport exp, NAN

from sim_bridge._attempt_core cimport Attempt

import sim_bridge._jobs as _jobs
import sim_bridge._task_list as _task_list
import sim_bridge.world._attempts as _phys
from sim_bridge._states import A_FINISHED, A_KILLED, DONE, EV_SOLVE
from sim_bridge.world import _shared_demands

cdef double _INV_TAU1 = 1.0 / 60.0
cdef double _INV_TAU5 = 1.0 / 300.0
cdef double _INV_TAU15 = 1.0 / 900.0
cdef long long _A_FINISHED = A_FINISHED
cdef long long _A_KILLED = A_KILLED
cdef object _DONE = DONE
cdef object _SHED = _jobs.shed_closed
cdef object _EV_SOLVE = EV_SOLVE
# the physics' methods the fast path of the co-tenants' re-solve stands for (a subclass that
# replaces one goes through the methods)
cdef object _TENANTS_LEFT = _phys.AttemptPhysics._tenants_left
cdef object _RETENANT = _phys.AttemptPhysics._retenant
cdef object _OWNS = _phys.AttemptPhysics._owns
cdef object _DUE = _phys.AttemptPhysics._due
cdef object _ADVANCE = _phys.AttemptPhysics._advance
cdef object _DEMAND = _phys.AttemptPhysics._demand
cdef object _DEFER = _phys.AttemptPhysics._defer

#: the references, for attempts of any other class, and the close's module, whose switch
#: ``COMPACT_RUNNING`` is read at each close (set by ``sim_bridge._sim_lifecycle``)
cdef object _reference = None
cdef object _launch_reference = _phys.AttemptPhysics._solve_launch_py
cdef object _lifecycle = None
cdef object _NO_DEMAND = (0.0, 0.0, 0.0, 0.0)
cdef double _LOWER = _phys._LOWER


def set_reference(object close_py, object lifecycle):
    """Give the Python close that attempts of another class go to, and its module."""
    global _reference, _lifecycle
    _reference = close_py
    _lifecycle = lifecycle


cdef inline void _decay(list load, list load_t, Py_ssize_t node, long long n, double now):
    # sim_bridge.world._attempts.decay_loads, the same float operations
    cdef double dt = now - <double>load_t[node]
    cdef double dn = <double>n
    cdef list l1, l5, l15
    if dt > 0.0:
        l1 = <list>load[0]
        l5 = <list>load[1]
        l15 = <list>load[2]
        l1[node] = dn + (<double>l1[node] - dn) * exp(-dt * _INV_TAU1)
        l5[node] = dn + (<double>l5[node] - dn) * exp(-dt * _INV_TAU5)
        l15[node] = dn + (<double>l15[node] - dn) * exp(-dt * _INV_TAU15)
        load_t[node] = now


cdef bint _fast_tenants(object sim):
    # whether the co-tenants' re-solve takes AttemptPhysics' fast path (FAST_TENANTS, _owns
    # and _retenant in C, deferred solves) with none of the methods it inlines replaced
    cdef object cls = type(sim)
    return bool(
        _phys.FAST_TENANTS
        and _phys.RETENANT_IN_C
        and _phys.DEFER_SOLVES
        and _phys._retenant_c is not None
        and _phys._owns_c is not None
        and cls._tenants_left is _TENANTS_LEFT
        and cls._retenant is _RETENANT
        and cls._owns is _OWNS
        and cls._due is _DUE
    )


cdef void _retenant(object sim, object cl, object trates, list others, object now_obj, list dems):
    # AttemptPhysics._retenant(others, now, dems) past its checks (_fast_tenants, a cluster
    # not ideal, its step rates built)
    if _shared_demands.SHARE_DEMANDS:
        _shared_demands.share_demands(dems, sim._dem_pool)
    if not _phys._retenant_c(
        sim, others, now_obj, dems, cl, trates, sim._speed, sim._heap.push, cl.dt,
        _phys._cluster._CHUNK_MIN, _phys.SHARE_WALKS, _phys._LOWER, _EV_SOLVE,
    ):
        sim._retenant_py(others, now_obj, dems)


cdef bint _tenants_left(object sim, object now_obj, dict live):
    # AttemptPhysics._tenants_left(node, now) where the node's tenants are ``live``, along
    # its fast path, the same calls in the same order; False, having called nothing, where
    # that path does not apply
    cdef object cl, trates, owns
    cdef list others
    if not _fast_tenants(sim):
        return False
    cl = sim.cluster
    trates = cl._trates
    if cl.ideal or trates is None:
        return False
    others = list(live.values())
    owns = _phys._owns_c(others, sim._pid_demand, sim._demand)
    if owns is None:  # (an attempt it cannot read: it called nothing)
        return False
    _retenant(sim, cl, trates, others, now_obj, _phys.others_demand(owns))
    return True


cdef bint _shed(Attempt att):
    # sim_bridge._jobs.shed_closed for an attempt whose launch record is an offset already
    cdef object task, atts
    att._step_rate = None
    if att.state != _A_FINISHED:
        return False
    att._dem = None
    att.has_prog = False
    att._ckpt = None
    att._work = 0.0
    att._seg_done = 0.0
    att._c0 = 0.0
    if att.end_time is not None:
        att._end = att.end_time
    task = att.task
    task._u0 = 0.0
    atts = task.attempts
    if (
        _jobs.ONE_AS_ROW
        and len(atts) == 1
        and att.start_fraction == 0.0
        and task.first_launch == att.launch_time
        and type(att._rec) is int
    ):
        _jobs.task_to_row(task, att.uid, att.node, att._rec, _jobs.DoneOne)
        return True
    task.attempts = atts[:]
    return False


def close(object sim, object attempt, long long state):
    """Close ``attempt`` (finished or killed, ``state``) on ``sim``: see the module
    docstring."""
    if type(attempt) is not Attempt:
        _reference(sim, attempt, state)
        return
    cdef Attempt att = <Attempt>attempt
    cdef Py_ssize_t node = att.node
    cdef object now_obj = sim.now
    cdef double now = now_obj
    cdef list node_running = sim._node_running
    cdef long long n = node_running[node]
    cdef object task, job, running, fair, free, c, uid, shed, keep
    cdef dict live
    cdef long long rdel
    cdef bint rows
    _decay(sim._load, sim._load_t, node, n, now)
    att.state = state
    att.end_time = now_obj
    task = att.task
    uid = att.uid
    task.n_live -= 1
    job = task.job
    running = job.running
    del running[uid]
    fair = sim._fair_order
    if fair is not None:
        fair.mark(job)
    rdel = job._rdel + 1
    if rdel > 32 and rdel > 2 * len(running) and _lifecycle.COMPACT_RUNNING:
        job.running = dict(running)
        rdel = 0
    job._rdel = rdel
    live = (<list>sim._node_live)[node]
    del live[uid]
    keep = sim.keep_history
    if sim._tenancy:
        if state != _A_KILLED or att._dem is not None:
            if (
                state == _A_FINISHED
                and not keep
                and _lifecycle.shed_closed is _SHED
                and type(att._rec) is int
                and type(sim)._advance is _ADVANCE
            ):
                # a streamed run's finished attempt: the shedding below zeroes what
                # _advance would book (its work done, its last read and rate memo), so
                # only its segment's start is moved, as _advance moves it
                if now > att._seg_t:
                    att._seg_t = now
                    att.has_prog = False
            else:
                sim._advance(att, now_obj)
        if live and not _tenants_left(sim, now_obj, live):
            sim._tenants_left(node, now_obj)
    if state == _A_KILLED and sim._hold_live and att._work > 0.0:
        att.prog_done = sim._work_done(att, now_obj)
        att.prog_t = now
        att.has_prog = True
    node_running[node] = n - 1
    sim._n_running -= 1
    if att.index:
        sim._n_copies -= 1
    free = sim._free
    c = free.get(node)
    free[node] = 1 if c is None else c + 1
    sim._n_free += 1
    if not keep:
        shed = _lifecycle.shed_closed  # (looked up there: the tests replace it)
        if shed is _SHED and type(att._rec) is int:
            rows = _shed(att)
        else:
            rows = shed(att)
        if not rows and not task.n_live and (state == _A_FINISHED or task.state == _DONE):
            rows = _lifecycle.pack_closed(task)
        if rows and _task_list.DROP_DONE:
            sim._drop_q.new.append(task)


cdef object _sum_demand(list owns):
    # sim_bridge.world._attempts.sum_demand: the same additions in the same order
    cdef double c = 0.0, m = 0.0, d = 0.0, n = 0.0
    cdef object own
    for own in owns:
        c += <double>own[0]
        m += <double>own[1]
        d += <double>own[2]
        n += <double>own[3]
    if c == 0.0 and m == 0.0 and d == 0.0 and n == 0.0:
        return None
    return (c, m, d, n)


def solve_launch(
    object sim,
    object attempt,
    object task,
    object job,
    object node_obj,
    object now_obj,
    object sf_obj,
    object running_before,
):
    """``AttemptPhysics._solve_launch``: the physics of a launch (see the module
    docstring); returns the time of its heap event."""
    cdef object cls = type(sim)
    if (
        type(attempt) is not Attempt
        or sim.duration_dist is not None
        or sim.record_truth
        or (sim.noise and sim.tail_pressure)
        or not _phys.FAST_TENANTS
        or not _phys.DEFER_SOLVES
        or cls._demand is not _DEMAND
        or cls._owns is not _OWNS
        or cls._retenant is not _RETENANT
        or cls._defer is not _DEFER
    ):
        return _launch_reference(sim, attempt, task, job, node_obj, now_obj, sf_obj, running_before)
    cdef Attempt att = <Attempt>attempt
    cdef Py_ssize_t node = node_obj
    cdef double now = now_obj
    cdef double sf = sf_obj
    cdef long long index = att.index
    cdef list load = sim._load
    cdef list l1, l5, l15
    cdef object keep = sim.keep_history
    cdef object rec = None, cluster, pid, ideal, k0 = None, r0 = None, c0 = None
    cdef object mult, dem, live, own, others, one, end, trates, dems
    cdef double work
    _decay(load, sim._load_t, node, running_before, now)
    l1 = <list>load[0]
    l5 = <list>load[1]
    l15 = <list>load[2]
    if keep:
        sim._rstates.extend((running_before, l1[node], l5[node], l15[node]))
    else:
        rec = job._recs
        if rec is None:
            rec = job._recs = array("d")
        att._rec = job._nspill + len(rec)
        rec.extend((running_before, l1[node], l5[node], l15[node]))
    cluster = sim.cluster
    pid = job.pids[task.stage]
    att._pid = pid
    ideal = cluster.ideal
    if not ideal:
        k0, r0, c0 = cluster.launch_point(node_obj, pid, now_obj)
    if sim.noise:
        if index == 0:
            # (world._attempts's read_noise, looked up there as the reference does: the
            # tests replace it)
            mult = job._m[task.index] if keep else _phys.read_noise(job, task.index)
        else:
            alpha = _phys.noise_alpha(job.alpha, sim._tail[node], 0.0, 0.0)
            mult = _phys.residual_noise_one(job.rng.random(), alpha)
    else:
        mult = 1.0
    work = task.work * mult * (1.0 - sf)
    att._work = work
    dem = None
    if sim._tenancy:
        live = (<list>sim._node_live)[node]
        if live:
            own = sim._demand(pid)
            others = list(live.values())
            dem = _sum_demand(sim._owns(others))
            if dem is not None and _shared_demands.SHARE_DEMANDS:
                one = [dem]
                _shared_demands.share_demands(one, sim._dem_pool)
                dem = one[0]
            dems = _phys._add_each(others, own)
            trates = cluster._trates
            if _fast_tenants(sim) and not ideal and trates is not None:
                _retenant(sim, cluster, trates, others, now_obj, dems)
            else:
                sim._retenant(others, now_obj, dems)
        if keep:
            sim._dstates.extend(dem or _NO_DEMAND)
        else:
            rec.extend(dem or _NO_DEMAND)
    if sim._launch_levels:
        rec.extend(cluster.levels_now(node_obj, now_obj))
    if ideal:
        att._c0 = now
        att._end = now + work
        end = att._end
    elif dem is None:
        att._c0 = c0
        if sim._bounded:
            end = sim._settle(
                att, cluster.end_from(node_obj, pid, now_obj, k0, r0, c0, work, within=True)
            )
        else:
            end = cluster.end_from(node_obj, pid, now_obj, k0, r0, c0, work)
            att._end = end
    else:
        att._dem = dem
        # _defer
        att.solve_seq = -1
        att.solve_t = now
        att.solve_left = work
        att.has_solve = True
        att._end = NAN
        end = now + work * <double>(<list>sim._speed)[node] * _LOWER
    return end
