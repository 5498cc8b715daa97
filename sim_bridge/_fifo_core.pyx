# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The compiled event loop for runs without speculation under FIFO placement.

It is the general loop of ``sim_bridge._engine.Simulator`` specialised to the case where no
policy hook can act (speculation ``none`` or any policy that overrides no hook and has no
scan interval; placement ``fifo``): arrivals are merged with a binary heap of attempt ends
keyed by ``(end, launch order)``, free slots are kept in least-recently-freed order, waiting
jobs in arrival order, and every floating-point operation is written in the order the Python
engine performs it, so the two produce bit-identical tables (``tests/test_compiled_engine.py``
checks this on many configurations). State lives in flat C arrays; nothing is allocated per
event.
"""

from libc.math cimport exp, pow
from libc.stdlib cimport free, malloc

import numpy as np

from sim_bridge._cfloat cimport py_floordiv

cdef double _INV_TAU1 = 1.0 / 60.0
cdef double _INV_TAU5 = 1.0 / 300.0
cdef double _INV_TAU15 = 1.0 / 900.0
cdef enum:
    MAXP = 64


cdef class FifoCore:
    """Run the FIFO / no-speculation model on flat arrays (see the module docstring).

    Construct it with the per-job and per-task arrays prepared by
    ``sim_bridge._compiled``, call :meth:`run` until :attr:`done`, then read the attempt
    and job columns.
    """

    # inputs
    cdef int n_nodes, slots, n_jobs, n_tasks, ideal, noise, dist_mode
    cdef double interference, tail_pressure, dt
    cdef const double[::1] arrival, job_alpha, work, u0, tail, speed
    cdef const long long[::1] task_start, task_job, n_map, n_red, pid0, pid1
    cdef object cluster
    # cluster paths (non-ideal): one pointer per profile, refreshed after an extension
    cdef int n_prof
    cdef double* cum_p[MAXP]
    cdef double* rate_p[MAXP]
    cdef Py_ssize_t cum_w, rate_w
    cdef long long horizon
    cdef list _keep
    # state
    cdef public double now
    cdef public long long events
    cdef long long ai, n_launched, n_finished_jobs
    cdef int n_free, n_waiting_tasks
    cdef int* fcount
    cdef int* fnext
    cdef int* fprev
    cdef int fhead, ftail
    cdef int* node_running
    cdef double* l1
    cdef double* l5
    cdef double* l15
    cdef double* load_t
    cdef long long* heap
    cdef long long heap_n
    cdef long long* wheap
    cdef long long wheap_n
    cdef long long* pend_next
    cdef long long* pend_end
    cdef long long* stage_left0
    cdef long long* stage_left1
    # outputs (attempt = task in this model: one attempt per task, in launch order)
    cdef public object att_task, att_node, att_launch, att_end, att_rstate, job_finish
    cdef long long[::1] o_task
    cdef long long[::1] o_node
    cdef double[::1] o_launch
    cdef double[::1] o_end
    cdef double[:, ::1] o_rstate
    cdef double[::1] o_finish

    def __cinit__(self):
        self.fcount = NULL
        self.fnext = NULL
        self.fprev = NULL
        self.node_running = NULL
        self.l1 = NULL
        self.l5 = NULL
        self.l15 = NULL
        self.load_t = NULL
        self.heap = NULL
        self.wheap = NULL
        self.pend_next = NULL
        self.pend_end = NULL
        self.stage_left0 = NULL
        self.stage_left1 = NULL

    def __init__(
        self,
        cluster,
        double[::1] arrival,
        long long[::1] task_start,
        long long[::1] task_job,
        long long[::1] n_map,
        long long[::1] n_red,
        double[::1] job_alpha,
        long long[::1] pid0,
        long long[::1] pid1,
        double[::1] work,
        double[::1] u0,
        *,
        bint noise,
        bint dist_mode,
        double interference,
        double tail_pressure,
    ):
        cdef int i
        self.cluster = cluster
        self.n_nodes = cluster.n_nodes
        self.slots = cluster.slots
        self.ideal = 1 if cluster.ideal else 0
        self.dt = cluster.dt
        self.noise = noise
        self.dist_mode = dist_mode
        self.interference = interference
        self.tail_pressure = tail_pressure
        self.n_jobs = arrival.shape[0]
        self.n_tasks = work.shape[0]
        self.arrival = arrival
        self.task_start = task_start
        self.task_job = task_job
        self.n_map = n_map
        self.n_red = n_red
        self.job_alpha = job_alpha
        self.pid0 = pid0
        self.pid1 = pid1
        self.work = work
        self.u0 = u0
        self.tail = np.ascontiguousarray(cluster.tail, dtype=float)
        self.speed = np.ascontiguousarray(cluster.speed, dtype=float)
        self._keep = []
        self.n_prof = 0
        self.horizon = 0
        if not self.ideal and not dist_mode:
            self._refresh_paths()
        n = self.n_nodes
        self.fcount = <int*> malloc(n * sizeof(int))
        self.fnext = <int*> malloc(n * sizeof(int))
        self.fprev = <int*> malloc(n * sizeof(int))
        self.node_running = <int*> malloc(n * sizeof(int))
        self.l1 = <double*> malloc(n * sizeof(double))
        self.l5 = <double*> malloc(n * sizeof(double))
        self.l15 = <double*> malloc(n * sizeof(double))
        self.load_t = <double*> malloc(n * sizeof(double))
        self.heap = <long long*> malloc((self.n_tasks + 1) * sizeof(long long))
        self.wheap = <long long*> malloc((self.n_jobs + 1) * sizeof(long long))
        self.pend_next = <long long*> malloc((self.n_jobs + 1) * sizeof(long long))
        self.pend_end = <long long*> malloc((self.n_jobs + 1) * sizeof(long long))
        self.stage_left0 = <long long*> malloc((self.n_jobs + 1) * sizeof(long long))
        self.stage_left1 = <long long*> malloc((self.n_jobs + 1) * sizeof(long long))
        if (
            self.fcount == NULL or self.fnext == NULL or self.fprev == NULL
            or self.node_running == NULL or self.l1 == NULL or self.l5 == NULL
            or self.l15 == NULL or self.load_t == NULL or self.heap == NULL
            or self.wheap == NULL or self.pend_next == NULL or self.pend_end == NULL
            or self.stage_left0 == NULL or self.stage_left1 == NULL
        ):
            raise MemoryError("FifoCore: cannot allocate the engine state")
        # every node free, in node order (the Python engine's initial dict order)
        for i in range(n):
            self.fcount[i] = self.slots
            self.fnext[i] = i + 1 if i + 1 < n else -1
            self.fprev[i] = i - 1
            self.node_running[i] = 0
            self.l1[i] = 0.0
            self.l5[i] = 0.0
            self.l15[i] = 0.0
            self.load_t[i] = 0.0
        self.fhead = 0
        self.ftail = n - 1
        self.n_free = n * self.slots
        self.n_waiting_tasks = 0
        self.heap_n = 0
        self.wheap_n = 0
        self.ai = 0
        self.n_launched = 0
        self.n_finished_jobs = 0
        self.now = 0.0
        self.events = 0
        self.att_task = np.empty(self.n_tasks, dtype=np.int64)
        self.att_node = np.empty(self.n_tasks, dtype=np.int64)
        self.att_launch = np.empty(self.n_tasks, dtype=float)
        self.att_end = np.empty(self.n_tasks, dtype=float)
        self.att_rstate = np.empty((self.n_tasks, 4), dtype=float)
        self.job_finish = np.full(self.n_jobs, np.nan)
        self.o_task = self.att_task
        self.o_node = self.att_node
        self.o_launch = self.att_launch
        self.o_end = self.att_end
        self.o_rstate = self.att_rstate
        self.o_finish = self.job_finish

    def __dealloc__(self):
        free(self.fcount)
        free(self.fnext)
        free(self.fprev)
        free(self.node_running)
        free(self.l1)
        free(self.l5)
        free(self.l15)
        free(self.load_t)
        free(self.heap)
        free(self.wheap)
        free(self.pend_next)
        free(self.pend_end)
        free(self.stage_left0)
        free(self.stage_left1)

    # ------------------------------------------------------------------ cluster paths
    cdef int _refresh_paths(self) except -1:
        cdef double[:, ::1] mv
        cl = self.cluster
        n_prof = len(cl._profiles)
        if n_prof > MAXP:
            raise ValueError(f"the compiled engine supports at most {MAXP} profiles")
        keep = []
        for p in range(n_prof):
            cum = np.ascontiguousarray(cl._cum[p], dtype=float)
            rate = np.ascontiguousarray(cl._rate[p], dtype=float)
            keep.append(cum)
            keep.append(rate)
            mv = cum
            self.cum_p[p] = &mv[0, 0]
            self.cum_w = mv.shape[1]
            mv = rate
            self.rate_p[p] = &mv[0, 0]
            self.rate_w = mv.shape[1]
        self._keep = keep
        self.n_prof = n_prof
        self.horizon = cl.horizon_steps
        return 0

    cdef int _extend(self) except -1:
        self.cluster._extend()
        return self._refresh_paths()

    # ------------------------------------------------------------------ heaps
    cdef inline bint _before(self, long long a, long long b) noexcept nogil:
        cdef double ea = self.o_end[a]
        cdef double eb = self.o_end[b]
        return ea < eb or (ea == eb and a < b)

    cdef inline void _heap_push(self, long long a) noexcept nogil:
        cdef long long i = self.heap_n
        cdef long long parent
        self.heap_n += 1
        while i > 0:
            parent = (i - 1) >> 1
            if self._before(a, self.heap[parent]):
                self.heap[i] = self.heap[parent]
                i = parent
            else:
                break
        self.heap[i] = a

    cdef inline long long _heap_pop(self) noexcept nogil:
        cdef long long top = self.heap[0]
        cdef long long last
        cdef long long i = 0
        cdef long long c
        cdef long long n
        self.heap_n -= 1
        n = self.heap_n
        if n > 0:
            last = self.heap[n]
            while True:
                c = 2 * i + 1
                if c >= n:
                    break
                if c + 1 < n and self._before(self.heap[c + 1], self.heap[c]):
                    c += 1
                if self._before(self.heap[c], last):
                    self.heap[i] = self.heap[c]
                    i = c
                else:
                    break
            self.heap[i] = last
        return top

    cdef inline void _wpush(self, long long j) noexcept nogil:
        cdef long long i = self.wheap_n
        cdef long long parent
        self.wheap_n += 1
        while i > 0:
            parent = (i - 1) >> 1
            if j < self.wheap[parent]:
                self.wheap[i] = self.wheap[parent]
                i = parent
            else:
                break
        self.wheap[i] = j

    cdef inline void _wpop(self) noexcept nogil:
        cdef long long last
        cdef long long i = 0
        cdef long long c
        cdef long long n
        self.wheap_n -= 1
        n = self.wheap_n
        if n > 0:
            last = self.wheap[n]
            while True:
                c = 2 * i + 1
                if c >= n:
                    break
                if c + 1 < n and self.wheap[c + 1] < self.wheap[c]:
                    c += 1
                if self.wheap[c] < last:
                    self.wheap[i] = self.wheap[c]
                    i = c
                else:
                    break
            self.wheap[i] = last

    # ------------------------------------------------------------------ loads
    # the C copy of sim_bridge.world._attempts.decay_loads, the Python reference (keep the
    # two alike: tests/test_compiled_engine.py compares the engines' rows, load averages
    # included, for equality)
    cdef inline void _touch(self, int node, int n) noexcept nogil:
        cdef double dt = self.now - self.load_t[node]
        if dt > 0.0:
            self.l1[node] = n + (self.l1[node] - n) * exp(-dt * _INV_TAU1)
            self.l5[node] = n + (self.l5[node] - n) * exp(-dt * _INV_TAU5)
            self.l15[node] = n + (self.l15[node] - n) * exp(-dt * _INV_TAU15)
            self.load_t[node] = self.now

    # ------------------------------------------------------------------ launch / finish
    cdef int _launch(self, long long task, long long job, int stage) except -1:
        cdef int node = self.fhead
        cdef int rb = self.node_running[node]
        cdef double now = self.now
        cdef long long uid = self.n_launched
        cdef double w, mult, alpha, press, u, base, end, target, t_fast
        cdef double r0 = 0.0
        cdef double c0 = 0.0
        cdef long long k0 = 0
        cdef long long k, lo, hi, mid, pid
        cdef double* row
        cdef double* rrow
        self.n_launched = uid + 1
        self._touch(node, rb)
        self.o_task[uid] = task
        self.o_node[uid] = node
        self.o_launch[uid] = now
        self.o_rstate[uid, 0] = rb
        self.o_rstate[uid, 1] = self.l1[node]
        self.o_rstate[uid, 2] = self.l5[node]
        self.o_rstate[uid, 3] = self.l15[node]
        if self.dist_mode:
            end = now + self.work[task] * 1.0 * self.u0[task]
        else:
            pid = self.pid0[job] if stage == 0 else self.pid1[job]
            if not self.ideal:
                k0 = <long long> py_floordiv(now, self.dt)
                while k0 >= self.horizon:
                    self._extend()
                r0 = self.rate_p[pid][node * self.rate_w + k0]
                c0 = self.cum_p[pid][node * self.cum_w + k0] + (now - k0 * self.dt) * r0
            if self.noise:
                u = self.u0[task]
                alpha = self.job_alpha[job] * self.tail[node]
                if self.tail_pressure != 0.0:
                    press = 0.0 if self.ideal else 1.0 - r0 * self.speed[node]
                    alpha *= 1.0 - self.tail_pressure * press
                base = 1.0 - u
                if base == 0.0:
                    raise ZeroDivisionError("0.0 cannot be raised to a negative power")
                mult = pow(base, -1.0 / alpha)
            else:
                mult = 1.0
            w = self.work[task] * mult * 1.0
            if self.interference != 0.0:
                w *= 1.0 + self.interference * rb / self.slots
            if self.ideal:
                end = now + w
            else:
                t_fast = now + w / r0
                if t_fast <= (k0 + 1) * self.dt:
                    end = t_fast
                else:
                    target = c0 + w
                    while target >= self.cum_p[pid][node * self.cum_w + self.cum_w - 1]:
                        self._extend()
                    row = self.cum_p[pid] + node * self.cum_w
                    # searchsorted(row, target, side="right") - 1
                    lo = 0
                    hi = self.cum_w
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if target < row[mid]:
                            hi = mid
                        else:
                            lo = mid + 1
                    k = lo - 1
                    rrow = self.rate_p[pid] + node * self.rate_w
                    end = k * self.dt + (target - row[k]) / rrow[k]
        self.o_end[uid] = end
        self.node_running[node] = rb + 1
        # take the slot (always the head: the least recently freed node with a free slot)
        self.fcount[node] -= 1
        if self.fcount[node] == 0:
            self._unlink(node)
        self.n_free -= 1
        self._heap_push(uid)
        return 0

    cdef inline void _unlink(self, int node) noexcept nogil:
        cdef int p = self.fprev[node]
        cdef int q = self.fnext[node]
        if p >= 0:
            self.fnext[p] = q
        else:
            self.fhead = q
        if q >= 0:
            self.fprev[q] = p
        else:
            self.ftail = p

    cdef inline void _release(self, int node) noexcept nogil:
        if self.fcount[node] > 0:
            self.fcount[node] += 1
        else:
            self.fcount[node] = 1
            self.fprev[node] = self.ftail
            self.fnext[node] = -1
            if self.ftail >= 0:
                self.fnext[self.ftail] = node
            else:
                self.fhead = node
            self.ftail = node
        self.n_free += 1

    cdef inline void _finish(self, long long uid) noexcept nogil:
        cdef int node = <int> self.o_node[uid]
        cdef long long task = self.o_task[uid]
        cdef int n = self.node_running[node]
        cdef long long job = self.task_job[task]
        cdef long long start = self.task_start[job]
        self._touch(node, n)
        self.node_running[node] = n - 1
        self._release(node)
        if task - start < self.n_map[job]:
            self.stage_left0[job] -= 1
            if self.stage_left0[job] == 0 and self.stage_left1[job] > 0:
                self.pend_next[job] = start + self.n_map[job]
                self.pend_end[job] = start + self.n_map[job] + self.n_red[job]
                self.n_waiting_tasks += <int> self.n_red[job]
                self._wpush(job)
        else:
            self.stage_left1[job] -= 1
        if self.stage_left0[job] == 0 and self.stage_left1[job] == 0:
            self.o_finish[job] = self.now
            self.n_finished_jobs += 1

    cdef int _assign(self) except -1:
        cdef long long job, task
        while self.n_free > 0 and self.wheap_n > 0:
            job = self.wheap[0]
            task = self.pend_next[job]
            self.pend_next[job] = task + 1
            self.n_waiting_tasks -= 1
            if task + 1 == self.pend_end[job]:
                self._wpop()
            self._launch(task, job, 0 if task - self.task_start[job] < self.n_map[job] else 1)
        return 0

    # ------------------------------------------------------------------ loop
    @property
    def done(self) -> bool:
        """Every job arrived and finished."""
        return self.ai == self.n_jobs and self.heap_n == 0

    @property
    def jobs_finished(self) -> int:
        return self.n_finished_jobs

    def run(self, long long until_events):
        """Process events until ``events >= until_events`` or the run is over."""
        cdef long long j, uid, start
        while self.events < until_events:
            if self.ai < self.n_jobs and (
                self.heap_n == 0 or self.arrival[self.ai] <= self.o_end[self.heap[0]]
            ):
                j = self.ai
                self.ai += 1
                self.now = self.arrival[j]
                self.events += 1
                start = self.task_start[j]
                self.pend_next[j] = start
                self.pend_end[j] = start + self.n_map[j]
                self.stage_left0[j] = self.n_map[j]
                self.stage_left1[j] = self.n_red[j]
                self.n_waiting_tasks += <int> self.n_map[j]
                self._wpush(j)
            elif self.heap_n > 0:
                uid = self._heap_pop()
                self.now = self.o_end[uid]
                self.events += 1
                self._finish(uid)
            else:
                break
            if self.n_free > 0 and self.n_waiting_tasks > 0:
                self._assign()
