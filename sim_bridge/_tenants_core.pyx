# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The step-by-step rates of co-located tenants (``Cluster.rate_with``) computed in C.

An attempt sharing its node runs at a rate that depends on the node's background levels plus
its co-tenants' demand (:mod:`sim_bridge.world._interference`); ``Cluster.end_with`` and
``Cluster.work_with`` walk the first steps of a solve one at a time, then whole chunks of
steps, and these walks are most of the physics of a default-world run. :class:`TenantRates`
does the walks on the cluster's level array in C, with the floating-point operations of the
Python reference (``Cluster._rate_with_py``, ``Cluster._end_steps_py``,
``Cluster._work_steps_py``, and ``Cluster._rates_with_py`` and ``Cluster._end_chunks``'s
``cumsum`` and ``searchsorted`` for the chunks) in the same order, so the results are the
same bit for bit (``tests/test_compiled_interference.py`` checks it). It never extends the
contention paths itself: a walk stops before a step the Python reference would extend the
paths for (the last step of the paths) or could not read (a dropped step) and says so; the
cluster extends them (which hands the new levels back through
:meth:`TenantRates.set_levels`) and the walk goes on.
"""

from cpython.object cimport PyObject
from libc.math cimport signbit

import numpy as np

from sim_bridge._attempt_core cimport RateMemo
from sim_bridge._cfloat cimport py_floordiv


cdef class TenantRates:
    """The rate model of one cluster: node factors, profiles and background levels.

    Parameters
    ----------
    sens : float64 array (n_nodes, 4)
        Per-node sensitivity to each resource.
    speed : float64 array (n_nodes,)
        Per-node slowness factor.
    kappa, eps, dt : float
        Contention strength, saturation guard of the response, step of the paths (s).

    Call :meth:`set_levels` with the ``(4, n_nodes, steps)`` levels (again whenever the
    cluster extends or trims them) and :meth:`set_profiles` with the ``(P, 4)`` profiles
    (again when one is registered) before reading.
    """

    cdef const double[:, ::1] sens
    cdef const double[::1] speed
    cdef const double[:, :, ::1] levels
    cdef const double[:, ::1] prof
    cdef double kappa, eps, dt
    cdef Py_ssize_t base, horizon
    cdef object _keep_levels, _keep_prof

    def __init__(self, sens, speed, double kappa, double eps, double dt):
        self.sens = np.ascontiguousarray(sens, dtype=np.float64)
        self.speed = np.ascontiguousarray(speed, dtype=np.float64)
        self.kappa = kappa
        self.eps = eps
        self.dt = dt
        self.base = 0
        self.horizon = 0
        self._keep_levels = None
        self._keep_prof = None
        self.set_profiles(np.zeros((0, 4)))

    def __reduce__(self):
        return _rebuild, (
            np.asarray(self.sens), np.asarray(self.speed), self.kappa, self.eps, self.dt,
            self._keep_levels, self.base, self._keep_prof,
        )

    def set_levels(self, levels, Py_ssize_t base=0) -> None:
        """The background levels ``(4, n_nodes, steps)`` (kept by reference) of the steps
        ``base, base + 1, ...``."""
        arr = np.ascontiguousarray(levels, dtype=np.float64)
        if arr.ndim != 3 or arr.shape[0] != 4 or arr.shape[1] != self.sens.shape[0]:
            raise ValueError(
                f"levels must have shape (4, {self.sens.shape[0]}, steps), got {arr.shape}"
            )
        self._keep_levels = arr
        self.levels = arr
        self.base = base
        self.horizon = base + arr.shape[2]

    def set_profiles(self, profiles) -> None:
        """The registered sensitivity profiles ``(P, 4)``, in profile-id order."""
        arr = np.ascontiguousarray(profiles, dtype=np.float64).reshape(-1, 4)
        self._keep_prof = arr
        self.prof = arr

    cdef inline bint _readable(self, long long k) noexcept nogil:
        # the Python reference extends the paths when it reads their last step, and cannot
        # read a dropped step: both are left to the caller
        return self.base <= k < self.horizon - 1

    cdef inline double _rate(
        self, long long node, long long pid, long long k, double d0, double d1, double d2,
        double d3,
    ) noexcept nogil:
        cdef Py_ssize_t j = k - self.base
        cdef double eps = self.eps
        cdef double load = 0.0
        cdef double x
        cdef double dem[4]
        cdef int r
        dem[0] = d0
        dem[1] = d1
        dem[2] = d2
        dem[3] = d3
        for r in range(4):
            x = self.levels[r, node, j] + dem[r]
            if x > 1.0:
                x = 1.0
            elif x < 0.0:
                x = 0.0
            load += self.prof[pid, r] * self.sens[node, r] * (x / (1.0 - x + eps))
        return 1.0 / (self.speed[node] * (1.0 + self.kappa * load))

    def rate(self, long long node, long long pid, long long k, demand):
        """The rate in step ``k`` under ``demand``, or None when the step is the last of the
        levels or before them (the caller extends the paths, or raises)."""
        if not self._readable(k):
            return None
        return self._rate(node, pid, k, demand[0], demand[1], demand[2], demand[3])

    def rates(self, long long node, long long pid, long long k0, Py_ssize_t m, demand):
        """The rates of the ``m`` steps from ``k0`` under ``demand``, as a new float64 array
        (``Cluster.rates_with``: each one :meth:`rate`'s), or None when one of them lies
        outside the levels (the caller reads those)."""
        cdef double d0, d1, d2, d3
        cdef double[::1] v
        cdef Py_ssize_t i
        if m < 0 or k0 < self.base or k0 + m > self.horizon:
            return None
        d0, d1, d2, d3 = demand[0], demand[1], demand[2], demand[3]
        out = np.empty(m)
        v = out
        for i in range(m):
            v[i] = self._rate(node, pid, k0 + i, d0, d1, d2, d3)
        return out

    def end_chunks(
        self, long long node, long long pid, long long k, Py_ssize_t m, double left, demand,
        Py_ssize_t block,
    ):
        """Walk whole chunks of steps of an end solve (``Cluster._end_chunks``): from step
        ``k`` on a step boundary with ``left`` work to do, a first chunk of ``m`` steps, each
        next one four times longer, at most ``block``.

        Returns ``(end, k, m, left)``: ``end`` the end time when the work is done within the
        chunks read (else NaN), and otherwise the first chunk not wholly within the levels,
        which the caller walks. A chunk's work done is NumPy's ``cumsum(rates) * dt``, its
        end the first step where that reaches ``left`` (``searchsorted``), bit for bit.
        """
        cdef double d0, d1, d2, d3
        cdef double dt = self.dt
        cdef double s, d, before, r
        cdef Py_ssize_t i
        d0, d1, d2, d3 = demand[0], demand[1], demand[2], demand[3]
        while m > 0 and k >= self.base and k + m <= self.horizon:
            s = 0.0
            before = 0.0
            for i in range(m):
                r = self._rate(node, pid, k + i, d0, d1, d2, d3)
                s += r  # the running sum, as cumsum adds (0.0 + r is r)
                d = s * dt
                if d >= left:
                    return ((k + i) * dt + (left - before) / r, k, m, left)
                before = d
            left -= before  # the chunk's whole work
            k += m
            m = min(4 * m, block)
        return (float("nan"), k, m, left)

    def end_steps(
        self, long long node, long long pid, double t, double left, demand, int n
    ):
        """Walk at most ``n`` steps of an end solve from ``t`` with ``left`` work to do.

        Returns ``(end, t, left, steps)``: ``end`` the end time when the work is done within
        them (else NaN), ``t`` and ``left`` where the walk stopped, ``steps`` how many it
        walked (fewer than ``n`` without an end: the next step is one the caller must
        extend the paths for first).
        """
        cdef double d0 = demand[0], d1 = demand[1], d2 = demand[2], d3 = demand[3]
        cdef double dt = self.dt
        cdef double rate, step_end, cap
        cdef long long k
        cdef int i
        for i in range(n):
            k = <long long>py_floordiv(t, dt)
            if not self._readable(k):
                return (float("nan"), t, left, i)
            rate = self._rate(node, pid, k, d0, d1, d2, d3)
            step_end = (k + 1) * dt
            cap = rate * (step_end - t)
            if cap >= left:
                return (t + left / rate, t, left, i + 1)
            left -= cap
            t = step_end
        return (float("nan"), t, left, n)

    def work_steps(
        self, long long node, long long pid, double t, double t1, double total, demand,
        object memo,
    ):
        """Walk the work done from ``t`` to ``t1`` step by step, adding to ``total``.

        ``memo`` (or None) is a caller's ``[step, demand, rate]``, a list or a ``RateMemo``
        (read and written in its C fields), used and updated as ``Cluster.work_with`` does.
        Returns ``(total, t)``: ``t < t1`` when the walk stopped before a step whose rate it
        must compute and the caller must extend the paths for.
        """
        cdef double d0 = demand[0], d1 = demand[1], d2 = demand[2], d3 = demand[3]
        cdef double dt = self.dt
        cdef double rate, step_end
        cdef long long k
        cdef long long mk = -1
        cdef bint have_memo = memo is not None
        cdef bint typed = type(memo) is RateMemo
        cdef RateMemo rm = memo if typed else None
        cdef bint same = False
        if typed:
            same = rm.demand is demand
            mk = rm.step
        elif have_memo:
            if type(memo) is not list:
                raise TypeError(f"memo: a list or a RateMemo, not {type(memo).__name__}")
            same = memo[1] is demand
            mk = memo[0]
        while t < t1:
            k = <long long>py_floordiv(t, dt)
            step_end = (k + 1) * dt
            if t1 < step_end:
                step_end = t1
            if have_memo and same and mk == k:
                rate = rm.rate if typed else memo[2]
            else:
                if not self._readable(k):
                    return (total, t)
                rate = self._rate(node, pid, k, d0, d1, d2, d3)
                if typed:
                    rm.step = k
                    rm.demand = demand
                    rm.rate = rate
                    mk = k
                    same = True
                elif have_memo:
                    memo[0] = k
                    memo[1] = demand
                    memo[2] = rate
                    mk = k
                    same = True
            total += rate * (step_end - t)
            t = step_end
        return (total, t)


def _rebuild(sens, speed, kappa, eps, dt, levels, base, profiles):
    rates = TenantRates(sens, speed, kappa, eps, dt)
    if levels is not None:
        rates.set_levels(levels, base)
    if profiles is not None:
        rates.set_profiles(profiles)
    return rates


def others_demand(list owns):
    """For each tenant ``i``, the summed demand of the others: ``sum_demand(owns[:i] +
    owns[i + 1:])`` of :mod:`sim_bridge.world._attempts` (a tuple, or None when all zero),
    with its floating-point additions in the same order, so the same bit for bit
    (``tests/test_tenancy_fast_paths.py``).

    Two adjacent tenants of equal demand leave the same sequence when removed (a zero's sign
    cannot matter: a running sum from ``0.0`` is never ``-0.0``), so they share one sum.
    """
    cdef Py_ssize_t n = len(owns)
    cdef Py_ssize_t i, j
    cdef double c, m, d, e
    cdef double[:, ::1] buf = np.empty((n if n > 0 else 1, 4), dtype=np.float64)
    out = [None] * n
    for i in range(n):
        own = owns[i]
        buf[i, 0] = own[0]
        buf[i, 1] = own[1]
        buf[i, 2] = own[2]
        buf[i, 3] = own[3]
    for i in range(n):
        if (
            i > 0
            and buf[i, 0] == buf[i - 1, 0]
            and buf[i, 1] == buf[i - 1, 1]
            and buf[i, 2] == buf[i - 1, 2]
            and buf[i, 3] == buf[i - 1, 3]
        ):
            out[i] = out[i - 1]
            continue
        c = m = d = e = 0.0
        for j in range(n):
            if j != i:
                c += buf[j, 0]
                m += buf[j, 1]
                d += buf[j, 2]
                e += buf[j, 3]
        if not (c == 0.0 and m == 0.0 and d == 0.0 and e == 0.0):
            out[i] = (c, m, d, e)
    return out


cdef extern from "Python.h":
    PyObject* _dict_get "PyDict_GetItemWithError"(object d, object key) except? NULL


def share_demands(list dems, dict pool, Py_ssize_t cap):
    """``sim_bridge.world._shared_demands.share_demands_py`` in C: each item of ``dems``
    that is a tuple of four exact floats, none NaN or ``-0.0``, is replaced in place by
    ``pool``'s equal tuple (added when it has none, the pool emptied first when it then holds
    ``cap``)."""
    cdef Py_ssize_t i, k, n = len(dems)
    cdef object dem, item
    cdef object last = None, last_out = None  # the last tuple shared, and what it became
    cdef PyObject* got
    cdef double x
    cdef bint ok
    for i in range(n):
        dem = dems[i]
        if dem is last:  # a run of one tuple (co-tenants of one demand): no hashing
            dems[i] = last_out
            continue
        if type(dem) is not tuple or len(<tuple>dem) != 4:
            continue
        ok = True
        for k in range(4):
            item = (<tuple>dem)[k]
            if type(item) is not float:
                ok = False
                break
            x = <double>item
            if x != x or (x == 0.0 and signbit(x)):
                ok = False
                break
        if not ok:
            continue
        got = _dict_get(pool, dem)
        last = dem
        if got is not NULL:
            last_out = <object>got
            dems[i] = last_out
            continue
        if len(pool) >= cap:
            pool.clear()
        pool[dem] = dem
        last_out = dem
