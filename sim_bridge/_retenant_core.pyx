# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A node's co-tenants re-solved in C (optional extension, built by pip install).

When a tenant joins or leaves a node, each of the others advances to the clock under its old
co-located demand and its end is re-solved, deferred, under its new one
(``AttemptPhysics._retenant``). On Alibaba 2017's nodes of 176 slots that loop was about
half of a replay's CPU in the interpreter (py-spy, the first hour without speculation): a
dozen attribute reads and writes a tenant, a dictionary of the walks made keyed by tuples,
and the deferral's arithmetic. :func:`retenant` is the same loop -- the same branches, the
same IEEE operations in the same order (no fused multiply-add: ``-ffp-contract=off``), the
same calls for what it does not do itself -- on the attempts' C fields
(``sim_bridge._attempt_core.Attempt``) and their tasks' and jobs' slots (:func:`set_types`,
called on ``sim_bridge._jobs``' classes at import).
``AttemptPhysics._retenant_py`` is the reference it is tested against
(``tests/test_tenancy_fast_paths.py``; ``tests/test_no_compiler.py`` runs without it).
"""

from cpython.dict cimport PyDict_GetItemWithError
from cpython.object cimport PyObject
from libc.math cimport NAN

from sim_bridge._attempt_core cimport Attempt as CAttempt
from sim_bridge._attempt_core cimport RateMemo
from sim_bridge._cfloat cimport py_floordiv
from sim_bridge._prefetch cimport prefetch
from sim_bridge._slots cimport (
    _float_exact,
    _float_value,
    _list_item,
    _list_size,
    _tuple_item,
    _tuple_size,
    slot_offsets,
    slot_ptr,
)

cdef Py_ssize_t _t_job, _t_stage, _j_pids
cdef object _att_type = None
cdef object _task_type = None
cdef object _job_type = None

# walks remembered in one call (``_retenant``'s ``walked``; more distinct ones walk again,
# which gives the same floats)
cdef enum:
    N_WALKED = 32


def set_types(att_cls, task_cls, job_cls):
    """Read and write the fields of ``att_cls``, ``task_cls`` and ``job_cls`` instances
    (``sim_bridge._jobs``' ``Attempt``, ``Task`` and ``Job``): the attempts' C fields (the
    class must be ``sim_bridge._attempt_core.Attempt``), the others' slots. Returns whether
    they are; :func:`retenant` refuses (returns False) otherwise, and on instances of other
    types."""
    global _att_type, _task_type, _job_type, _t_job, _t_stage, _j_pids
    _att_type = _task_type = _job_type = None
    t = slot_offsets(task_cls, ("job", "stage"))
    j = slot_offsets(job_cls, ("pids",))
    if att_cls is not CAttempt or t is None or j is None:
        return False
    _t_job, _t_stage = t
    _j_pids = j[0]
    _att_type, _task_type, _job_type = att_cls, task_cls, job_cls
    return True


from sim_bridge._jobs import Attempt as _Attempt  # imports only _states and NumPy
from sim_bridge._jobs import Job as _Job
from sim_bridge._jobs import Task as _Task

set_types(_Attempt, _Task, _Job)


cdef inline object _get(object o, Py_ssize_t off, str name):
    """A slot's object (its name's AttributeError when unset, as Python gives)."""
    cdef PyObject* p = slot_ptr(o, off)
    if p is NULL:
        return getattr(o, name)
    return <object>p


cdef inline double _item_d(object seq, Py_ssize_t i) except? -1.0:
    """``float(seq[i])`` for a tuple or list (read in place when it is a float)."""
    cdef PyObject* p = NULL
    if type(seq) is tuple and i < _tuple_size(seq):
        p = _tuple_item(seq, i)
    elif type(seq) is list and i < _list_size(seq):
        p = _list_item(seq, i)
    if p is not NULL and _float_exact(p):
        return _float_value(p)
    return <double>seq[i]


cdef inline bint _any(object demand) except -1:
    """``any(demand)`` (NaN counts as true, as in Python)."""
    cdef object x
    if type(demand) is tuple:
        for x in <tuple>demand:
            if x:
                return True
        return False
    return any(demand)




#: how many co-tenants ahead of the one re-solved :func:`_ahead` asks for
DEF AHEAD = 3


cdef inline void _ahead(CAttempt att) noexcept:
    """Ask the CPU for the lines the re-solve of ``att`` reads first: the rest of the
    attempt's C fields past the line ``_all_typed`` read, its demand and its rate memo. Up
    to 175 co-tenants are re-solved at an Alibaba departure, each a chain of loads from
    outside the caches, and their loads are independent. A hint only: nothing is written.
    (When the attempts' numbers were Python objects, hints for them made Alibaba 2017's
    first 0.6 h on 1,300 x 176 without speculation 0.97x the loop CPU.)"""
    cdef char* b = <char*><PyObject*>att
    prefetch(b + 64)
    prefetch(b + 128)
    prefetch(b + 192)
    prefetch(<PyObject*>att._dem)
    prefetch(<PyObject*>att._step_rate)


cdef bint _all_typed(list atts) except -1:
    """Whether every attempt of ``atts`` is a ``CAttempt`` (with :func:`set_types` done) and
    holds its profile id, or else its task and its job are of the slotted types (the id is
    read from them)."""
    cdef object att, task
    for att in atts:
        if type(att) is not _att_type:
            return False
        if (<CAttempt>att)._pid is not None:
            continue
        task = (<CAttempt>att).task
        if type(task) is not _task_type or type(_get(task, _t_job, "job")) is not _job_type:
            return False
    return True


cdef inline object _pid_of(CAttempt att):
    """The attempt ``att``'s profile id: its ``_pid``, else
    ``att.task.job.pids[att.task.stage]`` (an attempt built by hand)."""
    if att._pid is not None:
        return att._pid
    task = att.task
    return _get(_get(task, _t_job, "job"), _j_pids, "pids")[_get(task, _t_stage, "stage")]


cdef inline void _set_memo(object memo, long long step, object demand, double rate) except *:
    """``memo[:] = (step, demand, rate)`` for a ``RateMemo`` (in its C fields) or a list."""
    cdef RateMemo m
    if type(memo) is RateMemo:
        m = <RateMemo>memo
        m.step = step
        m.demand = demand
        m.rate = rate
    else:
        memo[0] = step
        memo[2] = rate
        memo[1] = demand


cdef inline void _get_memo(object memo, long long* step, double* rate) except *:
    """``memo[0]`` and ``memo[2]`` of a ``RateMemo`` or a list, into ``step`` and ``rate``."""
    if type(memo) is RateMemo:
        step[0] = (<RateMemo>memo).step
        rate[0] = (<RateMemo>memo).rate
    else:
        step[0] = memo[0]
        rate[0] = memo[2]


cdef struct Walk:
    long long pid
    double t0
    double d[4]
    double work
    long long m_step  # the memo's step and rate after the walk
    double m_rate


def retenant(
    object sim,
    list atts,
    object now_obj,
    list dems,
    object cl,
    object trates,
    list speed,
    object push,
    double dt,
    long long chunk_min,
    bint share,
    double lower,
    long long ev_solve,
):
    """``AttemptPhysics._retenant_py``'s loop over ``atts`` and their new demands ``dems``
    (one each; ``now_obj`` the clock) for the cluster ``cl``, its ``trates`` and the nodes'
    ``speed``; ``push`` is the heap's, ``chunk_min`` the longest walk done inline, ``share``
    whether co-tenants share walks, ``lower`` and ``ev_solve`` the deferral's factor and
    event kind. ``sim._seq`` is counted here as the Python loop counts it, and written back
    before each re-solve it leaves to ``sim._resolve`` (read again after) and at the end.
    Returns False, having changed nothing, when an attempt is not a ``CAttempt`` (or holds
    no profile id and its task or job is not of the slotted types), or the lists' lengths
    differ."""
    cdef Py_ssize_t n = len(atts), i, w, n_walked = 0
    cdef CAttempt att
    cdef object dem, pid_obj, old, memo
    cdef double now = now_obj
    cdef double seg_t, t0, base, work, done, left, end, pt, due, prev_t, prev_left
    cdef bint from_prog, keyable, had_solve, in_resolve = False
    cdef double od[4]  # a keyable demand's four terms
    cdef long long k1, pid, seq, horizon
    cdef Walk walks[N_WALKED]
    cdef Walk* hit
    if len(dems) != n or not _all_typed(atts):
        return False
    seq = sim._seq
    horizon = cl._horizon
    try:
        for i in range(n):
            if i + AHEAD < n:
                _ahead(<CAttempt>atts[i + AHEAD])
            att = <CAttempt>atts[i]
            dem = dems[i]
            pid_obj = _pid_of(att)
            seg_t = att._seg_t
            if now > seg_t:  # _advance: _work_done(att, now) booked
                old = att._dem
                if old is None:
                    done = att._seg_done + <double>cl.cum_at(att.node, pid_obj, now_obj) - att._c0
                    horizon = cl._horizon
                else:
                    memo = att._step_rate
                    if memo is None:
                        memo = RateMemo()
                        att._step_rate = memo
                    from_prog = False
                    if att.has_prog:
                        pt = att.prog_t
                        from_prog = seg_t <= pt <= now
                    if from_prog:  # from the last read in this segment
                        t0 = pt
                        base = att.prog_done
                    else:
                        t0 = seg_t
                        base = att._seg_done
                    k1 = <long long>py_floordiv(now, dt)
                    if (
                        k1 < horizon
                        and k1 - <long long>py_floordiv(t0, dt) <= chunk_min
                        and _any(old)
                    ):
                        hit = NULL
                        pid = pid_obj
                        # a walk another tenant may share: its key (pid, t0, the demand's terms)
                        keyable = (
                            share and t0 < now and type(old) is tuple and _tuple_size(old) == 4
                        )
                        if keyable:
                            for w in range(4):
                                od[w] = _item_d(old, w)
                            for w in range(n_walked):
                                if (
                                    walks[w].pid == pid
                                    and walks[w].t0 == t0
                                    and walks[w].d[0] == od[0]
                                    and walks[w].d[1] == od[1]
                                    and walks[w].d[2] == od[2]
                                    and walks[w].d[3] == od[3]
                                ):
                                    hit = &walks[w]
                                    break
                        if hit is not NULL:  # another tenant's walk, the same floats
                            work = hit.work
                            _set_memo(memo, hit.m_step, old, hit.m_rate)
                        else:
                            walk = trates.work_steps(att.node, pid, t0, now, 0.0, old, memo)
                            work = walk[0]
                            if <double>walk[1] < now:
                                work = cl.work_with(att.node, pid_obj, t0, now, old, memo)
                                horizon = cl._horizon
                            elif keyable and n_walked < N_WALKED:
                                # a whole walk: the memo holds its last step
                                walks[n_walked].pid = pid
                                walks[n_walked].t0 = t0
                                for w in range(4):
                                    walks[n_walked].d[w] = od[w]
                                walks[n_walked].work = work
                                _get_memo(memo, &walks[n_walked].m_step, &walks[n_walked].m_rate)
                                n_walked += 1
                    else:
                        work = cl.work_with(att.node, pid_obj, t0, now, old, memo)
                        horizon = cl._horizon
                    done = base + work
                att._seg_done = done
                att._seg_t = now
                att.has_prog = False
            if dem is None or not _any(dem):
                sim._seq = seq
                in_resolve = True
                sim._resolve(att, now_obj, dem)
                in_resolve = False
                seq = sim._seq
                horizon = cl._horizon
                continue
            left = att._work - att._seg_done
            if left < 0.0:
                left = 0.0
            att.has_prog = False
            att._ckpt = None
            # _resolve under demand: _defer, the heap economy
            had_solve = att.has_solve
            prev_t = att.solve_t
            prev_left = att.solve_left
            att._dem = dem
            att._end = NAN
            end = now + left * _item_d(speed, att.node) * lower
            seq += 1
            att.solve_seq = seq
            att.solve_t = now
            att.solve_left = left
            att.has_solve = True
            if had_solve:
                due = prev_t + prev_left * _item_d(speed, att.node) * lower
                if end >= due:
                    continue
            push(end, seq, ev_solve, att)
    finally:
        if not in_resolve:  # (a re-solve that raised has left its own count)
            sim._seq = seq
    return True


def owns(list atts, dict known, object demand):
    """``AttemptPhysics._owns``: each attempt's own demand, ``known[pid]`` for its profile
    ``pid = profile_of(a)`` (``sim_bridge._jobs``), else ``demand(pid)``, in order; None,
    having called nothing, when an attempt is not a ``CAttempt`` (or holds no profile id and
    its task or job is not of the slotted types)."""
    cdef Py_ssize_t i, n = len(atts)
    cdef list out = [None] * n
    cdef object pid
    cdef PyObject* d
    if not _all_typed(atts):
        return None
    for i in range(n):
        pid = _pid_of(<CAttempt>atts[i])
        d = PyDict_GetItemWithError(known, pid)  # (an error raised: ``except? NULL``)
        if d is NULL:
            out[i] = demand(pid)
        else:
            out[i] = <object>d
    return out


def add_each(list atts, object own):
    """``[_add(a._dem, own) for a in atts]`` (``sim_bridge.world._attempts._add``: ``own``
    where an attempt has no demand, else the sums term by term, as Python adds them; one
    tuple for a run of attempts holding one tuple, :mod:`sim_bridge.world._shared_demands`);
    None, having made nothing, when an attempt is not a ``CAttempt`` or ``own`` is not a tuple
    of four floats."""
    cdef Py_ssize_t i, n = len(atts)
    cdef list out = [None] * n
    cdef object att, dem
    cdef double o0, o1, o2, o3
    if type(own) is not tuple or _tuple_size(own) != 4:
        return None
    for i in range(4):
        if not _float_exact(_tuple_item(own, i)):
            return None
    o0 = _float_value(_tuple_item(own, 0))
    o1 = _float_value(_tuple_item(own, 1))
    o2 = _float_value(_tuple_item(own, 2))
    o3 = _float_value(_tuple_item(own, 3))
    for i in range(n):
        if type(atts[i]) is not _att_type:
            return None
    cdef object last = None, last_out = None  # the last demand added to, and its sum
    for i in range(n):
        att = atts[i]
        dem = (<CAttempt>att)._dem
        if dem is None:
            out[i] = own
        elif dem is last:  # co-tenants holding one (shared) tuple: the same sum, made once
            out[i] = last_out
        elif (
            type(dem) is tuple
            and _tuple_size(dem) == 4
            and _float_exact(_tuple_item(dem, 0))
            and _float_exact(_tuple_item(dem, 1))
            and _float_exact(_tuple_item(dem, 2))
            and _float_exact(_tuple_item(dem, 3))
        ):
            out[i] = last_out = (
                _float_value(_tuple_item(dem, 0)) + o0,
                _float_value(_tuple_item(dem, 1)) + o1,
                _float_value(_tuple_item(dem, 2)) + o2,
                _float_value(_tuple_item(dem, 3)) + o3,
            )
            last = dem
        else:
            out[i] = (dem[0] + own[0], dem[1] + own[1], dem[2] + own[2], dem[3] + own[3])
    return out
