# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A speculation scan's loops in C (optional extension, built by pip install).

A speculation scan reads the progress of every live attempt every few seconds: on an
FB-2010 day at 33,000 nodes, that loop took over a quarter of a LATE run's CPU in the
interpreter. :func:`progress_list` runs ``SimView.progress_many``'s loop -- the same
branches, the same IEEE operations in the same order (no fused multiply-add:
``-ffp-contract=off``), the same updates of each attempt's last read -- on the attempts'
C fields (``sim_bridge._attempt_core.Attempt``; an attempt of another type, a subclass or
the Python reference, is read by name). Reads it cannot do here
(an attempt not running, a long or unreadable walk under co-located demand) call back into
the Python engine, as the Python loop does. :func:`late_scan` is a whole LATE scan over the
jobs alive (each job's cut selected, not sorted, and the candidates ranked in C) and
:func:`mantri_scan` a whole Mantri tick, their progress reads through the same loop;
:func:`late_slow_nodes` is LATE's slow-node quantile. ``SimView._progress_list_py``,
``LATE._ranked_py``, ``LATE._slow_nodes_py`` and ``Mantri._on_tick_py`` are the references
they are tested against (``tests/test_progress_core.py``, ``tests/test_late_scan.py``,
``tests/test_late_cut_selection.py``). Their loops over attempts ask the CPU ahead for what the next
reads will touch (:func:`_ahead`), which the reads would otherwise wait for one by one.
"""

from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.object cimport PyObject
from libc.math cimport INFINITY, isfinite, isinf
from libc.stdlib cimport qsort

import numpy as np

from sim_bridge._attempt_core cimport Attempt as CAttempt
from sim_bridge._attempt_core cimport RateMemo
from sim_bridge._cfloat cimport py_floordiv
from sim_bridge._order_stats cimport (
    Ranked,
    _done_at,
    _next_of,
    _rank_cmp,
    _round_limit,
    _select,
)
from sim_bridge._prefetch cimport prefetch as _prefetch
from sim_bridge._slots cimport (
    _float_exact,
    _float_value,
    _list_item,
    _list_size,
    _long_exact,
    _long_value,
    _tuple_item,
    _tuple_size,
)
from sim_bridge._slots cimport slot_offsets as _slot_offsets


# what :func:`_ahead` reads to know where to ask (sim_bridge._prefetch: the hint itself)
cdef extern from *:
    """
    static inline PyObject* straggler_type_of(PyObject* o) {
        return (PyObject*)Py_TYPE(o);
    }
    static inline PyObject** straggler_items(PyObject* lst) {
        return ((PyListObject*)lst)->ob_item;
    }
    /* the values of the dict d, borrowed, into out (room for PyDict_GET_SIZE(d)): in the
       order iterating its values gives, without touching them (list(d.values()) takes a
       reference to each, a write to every attempt of the job) */
    static inline Py_ssize_t straggler_dict_values(PyObject* d, PyObject** out) {
        Py_ssize_t pos = 0, n = 0;
        PyObject* key;
        PyObject* value;
        while (PyDict_Next(d, &pos, &key, &value)) out[n++] = value;
        return n;
    }
    static inline PyObject** straggler_list_items(PyObject* o) {
        return PyList_CheckExact(o) && PyList_GET_SIZE(o) >= 3 ? ((PyListObject*)o)->ob_item : NULL;
    }
    """
    PyObject* _type_of "straggler_type_of"(PyObject* o) noexcept nogil
    PyObject** _list_items "straggler_list_items"(PyObject* o) noexcept nogil
    PyObject** _items "straggler_items"(object lst) noexcept
    Py_ssize_t _dict_values "straggler_dict_values"(object d, PyObject** out) noexcept


# the Attempt fields the loop reads (by these names when an attempt is not a CAttempt)
cdef enum:
    F_STATE, F_WORK, F_DEM, F_PROG, F_STEP_RATE, F_SEG_T, F_SF, F_LAUNCH, F_END, F_NODE
    F_SEG_DONE, F_C0, F_TASK, F_PID, N_FIELDS

_NAMES = ("state", "_work", "_dem", "_prog", "_step_rate", "_seg_t", "start_fraction",
          "launch_time", "_end", "node", "_seg_done", "_c0", "task", "_pid")
# the attempts read from their C fields: exactly this type (``fast``)
cdef object _typed = CAttempt


# the Task fields the LATE and Mantri scans read, likewise
cdef enum:
    T_N_LIVE, T_UID, T_STAGE, T_ATTEMPTS, N_TASK_FIELDS

_TASK_NAMES = ("n_live", "uid", "stage", "attempts")
cdef Py_ssize_t _toff[N_TASK_FIELDS]
cdef object _task_slotted = None


def set_task_type(cls):
    """Read the fields of ``cls`` instances (``sim_bridge._jobs.Task``) straight from their
    slots: ``instance + offset``, where CPython's member descriptor of each slot says.
    Instances of other types (a subclass), or a class whose fields are not all plain
    slots, are read by name."""
    global _task_slotted
    _task_slotted = None
    offsets = _slot_offsets(cls, _TASK_NAMES)
    if offsets is None:
        return False
    for i, off in enumerate(offsets):
        _toff[i] = off
    _task_slotted = cls
    return True


cdef inline object _tget(object t, int f):
    """Field ``f`` of the task ``t``, from its slot when it is a plain ``Task``."""
    cdef PyObject* p
    if type(t) is _task_slotted:
        p = (<PyObject**>((<char*><PyObject*>t) + _toff[f]))[0]
        if p is not NULL:
            return <object>p
    return getattr(t, _TASK_NAMES[f])  # unset: the AttributeError Python gives


cdef inline bint _alone(object a, bint fast) except -1:
    """Whether the attempt ``a`` runs alone on its task (``a.task.n_live == 1``)."""
    return _tget(_get(a, F_TASK, fast), T_N_LIVE) == 1


# how far ahead of the read of ``live[i]`` :func:`_ahead` asks for each level of what a read
# touches (tuned on a microbenchmark of 150,000 scattered attempts: 12/8/4/2 read them in
# 180 ns each against 450 without hints; 8/5/3/1 and 16/10/5/2 alike, 24/16/8/4 215 ns)
DEF AHEAD_ATTEMPT = 12
DEF AHEAD_FIELDS = 8
DEF AHEAD_ITEMS = 4
DEF AHEAD_MEMO = 2
DEF AHEAD_TASK = 6


cdef bint _hints = True  # set_prefetch: off only to measure what the hints save


def set_prefetch(bint on):
    """Turn :func:`_ahead`'s hints on (the default) or off; returns the previous setting.
    For ``bench/bench_prefetch.py`` and the tests, which hold the values equal either way.

    Examples
    --------
    >>> was = set_prefetch(False)
    >>> set_prefetch(was)
    False
    """
    global _hints
    cdef bint was = _hints
    _hints = on
    return was


cdef void _ahead(PyObject** live, Py_ssize_t i, Py_ssize_t n) noexcept:
    """Ask the CPU for what the reads of the attempts ahead of ``live[i]`` will touch: a read
    is a chain of dependent loads (the attempt, then its rate memo), mostly from outside the
    caches on a big run, and the reads of different attempts are independent. So before the
    read of ``live[i]``, the attempt ``live[i + 12]`` is asked for (its C fields: four cache
    lines), the rate memo and task of ``live[i + 8]`` (arrived by then), and, for a memo
    that is a list (the reference; a ``RateMemo`` holds its three fields itself), its items
    for ``live[i + 4]`` and the step and rate in them for ``live[i + 2]``: the loads of
    later attempts overlap the read of this one instead of each waiting for the last. Called
    for ``i`` from -12, so the first reads are asked for too.

    Only hints: nothing is written, nothing is read that a read would not read, every object
    read is referenced from ``live`` and only ``CAttempt`` instances are looked into. The
    values read are the same with or without them (a read of scattered attempts took 0.4x
    the time with them when the attempts' numbers were Python objects; an FB-2010 LATE scan
    0.6x)."""
    cdef char* b
    cdef PyObject* a
    cdef PyObject* p
    cdef PyObject** items
    cdef PyObject* typed = <PyObject*>_typed
    if not _hints:
        return
    if i + AHEAD_ATTEMPT < n:
        b = <char*>live[i + AHEAD_ATTEMPT]
        _prefetch(b)
        _prefetch(b + 64)
        _prefetch(b + 128)
        _prefetch(b + 192)
    if 0 <= i + AHEAD_FIELDS < n:
        a = live[i + AHEAD_FIELDS]
        if _type_of(a) == typed:
            p = <PyObject*>(<CAttempt>a)._step_rate
            _prefetch(p)
            _prefetch(<char*>p + 32)  # a RateMemo's fields end 40 bytes in
            _prefetch(<PyObject*>(<CAttempt>a).task)
    if 0 <= i + AHEAD_ITEMS < n:
        a = live[i + AHEAD_ITEMS]
        if _type_of(a) == typed:
            p = <PyObject*>(<CAttempt>a)._step_rate
            items = _list_items(p)
            if items is not NULL:
                _prefetch(items)
    if 0 <= i + AHEAD_MEMO < n:
        a = live[i + AHEAD_MEMO]
        if _type_of(a) == typed:
            items = _list_items(<PyObject*>(<CAttempt>a)._step_rate)
            if items is not NULL:
                _prefetch(items[0])
                _prefetch(items[2])


cdef inline void _ahead_first(PyObject** live, Py_ssize_t n) noexcept:
    """:func:`_ahead` for the indices before the loop's first, so that the first reads'
    objects are asked for too."""
    cdef Py_ssize_t i
    for i in range(-AHEAD_ATTEMPT, 0):
        _ahead(live, i, n)


cdef inline void _ahead_task(
    PyObject** live, const char* cand, const double* rate, double cut, Py_ssize_t i,
    Py_ssize_t n,
) noexcept:
    """:func:`_ahead` for the last pass of a LATE scan, which reads the task of each attempt
    still to be checked (``cand`` 1, a rate below ``cut``) for being alone on it: the
    attempt's field of its task 12 places ahead (the job's reads have moved it out of the
    caches since), then, 6 places ahead, the task's count of live attempts."""
    cdef PyObject* a
    cdef PyObject* t
    if not _hints:
        return
    if i + AHEAD_ATTEMPT < n and cand[i + AHEAD_ATTEMPT] == 1:
        if not (rate[i + AHEAD_ATTEMPT] >= cut):
            # (its type is not read here: that would wait for the line this asks for; a
            # hint about another type's layout is only a wasted hint)
            # (a CAttempt's task is its second field, within its first 64 bytes after the
            # object's header: these two lines hold it wherever the object starts)
            _prefetch(<char*>live[i + AHEAD_ATTEMPT])
            _prefetch(<char*>live[i + AHEAD_ATTEMPT] + 64)
    if 0 <= i + AHEAD_TASK < n and cand[i + AHEAD_TASK] == 1:
        if not (rate[i + AHEAD_TASK] >= cut):
            a = live[i + AHEAD_TASK]
            if _type_of(a) == <PyObject*>_typed:
                t = <PyObject*>(<CAttempt>a).task
                if _type_of(t) == <PyObject*>_task_slotted:
                    _prefetch(<char*>t + _toff[T_N_LIVE])


from sim_bridge._jobs import Task as _Task  # imports only _states, _attempt_core and NumPy

set_task_type(_Task)


cdef inline object _get(object a, int f, bint fast):
    """Field ``f`` of the attempt ``a``: from its C field when ``fast`` (a ``CAttempt``),
    else by name (an unset slot: the AttributeError Python gives)."""
    cdef CAttempt c
    if fast:
        c = <CAttempt>a
        if f == F_DEM:
            return c._dem
        if f == F_STEP_RATE:
            return c._step_rate
        if f == F_TASK:
            return c.task
        if f == F_PID:
            return c._pid
        if f == F_NODE:
            return c.node
    return getattr(a, _NAMES[f])


cdef inline object _pid_of(object a, bint fast):
    """``sim_bridge._jobs.profile_of(a)``: the attempt's ``_pid``, held from its launch,
    else ``a.task.job.pids[a.task.stage]``."""
    cdef object pid = _get(a, F_PID, fast)
    if pid is None:
        task = _get(a, F_TASK, fast)
        return task.job.pids[task.stage]
    return pid


cdef inline long long _geti(object a, int f, bint fast) except? -1:
    """Integer field ``f`` of the attempt ``a`` (its state or node), as :func:`_get` reads
    it (from a ``CAttempt`` without making a Python int)."""
    if fast:
        if f == F_STATE:
            return (<CAttempt>a).state
        if f == F_NODE:
            return (<CAttempt>a).node
    return <long long>getattr(a, _NAMES[f])


cdef inline double _getd(object a, int f, bint fast) except? -1.0:
    """Float field ``f`` of the attempt ``a``, as :func:`_get` reads it."""
    cdef CAttempt c
    if fast:
        c = <CAttempt>a
        if f == F_WORK:
            return c._work
        if f == F_SEG_T:
            return c._seg_t
        if f == F_SF:
            return c.start_fraction
        if f == F_LAUNCH:
            return c.launch_time
        if f == F_END:
            return c._end
        if f == F_SEG_DONE:
            return c._seg_done
        if f == F_C0:
            return c._c0
    return <double>getattr(a, _NAMES[f])


cdef inline double _fitem(object seq, Py_ssize_t i) except? -1.0:
    """``float(seq[i])`` for a tuple or list ``seq`` (its item read in place when it is a
    float at a valid index, else by Python's indexing)."""
    cdef PyObject* p = NULL
    if type(seq) is tuple:
        if i < _tuple_size(seq):
            p = _tuple_item(seq, i)
    elif type(seq) is list:
        if i < _list_size(seq):
            p = _list_item(seq, i)
    if p is not NULL and _float_exact(p):
        return _float_value(p)
    return <double>seq[i]


cdef inline bint _step_is(object memo, object k_obj, long long k) except -1:
    """``memo[0] == k_obj`` (``k`` its value) for a rate memo ``[step, demand, rate]``."""
    cdef PyObject* p
    if type(memo) is RateMemo:
        return (<RateMemo>memo).step == k
    if type(memo) is list and _list_size(memo) > 0:
        p = _list_item(memo, 0)
        if _long_exact(p) and _long_exact(<PyObject*>k_obj):
            return p == <PyObject*>k_obj or _long_value(p) == k
    return memo[0] == k_obj


cdef inline bint _memo_is(object memo, object x) except -1:
    """``memo[1] is x``: whether the rate memo holds the demand ``x``."""
    if type(memo) is RateMemo:
        return (<RateMemo>memo).demand is x
    return _item_is(memo, 1, x)


cdef inline double _memo_rate(object memo) except? -1.0:
    """``float(memo[2])``: the rate memo's rate."""
    if type(memo) is RateMemo:
        return (<RateMemo>memo).rate
    return _fitem(memo, 2)


cdef inline bint _item_is(object seq, Py_ssize_t i, object x) except -1:
    """``seq[i] is x`` (read in place from a list)."""
    if type(seq) is list and i < _list_size(seq):
        return _list_item(seq, i) == <PyObject*>x
    return seq[i] is x


cdef inline bint _prog_of(object a, bint fast, double* t, double* done) except -1:
    """The attempt's last read under demand, ``a._prog``: its time and work done into ``t``
    and ``done``, and whether it has one (``_prog`` not None)."""
    cdef CAttempt c
    cdef object prog
    if fast:
        c = <CAttempt>a
        if not c.has_prog:
            return False
        t[0] = c.prog_t
        done[0] = c.prog_done
        return True
    prog = a._prog
    if prog is None:
        return False
    t[0] = _fitem(prog, 0)
    done[0] = _fitem(prog, 1)
    return True


cdef inline void _book_prog(object a, bint fast, object now_obj, double done) except *:
    """``a._prog = (now_obj, done)``: a read's new last read (in its C fields when
    ``fast``: nothing allocated)."""
    cdef CAttempt c
    if fast:
        c = <CAttempt>a
        c.prog_t = now_obj
        c.prog_done = done
        c.has_prog = True
        return
    a._prog = (now_obj, done)


cdef inline bint _any(object demand):
    """``any(demand)`` for a tuple of floats (NaN counts as true, as in Python)."""
    cdef object x
    for x in demand:
        if <double>x != 0.0:
            return True
    return False



cdef class _Reader:
    """The progress reads of one scan at one instant: the clock, the engine's call-backs, and
    the memos the loop keeps between attempts (the last distinct last-read time seen; the
    running sums of the last profile read). :meth:`read` is one pass of
    ``SimView._progress_list_py``'s loop for a running attempt."""

    cdef double now, k_now, dt, seen_t0, seen_gap
    cdef long long k_now_ll
    cdef object now_obj, k_now_obj, work_done, cluster, trates, last_pid
    cdef dict cache
    cdef bint inline, walk_here, have_seen, seen_ok, have_cv
    cdef long long chunk_min
    cdef double[:] cv

    def __cinit__(
        self, object now_obj, object work_done, object cluster, dict cache, bint inline,
        double dt, object k_now_obj, object trates, long long chunk_min,
    ):
        self.now_obj = now_obj
        self.now = now_obj
        self.k_now_obj = k_now_obj
        self.k_now_ll = <long long>k_now_obj
        self.k_now = <double>self.k_now_ll
        self.work_done = work_done
        self.cluster = cluster
        self.cache = cache
        self.inline = inline
        self.dt = dt
        self.trates = trates
        self.chunk_min = chunk_min
        self.walk_here = inline and trates is not None
        self.have_seen = False
        self.seen_ok = False
        self.have_cv = False
        self.last_pid = None

    cdef double read(self, object a, bint fast) except? -1.0:
        """The progress of the running attempt ``a`` at the clock (``fast``: read from its
        C fields), with the loop's update of its last read."""
        cdef object dem, memo, task, pid, cum, walk
        cdef double work, span, frac, t0, done, sf, launch, base, total, seg_t, pt, pd
        cdef bint has_prog
        cdef double now = self.now
        cdef bint engine, walked
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
            has_prog = _prog_of(a, fast, &pt, &pd)
            memo = _get(a, F_STEP_RATE, fast)
            engine = True
            if (
                self.inline
                and has_prog
                and memo is not None
                and _step_is(memo, self.k_now_obj, self.k_now_ll)
            ):
                t0 = pt
                if not self.have_seen or t0 != self.seen_t0:
                    self.have_seen = True
                    self.seen_t0 = t0
                    self.seen_ok = t0 <= now and py_floordiv(t0, self.dt) == self.k_now
                    self.seen_gap = now - t0
                if self.seen_ok and _memo_is(memo, dem) and _getd(a, F_SEG_T, fast) <= t0:
                    # Cluster.work_with's loop for one step: 0.0 + rate * (t1 - t0)
                    if t0 < now:
                        done = pd + (0.0 + _memo_rate(memo) * self.seen_gap)
                    else:
                        done = pd + 0.0
                    _book_prog(a, fast, self.now_obj, done)
                    frac = done / work
                    engine = False
            if engine and self.walk_here and _any(dem):
                # Simulator._work_done: from the last read in this segment, else its start
                seg_t = _getd(a, F_SEG_T, fast)
                if has_prog and seg_t <= pt <= now:
                    t0 = pt
                    base = pd
                else:
                    t0 = seg_t
                    base = _getd(a, F_SEG_DONE, fast)
                if self.k_now - py_floordiv(t0, self.dt) <= self.chunk_min:  # a short walk
                    if memo is None:  # _work_under's new memo
                        memo = RateMemo()
                        a._step_rate = memo
                    total = 0.0
                    walked = True
                    if t0 < now:
                        walk = self.trates.work_steps(
                            _get(a, F_NODE, fast), _pid_of(a, fast), t0, now, 0.0, dem, memo
                        )
                        total = walk[0]
                        walked = <double>walk[1] >= now  # else it stopped short
                    if walked:
                        done = base + total
                        _book_prog(a, fast, self.now_obj, done)
                        frac = done / work
                        engine = False
            if engine:
                frac = <double>self.work_done(a, self.now_obj) / work
        else:
            pid = _pid_of(a, fast)
            if not self.have_cv or not (pid is self.last_pid or pid == self.last_pid):
                cum = self.cache.get(pid)
                if cum is None:
                    cum = self.cache[pid] = self.cluster.cum_at_nodes(pid, self.now_obj)
                self.cv = cum
                self.last_pid = pid
                self.have_cv = True
            frac = (
                _getd(a, F_SEG_DONE, fast) + self.cv[<Py_ssize_t>_geti(a, F_NODE, fast)]
                - _getd(a, F_C0, fast)
            ) / work
        if frac < 0.0:
            frac = 0.0
        elif frac > 1.0:
            frac = 1.0
        sf = _getd(a, F_SF, fast)
        return sf + (1.0 - sf) * frac

    cdef double read_any(self, object a, bint fast, object progress_one) except? -1.0:
        """The progress of the attempt ``a``: :meth:`read` when it is running, else
        ``progress_one(a)`` (``SimView.progress``), as the Python loop reads it."""
        if _geti(a, F_STATE, fast) != 0:  # not running (A_RUNNING is 0)
            return progress_one(a)
        return self.read(a, fast)


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
    cdef _Reader reader = _Reader(
        now_obj, work_done, cluster, cache, inline, dt, k_now_obj, trates, chunk_min
    )
    cdef list out = []
    cdef object a
    cdef Py_ssize_t i, n = len(attempts)
    cdef PyObject** objs = _items(attempts)  # the list is not changed while it is read
    _ahead_first(objs, n)
    for i in range(n):
        _ahead(objs, i, n)
        a = attempts[i]
        out.append(reader.read_any(a, type(a) is _typed, progress_one))
    return out


cdef void _sort(double* a, Py_ssize_t n) noexcept nogil:
    """Sort ``a[:n]`` ascending (no NaN): quicksort (Hoare's partition around the middle
    value, the smaller side first, the larger by iteration: O(log n) depth), insertion sort
    below 16 values. Equal values may be reordered: only the values are read."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, j
    cdef double p, t
    while hi - lo >= 16:
        p = a[lo + (hi - lo) // 2]
        i = lo - 1
        j = hi + 1
        while True:
            i += 1
            while a[i] < p:
                i += 1
            j -= 1
            while a[j] > p:
                j -= 1
            if i >= j:
                break
            t = a[i]
            a[i] = a[j]
            a[j] = t
        # a[lo..j] <= p <= a[j+1..hi], both sides non-empty
        if j - lo < hi - j - 1:
            _sort(a + lo, j - lo + 1)
            lo = j + 1
        else:
            _sort(a + j + 1, hi - j)
            hi = j
    for i in range(lo + 1, hi + 1):
        t = a[i]
        j = i - 1
        while j >= lo and a[j] > t:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = t


cdef double _kth(
    const double* rates,
    Py_ssize_t m,
    const double* done,
    Py_ssize_t nd,
    Py_ssize_t k,
    bint inverse,
) noexcept nogil:
    """The ``k``-th smallest (from 0) of ``m`` ascending ``rates`` and ``nd`` ascending
    ``done`` together (``0 <= k < m + nd``, no NaN): ``sorted(rates + done)[k]``, by
    bisection on how many of the ``k + 1`` smallest are rates. With ``inverse``, ``done`` is
    ``nd`` ascending positive run times and stands for their inverses (``1 / d``, read as
    needed: the same division NumPy does element by element)."""
    cdef Py_ssize_t lo = k + 1 - nd, hi = k + 1, i, j
    cdef double x
    if lo < 0:
        lo = 0
    if hi > m:
        hi = m
    while lo < hi:  # the fewest rates i with rates[i] >= done[k - i]
        i = (lo + hi) // 2
        if rates[i] < _done_at(done, nd, k - i, inverse):
            lo = i + 1
        else:
            hi = i
    i = lo
    j = k + 1 - i  # the done values among the k + 1 smallest
    if i == 0:
        return _done_at(done, nd, j - 1, inverse)
    if j == 0:
        return rates[i - 1]
    x = _done_at(done, nd, j - 1, inverse)
    return rates[i - 1] if rates[i - 1] > x else x


cdef Py_ssize_t _first_positive(const double* a, Py_ssize_t n) noexcept nogil:
    """The first index of ascending ``a[:n]`` (no NaN) whose value is > 0, else ``n``."""
    cdef Py_ssize_t lo = 0, hi = n, i
    while lo < hi:
        i = (lo + hi) // 2
        if a[i] > 0.0:
            hi = i
        else:
            lo = i + 1
    return lo


cdef double* _two_lists(list rates, list done) except NULL:
    """``rates`` then ``done`` as C doubles in a new buffer (the caller frees it)."""
    cdef Py_ssize_t m = len(rates), nd = len(done), i
    cdef double* buf = <double*>PyMem_Realloc(NULL, (m + nd + 1) * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    try:
        for i in range(m):
            buf[i] = rates[i]
        for i in range(nd):
            buf[m + i] = done[i]
    except BaseException:
        PyMem_Free(buf)
        raise
    return buf


def kth_of_two(list rates, list done, Py_ssize_t k, bint inverse=False):
    """``sorted(rates + done)[k]`` for lists of floats without NaN, ``done`` ascending:
    :func:`late_scan`'s fallback (when its selection gives up: it sorts a job's rates and
    bisects the two sorted runs), exposed for its tests. With ``inverse``, ``done`` is
    ascending positive run times and the second run is their inverses:
    ``sorted(rates + [1 / d for d in done])[k]``.

    Examples
    --------
    >>> kth_of_two([0.5, 0.1], [0.2, 0.3, 0.9], 2)
    0.3
    >>> kth_of_two([0.5, 0.1], [2.0, 4.0], 1, inverse=True)
    0.25
    """
    cdef Py_ssize_t m = len(rates), nd = len(done)
    if not 0 <= k < m + nd:
        raise IndexError(f"k={k} out of range for {m + nd} values")
    cdef double* buf = _two_lists(rates, done)
    try:
        _sort(buf, m)
        return _kth(buf, m, buf + m, nd, k, inverse)
    finally:
        PyMem_Free(buf)


cdef Py_ssize_t _round_cap = -1  # set_select_rounds: a cap for tests, else per n
cdef long long _n_selected = 0  # cuts found by selection since import (n_selected)
DEF SELECT_MIN = 128  # fewer rates are sorted: no slower (bench/bench_late_cut.py)


cdef bint _cut_pair(
    double* r, Py_ssize_t n, const double* done, Py_ssize_t nd, Py_ssize_t k, bint inverse,
    double* x, double* y,
) noexcept nogil:
    """The ``k``-th and ``k + 1``-th smallest of ``r[:n]`` (permuted) and the sorted run
    (:func:`sim_bridge._order_stats._select`), in ``x`` and ``y``: by selection from
    ``SELECT_MIN`` rates on (returns True), else, or when the selection gave up, by
    sorting the rates and bisecting the two sorted runs. The same values either way."""
    global _n_selected
    cdef bint ok = False
    if n >= SELECT_MIN and _round_cap != 0:
        x[0] = _select(r, n, done, nd, k, inverse,
                       _round_limit(n) if _round_cap < 0 else _round_cap, &ok)
    if ok:
        y[0] = _next_of(r, n, done, nd, k, x[0], inverse)
        _n_selected += 1
        return True
    _sort(r, n)
    x[0] = _kth(r, n, done, nd, k, inverse)
    y[0] = _kth(r, n, done, nd, k + 1, inverse)
    return False


def set_select_rounds(Py_ssize_t cap=-1):
    """Cap the rounds of :func:`late_scan`'s selection of its cut (``-1``: the default,
    ``sim_bridge._order_stats._round_limit``; ``0``: always sort, the fallback and the path
    of fewer than ``SELECT_MIN`` rates), for tests and benchmarks that hold both paths to
    the same scans. Returns the previous cap."""
    global _round_cap
    was = _round_cap
    _round_cap = cap
    return was


def n_selected():
    """How many cuts :func:`late_scan` (and :func:`select_pair_of_two` and
    :func:`late_slow_nodes`) found by selection since import: lets a test see that a run took
    that path."""
    return _n_selected


def select_pair_of_two(list rates, list done, Py_ssize_t k, bint inverse=False):
    """``(sorted(u)[k], sorted(u)[k + 1], selected)``, ``u`` the union :func:`kth_of_two`
    reads, found as :func:`late_scan` finds its cut's two order statistics (``_cut_pair``):
    by selection over the unsorted ``rates`` (``selected`` True), or by sorting them when
    they are fewer than ``SELECT_MIN`` (128) or the selection gave up (within
    :func:`set_select_rounds`' cap). Exposed for the tests and ``bench/bench_late_cut.py``.

    Examples
    --------
    >>> select_pair_of_two([0.5, 0.1, 0.7], [0.2, 0.3, 0.9], 2)
    (0.3, 0.5, False)
    >>> select_pair_of_two([0.5, 0.1], [2.0, 4.0], 1, inverse=True)
    (0.25, 0.5, False)
    >>> select_pair_of_two([i / 128 for i in range(128, 0, -1)], [], 3)
    (0.03125, 0.0390625, True)
    """
    cdef Py_ssize_t m = len(rates), nd = len(done)
    cdef bint ok
    cdef double x, y
    if not 0 <= k < m + nd - 1:
        raise IndexError(f"k={k} out of range for {m + nd} values (k + 1 is read)")
    cdef double* buf = _two_lists(rates, done)
    try:
        ok = _cut_pair(buf, m, buf + m, nd, k, inverse, &x, &y)
        return (x, y, ok)
    finally:
        PyMem_Free(buf)


cdef class _Buffers:
    """A scan's per-job scratch arrays (progress, rates, sorted rates, flags, the attempts),
    grown as needed and freed with the object."""

    cdef double* prog
    cdef double* rate
    cdef double* sort
    cdef char* cand
    cdef PyObject** objs  # a job's running attempts, borrowed from its dict for the scan
    cdef Py_ssize_t cap

    def __dealloc__(self):
        PyMem_Free(self.objs)
        PyMem_Free(self.prog)
        PyMem_Free(self.rate)
        PyMem_Free(self.sort)
        PyMem_Free(self.cand)

    cdef int reserve(self, Py_ssize_t n) except -1:
        cdef void* p
        if n <= self.cap:
            return 0
        n = max(n, 2 * self.cap, 64)
        p = PyMem_Realloc(self.prog, n * sizeof(double))
        if p == NULL:
            raise MemoryError()
        self.prog = <double*>p
        p = PyMem_Realloc(self.rate, n * sizeof(double))
        if p == NULL:
            raise MemoryError()
        self.rate = <double*>p
        p = PyMem_Realloc(self.sort, n * sizeof(double))
        if p == NULL:
            raise MemoryError()
        self.sort = <double*>p
        p = PyMem_Realloc(self.cand, n * sizeof(char))
        if p == NULL:
            raise MemoryError()
        self.cand = <char*>p
        p = PyMem_Realloc(self.objs, n * sizeof(PyObject*))
        if p == NULL:
            raise MemoryError()
        self.objs = <PyObject**>p
        self.cap = n
        return 0


def late_scan(
    object jobs,
    double now,
    double min_el,
    dict durs,
    object empty,
    object q,
    object quantile,
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
    object rank_key=None,
):
    """One LATE scan (``LATE._ranked``): the slow tasks' live attempts, ``(estimated time
    left, uid, attempt)`` in the jobs' order, or with ``rank_key`` (LATE's sort key,
    ``(-estimate, uid)``) in its order: sorted here in C (:class:`_Ranks`) when every
    estimate is a number and every uid an int of 64 bits, else by ``list.sort(key=rank_key)``.

    Per job alive: its live attempts of the runnable stage (its running attempts: the engine
    runs no other stage's, so they are not filtered by stage), when one of them, alone on its
    task, has run for ``min_el`` and the stage has something to compare it with (its
    finished durations ``durs.get((job.uid, job.stage), empty)``, of ``empty``'s type:
    ``_Durations``); their progress, read as :func:`progress_list` reads it (the arguments
    from ``now_obj`` on are its own); their rates and, when one is a candidate, the stage's
    cut: the ``q`` percentile (NumPy's ``"linear"``) of the rates and the finished tasks'
    inverse rates (``inverse_array()``, read from ``sorted()``'s positive run times and
    divided as they are read), its two order statistics selected here from the unsorted
    rates and that sorted run (:mod:`sim_bridge._order_stats`) and interpolated with
    ``_quantile_linear``'s formula, or by ``quantile`` itself (that function, given
    ``inverse_rates()``) where it would leave the case to NumPy. A candidate is an attempt
    alone on its task, with a positive rate below the cut, run for ``min_el``. The same
    reads in the same order, the same IEEE operations: ``LATE._ranked_py`` is its reference.
    """
    cdef _Reader reader = _Reader(
        now_obj, work_done, cluster, cache, inline, dt, k_now_obj, trates, chunk_min
    )
    cdef _Buffers buf = _Buffers()
    cdef _Ranks ranks = _Ranks() if rank_key is not None else None
    cdef list out = []
    cdef list rate_list
    cdef double est
    cdef object uid
    cdef PyObject** live
    cdef dict running
    cdef object job, a, d
    cdef const double[::1] done
    cdef Py_ssize_t i, first, n, nd, lo, total_n, ns, p0 = 0
    cdef bint fast, found, finite
    cdef char c
    cdef double p, r, el, launch, sf, cut, vi, g, qd = 0.0, x, y, diff
    cdef bint q_float = isinstance(q, float)
    cdef object durs_type = type(empty)
    if q_float:
        qd = q
    for job in jobs:
        running = job.running  # a dict (checked: a TypeError otherwise)
        if not running:
            continue
        # the runnable stage's live attempts are all the job's running ones: the engine
        # launches no task of a stage that is blocked or done (PolicyError), and a stage is
        # done once its tasks are, their other attempts killed. LATE._ranked_py's filter by
        # stage keeps them all; not reading each attempt's task here saves a dependent load
        # its attempts borrowed from the dict (which nothing changes during the scan: the
        # reads book their progress, and launch or close no attempt), in its values' order
        buf.reserve(len(running))
        live = buf.objs
        n = _dict_values(running, live)
        first = -1
        for i in range(n):
            a = <object>live[i]
            fast = type(a) is _typed
            if now - _getd(a, F_LAUNCH, fast) >= min_el and _alone(a, fast):
                first = i
                break
        if first < 0:
            continue  # no candidate: the scan would rank nothing
        d = durs.get((job.uid, job.stage), empty)
        if n + len(d) < 2:
            continue  # nothing to compare a lone task with
        finite = True
        _ahead_first(live, n)
        for i in range(n):
            _ahead(live, i, n)
            a = <object>live[i]
            fast = type(a) is _typed
            p = reader.read_any(a, fast, progress_one)
            launch = _getd(a, F_LAUNCH, fast)
            sf = _getd(a, F_SF, fast)
            el = now - launch
            r = (p - sf) / el if now > launch else 0.0
            buf.prog[i] = p
            buf.rate[i] = r
            finite = finite and isfinite(r)
            # a candidate: not (r <= 0 or elapsed < min_elapsed), and alone on its task
            # (read when needed: 1 ok, 2 ok and alone, 3 ok and not alone, 0 not ok)
            buf.cand[i] = 0 if (r <= 0.0 or el < min_el) else 1
        found = False
        for i in range(first, n):  # before first: none alone and old enough
            if buf.cand[i]:
                a = <object>live[i]
                buf.cand[i] = 2 if _alone(a, type(a) is _typed) else 3
                if buf.cand[i] == 2:
                    found = True
                    break
        if not found:
            continue
        # SlowTaskThreshold: percentile of the progress rates of the stage's running and
        # finished tasks (a finished task's rate is 1 / its run time)
        vi = -1.0
        total_n = 0
        if type(d) is durs_type:
            done = d.sorted()  # ascending run times: their inverses are read backwards
            ns = done.shape[0]
            if ns == 0 or done[ns - 1] == done[ns - 1]:  # no NaN (else NumPy, below)
                p0 = _first_positive(&done[0], ns) if ns else 0
                nd = ns - p0
                total_n = n + nd
                if q_float and total_n >= 2 and finite:
                    vi = (total_n - 1) * qd
        if 0.0 <= vi < total_n - 1:  # _quantile_linear's interpolating branch
            lo = <Py_ssize_t>vi  # floor (vi >= 0)
            g = vi - lo
            for i in range(n):
                buf.sort[i] = buf.rate[i]
            _cut_pair(buf.sort, n, &done[p0] if nd else buf.sort, nd, lo, True, &x, &y)
            diff = y - x
            cut = y - diff * (1 - g) if g >= 0.5 else x + diff * g
        else:  # left to NumPy by _quantile_linear
            rate_list = [buf.rate[i] for i in range(n)]
            cut = quantile(rate_list, d.inverse_rates(), q)
        for i in range(-AHEAD_ATTEMPT, 0):
            _ahead_task(live, buf.cand, buf.rate, cut, i, n)
        for i in range(n):
            _ahead_task(live, buf.cand, buf.rate, cut, i, n)
            c = buf.cand[i]
            if c and not (buf.rate[i] >= cut):
                a = <object>live[i]
                if c == 1:
                    c = 2 if _alone(a, type(a) is _typed) else 3
                if c == 2:
                    est = (1.0 - buf.prog[i]) / buf.rate[i]
                    uid = a.uid
                    if ranks is not None:
                        ranks.add(est, uid, len(out))
                    out.append((est, uid, a))
    if ranks is None:
        return out
    if ranks.ok:
        return ranks.ordered(out)
    out.sort(key=rank_key)
    return out


def late_slow_nodes(object node_work, object node_time, object q):
    """LATE's slow nodes (``LATE._slow_nodes_py``): a bool per node, True where the node has
    finished work (``node_time > 0``) and its speed ``node_work / node_time`` is below the
    ``q`` quantile (NumPy's ``"linear"``) of the speeds of those nodes. None when fewer than
    four nodes finished work; ``NotImplemented`` for the cases left to NumPy (``q`` not a
    float, the quantile's last index, a NaN speed). The two order statistics are selected
    as the scan's cut is (``_cut_pair``) and interpolated with NumPy's formula, so the array
    is ``np.nanquantile``'s, bit for bit, without its copies and sort of every node.

    Examples
    --------
    >>> from array import array
    >>> late_slow_nodes(array("d", [1, 2, 3, 4, 0]), array("d", [1, 1, 1, 1, 0]), 0.5).tolist()
    [True, True, False, False, False]
    >>> late_slow_nodes(array("d", [1, 2]), array("d", [1, 1]), 0.5) is None
    True
    """
    cdef const double[::1] w = node_work
    cdef const double[::1] t = node_time
    cdef Py_ssize_t n = t.shape[0], i, m = 0, lo
    cdef double qd, vi, g, x, y, diff, cut, sp
    cdef double* buf
    cdef object out
    cdef unsigned char[::1] o
    if w.shape[0] != n:
        raise ValueError(f"node_work has {w.shape[0]} nodes, node_time {n}")
    if not isinstance(q, float):
        return NotImplemented
    qd = q
    buf = <double*>PyMem_Realloc(NULL, (n + 1) * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            if t[i] > 0.0:
                sp = w[i] / t[i]
                if sp != sp:
                    return NotImplemented
                buf[m] = sp
                m += 1
        if m < 4:
            return None
        vi = (m - 1) * qd
        if not (0.0 <= vi < m - 1):
            return NotImplemented
        lo = <Py_ssize_t>vi  # floor (vi >= 0)
        g = vi - lo
        _cut_pair(buf, m, buf, 0, lo, False, &x, &y)
        diff = y - x
        cut = y - diff * (1 - g) if g >= 0.5 else x + diff * g
    finally:
        PyMem_Free(buf)
    out = np.zeros(n, dtype=bool)
    o = out.view(np.uint8)
    for i in range(n):
        if t[i] > 0.0 and w[i] / t[i] < cut:
            o[i] = 1
    return out


def rank_candidates(list cands, object rank_key):
    """``sorted(cands, key=rank_key)`` for LATE's ``(estimate, uid, attempt)`` candidates
    with distinct uids, ``rank_key`` LATE's ``(-estimate, uid)``: ranked as :func:`late_scan`
    ranks them (in C, or by ``rank_key`` when an estimate is NaN or a uid is not an exact
    int of 64 bits). Exposed for the tests.

    Examples
    --------
    >>> key = lambda c: (-c[0], c[1])
    >>> rank_candidates([(1.0, 7, "a"), (3.0, 9, "b"), (1.0, 2, "c")], key)
    [(3.0, 9, 'b'), (1.0, 2, 'c'), (1.0, 7, 'a')]
    """
    cdef _Ranks ranks = _Ranks()
    cdef Py_ssize_t k
    for k in range(len(cands)):
        ranks.add(cands[k][0], cands[k][1], k)
    if ranks.ok:
        return ranks.ordered(cands)
    return sorted(cands, key=rank_key)


cdef class _Ranks:
    """A LATE scan's candidates as :c:type:`Ranked` records (estimate, uid, index), sorted
    by ``qsort`` in LATE's order (:func:`sim_bridge._order_stats._rank_cmp`). ``ok`` turns
    False, for the caller to sort in Python, once an estimate is NaN or a uid not an exact
    int of 64 bits: the order would not be Python's."""

    cdef Ranked* r
    cdef Py_ssize_t n, cap
    cdef public bint ok

    def __cinit__(self):
        self.r = NULL
        self.n = 0
        self.cap = 0
        self.ok = True

    def __dealloc__(self):
        PyMem_Free(self.r)

    cdef int add(self, double est, object uid, Py_ssize_t at) except -1:
        cdef void* p
        cdef int overflow = 0
        cdef long long u
        if not self.ok:
            return 0
        if est != est or type(uid) is not int:
            self.ok = False
            return 0
        u = PyLong_AsLongLongAndOverflow(uid, &overflow)
        if overflow:
            self.ok = False
            return 0
        if self.n == self.cap:
            self.cap = max(64, 2 * self.cap)
            p = PyMem_Realloc(self.r, self.cap * sizeof(Ranked))
            if p == NULL:
                raise MemoryError()
            self.r = <Ranked*>p
        self.r[self.n].est = est
        self.r[self.n].uid = u
        self.r[self.n].at = at
        self.n += 1
        return 0

    cdef list ordered(self, list out):
        """``out``'s items in LATE's order (``out[k]`` is the record added with index k)."""
        cdef Py_ssize_t k
        qsort(self.r, self.n, sizeof(Ranked), _rank_cmp)
        return [out[self.r[k].at] for k in range(self.n)]


cdef inline Py_ssize_t _bisect_left(const double* a, Py_ssize_t n, double x) noexcept nogil:
    """``bisect.bisect_left(a[:n], x)``: the number of values below ``x`` in ascending
    ``a`` (no NaN in ``a`` or ``x``), with bisect's own comparisons."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef Py_ssize_t _count(
    const double[::1] done, Py_ssize_t n, bint nan_last, double x, object count_below,
    object arr,
) except -1:
    """``count_below(arr, x, arr)`` (``_count_below``: NumPy's ``searchsorted``, side
    ``"left"``) for ``done``, ``arr``'s values: by bisection here unless a NaN is in
    ``x`` or ``done`` (NumPy sorts NaN last; that case goes to ``count_below``)."""
    if x != x or nan_last:
        return count_below(arr, x, arr)
    return _bisect_left(&done[0], n, x) if n else 0


def count_below_sorted(object arr, double x, object count_below):
    """:func:`mantri_scan`'s count of the values of ``arr`` (ascending float64) below ``x``,
    exposed for its tests: ``count_below(arr, x, arr)`` where a NaN is about.

    Examples
    --------
    >>> import numpy as np
    >>> count_below_sorted(np.array([1.0, 2.0, 2.0, 3.0]), 2.0, None)
    1
    """
    cdef const double[::1] done = arr
    cdef Py_ssize_t n = done.shape[0]
    return _count(done, n, n > 0 and done[n - 1] != done[n - 1], x, count_below, arr)


def mantri_scan(
    object jobs,
    double now,
    Py_ssize_t free,
    double delta,
    double restart_margin,
    double max_copies,
    double min_samples,
    dict durs,
    object empty,
    object count_below,
    object launch,
    object kill,
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
    """One Mantri tick (``Mantri._on_tick_py``, its reference): the actions, ``launch(task)``
    for a copy and ``kill(attempt)`` then ``launch(task)`` for a restart, in the jobs' order.

    Per job alive with running attempts and at least ``min_samples`` finished run times of
    its stage (``durs.get((job.uid, job.stage), empty)``, a ``_Durations``): the progress of
    its running attempts of that stage, read as :func:`progress_list` reads it (the
    arguments from ``now_obj`` on are its own), then per task once, in that order:

    * its remaining time ``t_rem``: ``(1 - p) * elapsed / (p - start_fraction)``, the best
      over its live attempts (``task.live``, each read again at the clock, which adds
      nothing to its work done) when it has more than one, else ``elapsed`` plus the mean
      run time when nothing was gained;
    * a copy when a slot is free, the task has fewer than ``max_copies`` live attempts ``c``
      and more than ``delta`` of the run times are below ``t_rem * c / (c + 1)``;
    * else, with no slot free, a kill and restart of a lone first attempt whose ``t_rem``
      passes the mean run time by ``restart_margin`` and more than half the run times.

    Counts are bisections of the sorted run times (``count_below``, ``_count_below``, where a
    NaN is about). A task with one live attempt is in a job's running attempts once, so only
    tasks with more are checked for being seen before (the engine's ``n_live`` counts its
    running attempts). The same reads in the same order, the same IEEE operations.
    """
    cdef _Reader reader = _Reader(
        now_obj, work_done, cluster, cache, inline, dt, k_now_obj, trates, chunk_min
    )
    cdef _Buffers buf = _Buffers()
    cdef list out = []
    cdef list live
    cdef PyObject** objs
    cdef dict running
    cdef set seen = set()
    cdef object job, a, b, d, task, stage, t_new, uid
    cdef const double[::1] done
    cdef Py_ssize_t i, m, n, c
    cdef bint fast, fb, nan_last
    cdef double p, el, t_rem, x, pb, eb, sfb, gained, mean_new, p_dup
    for job in jobs:
        running = job.running  # a dict (checked: a TypeError otherwise)
        if not running:
            continue
        stage = job.stage
        d = durs.get((job.uid, stage), empty)
        if len(d) < min_samples:
            continue
        mean_new = d.mean()
        t_new = d.sorted()
        done = t_new
        n = done.shape[0]
        nan_last = n > 0 and done[n - 1] != done[n - 1]
        live = []
        for a in running.values():
            if _tget(_get(a, F_TASK, type(a) is _typed), T_STAGE) == stage:
                live.append(a)
        m = len(live)
        buf.reserve(m)
        objs = _items(live)
        _ahead_first(objs, m)
        for i in range(m):
            _ahead(objs, i, m)
            a = live[i]
            buf.prog[i] = reader.read_any(a, type(a) is _typed, progress_one)
        seen.clear()
        for i in range(m):
            a = live[i]
            fast = type(a) is _typed
            task = _get(a, F_TASK, fast)
            c = _tget(task, T_N_LIVE)
            if c > 1:
                uid = _tget(task, T_UID)
                if uid in seen:
                    continue
                seen.add(uid)
            el = now - _getd(a, F_LAUNCH, fast)
            if el <= 0.0:
                continue
            # remaining time of the task: the best of its live attempts
            if c > 1:
                t_rem = INFINITY
                for b in task.live.values():
                    fb = type(b) is _typed
                    pb = reader.read_any(b, fb, progress_one)
                    eb = now - _getd(b, F_LAUNCH, fb)
                    sfb = _getd(b, F_SF, fb)
                    if pb > sfb and eb > 0:
                        x = (1.0 - pb) * eb / (pb - sfb)
                        if x < t_rem:  # min(t_rem, x)
                            t_rem = x
            else:
                p = buf.prog[i]
                gained = p - _getd(a, F_SF, fast)
                t_rem = (1.0 - p) * el / gained if gained > 0 else INFINITY
            if isinf(t_rem):
                t_rem = el + mean_new  # no progress yet: at least as long as it has run
            if n == 0:
                raise ZeroDivisionError("division by zero")
            # P(t_rem > t_new (c+1)/c) from the stage's empirical t_new
            p_dup = <double>_count(
                done, n, nan_last, t_rem * <double>c / <double>(c + 1), count_below, t_new
            ) / <double>n
            if free and c < max_copies and p_dup > delta:
                out.append(launch(task))
                free -= 1
                continue
            if (
                not free
                and c == 1
                and len(_tget(task, T_ATTEMPTS)) == 1
                and t_rem > mean_new + restart_margin
                and <double>_count(done, n, nan_last, t_rem, count_below, t_new) / <double>n
                > 0.5
            ):
                out.append(kill(a))
                out.append(launch(task))
    return out
