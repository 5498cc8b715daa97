# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A speculation scan's loops in C (optional extension, built by pip install).

A speculation scan reads the progress of every live attempt every few seconds: on an
FB-2010 day at 33,000 nodes, that loop took over a quarter of a LATE run's CPU in the
interpreter. :func:`progress_list` runs ``SimView.progress_many``'s loop -- the same
branches, the same IEEE operations in the same order (no fused multiply-add:
``-ffp-contract=off``), the same updates of each attempt's last read -- on the attempts'
fields, read straight from their slots (:func:`set_attempt_type`, called on
``sim_bridge._jobs.Attempt`` at import). Reads it cannot do here
(an attempt not running, a long or unreadable walk under co-located demand) call back into
the Python engine, as the Python loop does. :func:`late_batch` is LATE's first pass over the
jobs alive. ``SimView._progress_list_py`` and ``LATE._pass_one_py`` are the references they
are tested against (``tests/test_progress_core.py``).
"""

from cpython.object cimport PyObject

from sim_bridge._cfloat cimport py_floordiv


cdef extern from "structmember.h":
    ctypedef struct PyMemberDef:
        Py_ssize_t offset


cdef extern from "Python.h":
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    bint _float_exact "PyFloat_CheckExact"(PyObject* o)
    double _float_value "PyFloat_AS_DOUBLE"(PyObject* o)


# the Attempt fields the loop reads, and their offsets in its instances (its __slots__)
cdef enum:
    F_STATE, F_WORK, F_DEM, F_PROG, F_STEP_RATE, F_SEG_T, F_SF, F_LAUNCH, F_END, F_NODE
    F_SEG_DONE, F_C0, F_TASK, N_FIELDS

_NAMES = ("state", "_work", "_dem", "_prog", "_step_rate", "_seg_t", "start_fraction",
          "launch_time", "_end", "node", "_seg_done", "_c0", "task")
cdef Py_ssize_t _off[N_FIELDS]
cdef object _slotted = None


def set_attempt_type(cls):
    """Read the fields of ``cls`` instances (``sim_bridge._jobs.Attempt``) straight from
    their slots: ``instance + offset``, where CPython's member descriptor of each slot says.
    Python 3.11 reads a slot in a specialised instruction; a generic attribute read from C is
    slower than that, and the loop makes a dozen a read. Instances of other types (a
    subclass), or a class whose fields are not all plain slots, are read by name."""
    global _slotted
    _slotted = None
    offsets = []
    for name in _NAMES:
        d = getattr(cls, name, None)
        if type(d).__name__ != "member_descriptor":
            return False
        offsets.append((<PyMemberDescrObject*>(<PyObject*>d)).d_member.offset)
    for i, off in enumerate(offsets):
        _off[i] = off
    _slotted = cls
    return True


from sim_bridge._jobs import Attempt as _Attempt  # imports only _states and NumPy

set_attempt_type(_Attempt)


cdef inline object _get(object a, int f, bint fast):
    cdef PyObject* p
    if fast:
        p = (<PyObject**>((<char*><PyObject*>a) + _off[f]))[0]
        if p is not NULL:
            return <object>p
    return getattr(a, _NAMES[f])  # unset: the AttributeError Python gives


cdef inline double _getd(object a, int f, bint fast) except? -1.0:
    cdef PyObject* p
    if fast:
        p = (<PyObject**>((<char*><PyObject*>a) + _off[f]))[0]
        if p is not NULL and _float_exact(p):
            return _float_value(p)
    return <double>_get(a, f, fast)


cdef inline bint _any(object demand):
    """``any(demand)`` for a tuple of floats (NaN counts as true, as in Python)."""
    cdef object x
    for x in demand:
        if <double>x != 0.0:
            return True
    return False


def progress_list(
    list attempts,
    object now_obj,
    object progress_one,
    object work_done,
    object cluster,
    dict cache,
    bint inline,
    double dt,
    object k_now_obj,
    object trates=None,
    long long chunk_min=0,
):
    """Progress of each of ``attempts`` at ``now_obj`` (a list of floats): what
    ``SimView._progress_list_py`` returns, computed with the same operations.

    ``progress_one`` reads an attempt that is not running (``SimView.progress``),
    ``work_done`` an attempt's work done under demand (``Simulator._work_done``) where this
    loop does not; ``cache`` holds the clock's ``cum_at_nodes`` per profile (the view's, for
    this instant); ``inline`` whether the cluster is not ideal and the clock's step
    ``k_now_obj`` is drawn.

    A read under demand outside the memoised step (a new step began since the attempt's last
    read, or it was never read) is ``Simulator._work_done``: with ``trates`` (the cluster's
    ``TenantRates``) it is walked here as ``Cluster.work_with`` walks it, through
    ``trates.work_steps`` from the same start with the same memo, when the walk spans at most
    ``chunk_min`` steps; any other read, or a walk that stopped short of a step not drawn,
    goes to ``work_done``, which redoes it from its start (the walks only read the paths,
    and the memo changes no value).
    """
    cdef double now = now_obj
    cdef double k_now = <double>(<long long>k_now_obj)
    cdef list out = []
    cdef object a, dem, prog, memo, task, pid, last_pid = None, cum, walk
    cdef double[:] cv
    cdef double work, span, frac, t0, done, sf, launch, seen_t0 = 0.0, seen_gap = 0.0
    cdef double base, total, seg_t
    cdef bint have_seen = False, seen_ok = False, have_cv = False, engine, walked, fast
    cdef bint walk_here = inline and trates is not None
    for a in attempts:
        fast = type(a) is _slotted
        if <long>_get(a, F_STATE, fast) != 0:  # not running (A_RUNNING is 0)
            out.append(progress_one(a))
            continue
        work = _getd(a, F_WORK, fast)
        dem = _get(a, F_DEM, fast)
        if work <= 0.0:  # duration override: linear progress
            launch = _getd(a, F_LAUNCH, fast)
            span = _getd(a, F_END, fast) - launch
            if span <= 0:
                frac = 1.0
            else:
                frac = (now - launch) / span
        elif dem is not None:
            prog = _get(a, F_PROG, fast)
            memo = _get(a, F_STEP_RATE, fast)
            engine = True
            if inline and prog is not None and memo is not None and memo[0] == k_now_obj:
                t0 = prog[0]
                if not have_seen or t0 != seen_t0:
                    have_seen = True
                    seen_t0 = t0
                    seen_ok = t0 <= now and py_floordiv(t0, dt) == k_now
                    seen_gap = now - t0
                if seen_ok and memo[1] is dem and _getd(a, F_SEG_T, fast) <= t0:
                    # Cluster.work_with's loop for one step: 0.0 + rate * (t1 - t0)
                    if t0 < now:
                        done = <double>prog[1] + (0.0 + <double>memo[2] * seen_gap)
                    else:
                        done = <double>prog[1] + 0.0
                    a._prog = (now_obj, done)
                    frac = done / work
                    engine = False
            if engine and walk_here and _any(dem):
                # Simulator._work_done: from the last read in this segment, else its start
                seg_t = _getd(a, F_SEG_T, fast)
                if prog is not None and seg_t <= <double>prog[0] <= now:
                    t0 = prog[0]
                    base = prog[1]
                else:
                    t0 = seg_t
                    base = _getd(a, F_SEG_DONE, fast)
                if k_now - py_floordiv(t0, dt) <= chunk_min:  # work_with's short walk
                    if memo is None:  # _work_under's new memo
                        memo = [-1, None, 0.0]
                        a._step_rate = memo
                    total = 0.0
                    walked = True
                    if t0 < now:
                        task = _get(a, F_TASK, fast)
                        walk = trates.work_steps(
                            _get(a, F_NODE, fast), task.job.pids[task.stage], t0, now, 0.0,
                            dem, memo,
                        )
                        total = walk[0]
                        walked = <double>walk[1] >= now  # else it stopped short
                    if walked:
                        done = base + total
                        a._prog = (now_obj, done)
                        frac = done / work
                        engine = False
            if engine:
                frac = <double>work_done(a, now_obj) / work
        else:
            task = _get(a, F_TASK, fast)
            pid = task.job.pids[task.stage]
            if not have_cv or not (pid is last_pid or pid == last_pid):
                cum = cache.get(pid)
                if cum is None:
                    cum = cache[pid] = cluster.cum_at_nodes(pid, now_obj)
                cv = cum
                last_pid = pid
                have_cv = True
            frac = (
                _getd(a, F_SEG_DONE, fast) + cv[<Py_ssize_t>_get(a, F_NODE, fast)]
                - _getd(a, F_C0, fast)
            ) / work
        if frac < 0.0:
            frac = 0.0
        elif frac > 1.0:
            frac = 1.0
        sf = _getd(a, F_SF, fast)
        out.append(sf + (1.0 - sf) * frac)
    return out


def late_batch(object jobs, double now, double min_el, dict durs, object empty):
    """LATE's first pass over the jobs alive (``LATE._ranked``), in one sweep of their live
    attempts: the jobs that may yield a candidate -- an attempt of the runnable stage, alone
    on its task, running for ``min_el`` -- with something to compare it with (their stage's
    finished durations ``durs.get((job.uid, job.stage), empty)``).

    Returns ``(batch, sizes, firsts, stats, launch, start)``: those jobs' live attempts of
    the runnable stage end to end, per job their count, the index of its first possible
    candidate and its durations, and each attempt's ``launch_time`` and ``start_fraction``
    (lists, in batch order). The same jobs, attempts and order as the Python pass
    (``LATE._pass_one_py``), its reference.
    """
    cdef list batch = [], sizes = [], firsts = [], stats = [], launch = [], start = []
    cdef list live
    cdef dict running
    cdef object job, a, task, stage, d
    cdef Py_ssize_t i, first, n
    cdef bint fast
    for job in jobs:
        running = job.running  # a dict (checked: a TypeError otherwise)
        if not running:
            continue
        stage = job.stage
        live = []
        for a in running.values():
            fast = type(a) is _slotted
            if _get(a, F_TASK, fast).stage == stage:
                live.append(a)
        first = -1
        n = len(live)
        for i in range(n):
            a = live[i]
            fast = type(a) is _slotted
            if now - _getd(a, F_LAUNCH, fast) >= min_el and len(_get(a, F_TASK, fast).live) == 1:
                first = i
                break
        if first < 0:
            continue  # no candidate: the scan would rank nothing
        d = durs.get((job.uid, job.stage), empty)
        if n + len(d) < 2:
            continue  # nothing to compare a lone task with
        sizes.append(n)
        firsts.append(first)
        stats.append(d)
        batch.extend(live)
        for a in live:
            fast = type(a) is _slotted
            launch.append(_get(a, F_LAUNCH, fast))
            start.append(_get(a, F_SF, fast))
    return batch, sizes, firsts, stats, launch, start
