# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The node counters of ``sim_bridge._cluster.Cluster`` computed row by row in C.

``Cluster.counters`` (the vectorised read a trace records at every launch) and
``Cluster.counters_now`` (the single read a policy makes) both go through
:class:`CounterSynth` when this extension is built, so a policy reading a node sees exactly
the values a launch at that instant records. A single read costs a microsecond or two.

The model is the one of ``sim_bridge._cluster._reference_counters`` (the NumPy reference,
used when the extension is absent), written in the same operation order; the transcendental
functions (log, cos, exp, pow) are the C library's on both paths (the reference's through
``sim_bridge._portable_math``), so the two agree bit for bit
(``tests/test_counters_core.py`` checks it).
"""

from libc.math cimport cos, exp, log, pow, sqrt

import numpy as np

from sim_bridge._cfloat cimport py_floordiv

cdef enum:
    N_COUNTERS = 29

cdef unsigned long long _K_SEED = 0x9E3779B97F4A7C15ULL
cdef unsigned long long _K_NODE = 0xBF58476D1CE4E5B9ULL
cdef unsigned long long _K_SAMPLE = 0x94D049BB133111EBULL
cdef unsigned long long _K_COUNTER = 0xD6E8FEB86659FD93ULL
cdef unsigned long long _SALT1 = 0x632BE59BD9B4E019ULL
cdef unsigned long long _SALT2 = 0x2545F4914F6CDD1DULL
cdef double _TWO_PI = 2.0 * 3.141592653589793
cdef double _INV_2_53 = 1.0 / 9007199254740992.0


cdef inline double _uniform(unsigned long long x, unsigned long long salt) noexcept nogil:
    cdef unsigned long long z = x + salt
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    z = z ^ (z >> 31)
    return (<double>(z >> 11) + 0.5) * _INV_2_53


cdef inline double _normal(unsigned long long base, int counter) noexcept nogil:
    """Standard normal noise of ``(seed, node, sample)`` (folded into ``base``) and counter:
    SplitMix64 finaliser + Box-Muller, as ``sim_bridge._cluster._hash_normal``."""
    cdef unsigned long long x = base ^ (<unsigned long long>(counter + 1)) * _K_COUNTER
    cdef double u1 = _uniform(x, _SALT1)
    cdef double u2 = _uniform(x, _SALT2)
    return sqrt(-2.0 * log(u1)) * cos(_TWO_PI * u2)


cdef inline double _clip(double x, double lo, double hi) noexcept nogil:
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


cdef inline double _low(double x, double lo) noexcept nogil:
    return lo if x < lo else x


cdef class CounterSynth:
    """Counter synthesis of one cluster (seed, node factors, slots, background levels).

    Parameters
    ----------
    seed : int
        The cluster's seed (only its low 32 bits enter the noise, as in the NumPy path).
    cores, speed : float64 arrays (n_nodes,)
    slots : int
    dt : float
        Step of the background levels (s).

    Call :meth:`set_levels` with the ``(4, n_nodes, steps)`` background levels (again each
    time the cluster extends or trims them) before reading; ``base`` is the absolute step of
    their first column (a cluster that keeps only a window of its paths).
    """

    cdef unsigned long long seed_term
    cdef long long seed_low
    cdef const double[::1] cores, speed
    cdef double slots, dt
    cdef const double[:, :, ::1] levels
    cdef Py_ssize_t horizon, n_nodes, base
    cdef object _keep

    def __init__(self, long long seed, cores, speed, int slots, double dt):
        self.seed_low = seed & 0xFFFFFFFF
        self.seed_term = (<unsigned long long>self.seed_low) * _K_SEED
        self.cores = np.ascontiguousarray(cores, dtype=np.float64)
        self.speed = np.ascontiguousarray(speed, dtype=np.float64)
        self.n_nodes = self.cores.shape[0]
        self.slots = slots
        self.dt = dt
        self.horizon = 0
        self.base = 0

    def __reduce__(self):
        return _rebuild, (
            self.seed_low, np.asarray(self.cores), np.asarray(self.speed), int(self.slots),
            self.dt, self._keep, self.base,
        )

    def set_levels(self, levels, Py_ssize_t base=0) -> None:
        """The background levels ``(4, n_nodes, steps)`` (kept by reference) of the steps
        ``base, base + 1, ...``."""
        if base < 0:
            raise ValueError(f"base must be >= 0, got {base}")
        arr = np.ascontiguousarray(levels, dtype=np.float64)
        if arr.ndim != 3 or arr.shape[0] != 4 or arr.shape[1] != self.n_nodes:
            raise ValueError(f"levels must have shape (4, {self.n_nodes}, steps), got {arr.shape}")
        self._keep = arr
        self.levels = arr
        self.base = base
        self.horizon = base + arr.shape[2]

    cdef void _row(
        self, long long node, double time, double running, double load1, double load5,
        double load15, double* out, Py_ssize_t stride, double d0, double d1, double d2,
        double d3,
    ) noexcept nogil:
        # d0..d3: the co-located tasks' demand on (cpu, mem, disk, net), added to the levels
        # (capped at 1) as the tasks' rates see them
        cdef long long k = <long long>py_floordiv(time, self.dt) - self.base
        self._row_at(
            node, time, self.levels[0, node, k], self.levels[1, node, k],
            self.levels[2, node, k], self.levels[3, node, k], running, load1, load5, load15,
            out, stride, d0, d1, d2, d3,
        )

    cdef void _row_at(
        self, long long node, double time, double lv0, double lv1, double lv2, double lv3,
        double running, double load1, double load5, double load15, double* out,
        Py_ssize_t stride, double d0, double d1, double d2, double d3,
    ) noexcept nogil:
        # _row with the node's background levels at ``time`` given (lv0..lv3)
        cdef long long sample = <long long>py_floordiv(time, 10.0)
        cdef double cpu = _clip(lv0 + d0, 0.0, 1.0)
        cdef double mem = _clip(lv1 + d1, 0.0, 1.0)
        cdef double disk = _clip(lv2 + d2, 0.0, 1.0)
        cdef double net = _clip(lv3 + d3, 0.0, 1.0)
        cdef double cores = self.cores[node]
        cdef double occ = running / self.slots
        cdef unsigned long long base = (
            self.seed_term
            ^ (<unsigned long long>node) * _K_NODE
            ^ (<unsigned long long>sample) * _K_SAMPLE
        )
        cdef double user, sys_, iow, bg_run
        cdef double thr = 4.0
        user = _clip(100.0 * (0.7 * cpu + 0.25 * occ) + 3.0 * _normal(base, 0), 0.0, 100.0)
        sys_ = _clip(
            100.0 * (0.06 * cpu + 0.04 * occ + 0.04 * net) + 1.0 * _normal(base, 1), 0.0, 100.0
        )
        iow = _clip(100.0 * 0.35 * (disk * disk) + 2.0 * _normal(base, 2), 0.0, 100.0)
        out[0] = user
        out[stride] = sys_
        out[2 * stride] = iow
        out[3 * stride] = _clip(100.0 - user - sys_ - iow, 0.0, 100.0)
        bg_run = cores * cpu * 0.3
        out[4 * stride] = _low(bg_run + thr * running + 1.5 * _normal(base, 4), 0.0)
        out[5 * stride] = _low(thr * load1 + bg_run + 0.8 * _normal(base, 5), 0.0)
        out[6 * stride] = _low(thr * load5 + bg_run + 0.4 * _normal(base, 6), 0.0)
        out[7 * stride] = _low(thr * load15 + bg_run + 0.2 * _normal(base, 7), 0.0)
        out[8 * stride] = running
        out[9 * stride] = self.slots - running
        out[10 * stride] = _clip(
            100.0 * (0.25 + 0.65 * mem + 0.05 * occ) + 2.0 * _normal(base, 10), 0.0, 100.0
        )
        out[11 * stride] = _clip(100.0 * 0.3 * (1.0 - mem) + 2.0 * _normal(base, 11), 0.0, 100.0)
        out[12 * stride] = _clip(
            150.0 * _low(mem - 0.7, 0.0) + 1.0 * _normal(base, 12), 0.0, 100.0
        )
        out[13 * stride] = 800.0 * (1.0 + 3.0 * mem + occ) * exp(0.2 * _normal(base, 13))
        out[14 * stride] = _low(40.0 * _low(mem - 0.5, 0.0) + 2.0 * _normal(base, 14), 0.0)
        out[15 * stride] = _low(0.05 + 0.8 * mem * cpu + 0.05 * _normal(base, 15), 0.0)
        out[16 * stride] = _low(1.0 + 4.0 * cpu * mem + 0.3 * _normal(base, 16), 0.0)
        out[17 * stride] = _clip(100.0 * disk + 5.0 * _normal(base, 17), 0.0, 100.0)
        out[18 * stride] = _low(
            4.0 * (disk * disk) / (1.05 - disk) + 0.3 * _normal(base, 18), 0.0
        )
        out[19 * stride] = 40000.0 * (disk + 0.1 * occ) * exp(0.25 * _normal(base, 19))
        out[20 * stride] = 25000.0 * (disk + 0.1 * occ) * exp(0.25 * _normal(base, 20))
        out[21 * stride] = _low(2.0 + 30.0 * (disk * disk) + 1.5 * _normal(base, 21), 0.0)
        out[22 * stride] = 60000.0 * (net + 0.05 * occ) * exp(0.25 * _normal(base, 22))
        out[23 * stride] = 50000.0 * (net + 0.05 * occ) * exp(0.25 * _normal(base, 23))
        out[24 * stride] = _low(8.0 * pow(net, 3.0) + 0.3 * _normal(base, 24), 0.0)
        out[25 * stride] = 4000.0 * (1.0 + 2.0 * cpu + occ) * exp(0.15 * _normal(base, 25))
        out[26 * stride] = 3000.0 * (1.0 + net + disk) * exp(0.15 * _normal(base, 26))
        out[27 * stride] = cores
        out[28 * stride] = 2600.0 / self.speed[node] * exp(0.01 * _normal(base, 28))

    cdef int _check(self, long long node, double time) except -1:
        self._check_given(node, time)
        if <long long>py_floordiv(time, self.dt) >= self.horizon:
            raise IndexError(f"time {time!r} is beyond the background levels' horizon")
        if <long long>py_floordiv(time, self.dt) < self.base:
            raise IndexError(
                f"time {time!r} is before the background levels kept (from step {self.base})"
            )
        return 0

    cdef int _check_given(self, long long node, double time) except -1:
        # a reading's node and time (its levels given: no path step is read)
        if not (0 <= node < self.n_nodes):
            raise ValueError(f"node must be in [0, {self.n_nodes}), got {node}")
        if not (time >= 0.0):
            raise ValueError(f"time must be >= 0, got {time!r}")
        return 0

    def row(
        self, long long node, double time, double running, double load1, double load5,
        double load15, double d0=0.0, double d1=0.0, double d2=0.0, double d3=0.0,
    ) -> list:
        """The 29 counters of ``node`` at ``time`` (``COUNTER_NAMES`` order), as a list;
        ``d0..d3``: the co-located tasks' demand on (cpu, mem, disk, net)."""
        cdef double out[N_COUNTERS]
        self._check(node, time)
        self._row(node, time, running, load1, load5, load15, out, 1, d0, d1, d2, d3)
        return [out[i] for i in range(N_COUNTERS)]

    def rows(
        self, nodes, times, running, load1, load5, load15, demand=None, levels=None
    ) -> np.ndarray:
        """:meth:`row` of every ``(nodes[i], times[i], ...)``: an array ``(29, len(nodes))``;
        ``demand``: ``(4, len(nodes))`` co-located demand (None: none); ``levels``: the
        ``(4, len(nodes))`` background levels of each node at its time, read when the
        reading was taken (None: read from :meth:`set_levels`' levels, which must still
        hold those steps)."""
        arrays = [np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
                  for a in (times, running, load1, load5, load15)]
        n_rows = arrays[0].shape[0]
        if demand is None:
            dem = np.zeros((4, n_rows))
        else:
            dem = np.ascontiguousarray(demand, dtype=np.float64)
            if dem.shape != (4, n_rows):
                raise ValueError(f"demand must have shape (4, {n_rows}), got {dem.shape}")
        given = levels is not None
        if given:
            lev = np.ascontiguousarray(levels, dtype=np.float64)
            if lev.shape != (4, n_rows):
                raise ValueError(f"levels must have shape (4, {n_rows}), got {lev.shape}")
        else:
            lev = np.zeros((4, 0))
        cdef const double[:, ::1] lv = lev
        cdef const double[:, ::1] dv = dem
        cdef const long long[::1] nd = np.ascontiguousarray(nodes, dtype=np.int64).reshape(-1)
        cdef Py_ssize_t n = nd.shape[0], i
        if any(a.shape[0] != n for a in arrays):
            raise ValueError("nodes, times, running and the load averages differ in length")
        cdef const double[::1] tm = arrays[0]
        cdef const double[::1] rn = arrays[1]
        cdef const double[::1] l1 = arrays[2]
        cdef const double[::1] l5 = arrays[3]
        cdef const double[::1] l15 = arrays[4]
        for i in range(n):
            if given:
                self._check_given(nd[i], tm[i])
            else:
                self._check(nd[i], tm[i])
        out = np.empty((N_COUNTERS, n), dtype=np.float64)
        cdef double[:, ::1] o = out
        if n and given:
            with nogil:
                for i in range(n):
                    self._row_at(
                        nd[i], tm[i], lv[0, i], lv[1, i], lv[2, i], lv[3, i], rn[i], l1[i],
                        l5[i], l15[i], &o[0, i], n, dv[0, i], dv[1, i], dv[2, i], dv[3, i],
                    )
        elif n:
            with nogil:
                for i in range(n):
                    self._row(
                        nd[i], tm[i], rn[i], l1[i], l5[i], l15[i], &o[0, i], n,
                        dv[0, i], dv[1, i], dv[2, i], dv[3, i],
                    )
        return out


def _rebuild(seed, cores, speed, slots, dt, levels, base=0):
    """Unpickle a :class:`CounterSynth` (a cluster is picklable and deep-copyable)."""
    synth = CounterSynth(seed, cores, speed, slots, dt)
    if levels is not None:
        synth.set_levels(levels, base)
    return synth
