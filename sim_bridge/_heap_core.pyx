# cython: boundscheck=False, wraparound=False, initializedcheck=False
"""The engine's event heap in C (optional extension, built by pip install).

The heap holds ``(time, seq, kind, obj)`` events. On an FB-2010 hour at 33,000 x 10 the
loop pops ~9.5 entries per event of the model (deferred solves, their re-queues and stale
finish events) from a heap of ~100,000; ``heapq`` on tuples compares them through a pointer
to each tuple and one to its float, scattered over the process's memory, and those pops
were ~23% of a run's CPU without speculation (py-spy). :class:`EventHeap` keeps each entry's
time, sequence number and kind inline in one array, ordered exactly as the tuples are
(time, then sequence number, then kind, then the objects themselves, which never tie in
practice: an ``Attempt`` has no order and the tuples would raise), so the pops come in the
same order. ``sim_bridge._event_heap.PyEventHeap`` is the reference it is tested against
(``tests/test_event_heap.py``).
"""

cimport cython
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.object cimport Py_LT, PyObject, PyObject_RichCompareBool

from sim_bridge._attempt_core cimport Attempt as CAttempt
from sim_bridge._prefetch cimport prefetch
from sim_bridge._slots cimport _float_exact, _float_value, _list_item, _list_size


cdef struct Entry:
    double t
    long long seq
    long long kind
    Py_ssize_t slot  # where its object is in the heap's list of objects


@cython.final
cdef class EventHeap:
    """A binary min-heap of ``(time, seq, kind, obj)`` events with the order of
    ``heapq`` on those tuples; ``time`` is stored as a float.

    The objects live in a Python list (at a slot that never moves while the entry is in the
    heap; freed slots are reused), so the garbage collector sees the heap's references: a
    simulator stopped with events left, and its jobs, are collected like any cycle.

    Examples
    --------
    >>> from sim_bridge._heap_core import EventHeap
    >>> h = EventHeap()
    >>> h.push(2.0, 1, 3, "b"); h.push(1.0, 2, 3, "a")
    >>> len(h), h.next_time(), h.pop_next(), len(h)
    (2, 1.0, (1.0, 2, 3, 'a'), 1)
    """

    cdef Entry* _a
    cdef Py_ssize_t _n
    cdef Py_ssize_t _cap
    cdef list _objs  # the entries' objects by slot (None: a free slot)
    cdef Py_ssize_t* _free  # free slots, a stack
    cdef Py_ssize_t _n_free
    # what pop_live skips (skip_stale): the attempts' type (the compiled Attempt, whose
    # fields it reads), the closed attempts' stand-in, the nodes' speeds, the deferral's
    # factor, the event kinds and the running state
    cdef object _att_type
    cdef object _closed
    cdef list _speed
    cdef double _lower
    cdef long long _ev_solve, _ev_finish, _running
    cdef public long long requeued, skipped  # entries pop_live handled itself

    def __cinit__(self):
        self._a = NULL
        self._free = NULL
        self._n = 0
        self._cap = 0
        self._n_free = 0
        self._objs = []

    def __dealloc__(self):
        PyMem_Free(self._a)
        PyMem_Free(self._free)

    cdef inline int _lt(self, Entry* x, Entry* y) except -1:
        """``(x.t, x.seq, x.kind, x.obj) < (y.t, ...)`` as Python compares the tuples."""
        if x.t != y.t:
            return x.t < y.t
        if x.seq != y.seq:
            return x.seq < y.seq
        if x.kind != y.kind:
            return x.kind < y.kind
        a = self._objs[x.slot]
        b = self._objs[y.slot]
        if a is b:
            return 0  # identical objects are equal, as in a tuple
        return PyObject_RichCompareBool(a, b, Py_LT)

    cdef int _grow(self) except -1:
        cdef Py_ssize_t cap = 64 if self._cap == 0 else 2 * self._cap
        cdef Entry* a = <Entry*>PyMem_Realloc(self._a, cap * sizeof(Entry))
        if a == NULL:
            raise MemoryError()
        self._a = a
        cdef Py_ssize_t* f = <Py_ssize_t*>PyMem_Realloc(self._free, cap * sizeof(Py_ssize_t))
        if f == NULL:
            raise MemoryError()
        self._free = f
        self._cap = cap
        return 0

    def push(self, double t, long long seq, long long kind, object obj):
        """Add the event ``(t, seq, kind, obj)``."""
        self._push(t, seq, kind, obj)

    cdef int _push(self, double t, long long seq, long long kind, object obj) except -1:
        cdef Entry e
        cdef Py_ssize_t pos, parent
        if self._n == self._cap:
            self._grow()
        e.t = t
        e.seq = seq
        e.kind = kind
        if self._n_free:
            self._n_free -= 1
            e.slot = self._free[self._n_free]
            self._objs[e.slot] = obj
        else:
            e.slot = len(self._objs)
            self._objs.append(obj)
        pos = self._n
        try:  # sift the new entry up from the last leaf (heapq's _siftdown)
            while pos > 0:
                parent = (pos - 1) >> 1
                if self._lt(&e, &self._a[parent]):
                    self._a[pos] = self._a[parent]
                    pos = parent
                else:
                    break
        finally:  # a comparison that raised leaves a valid heap holding the new entry
            self._a[pos] = e
            self._n += 1
        return 0

    def pop_next(self):
        """Remove and return the first event, ``(t, seq, kind, obj)`` (IndexError if empty)."""
        cdef Entry first
        if self._n == 0:
            raise IndexError("pop from an empty event heap")
        obj = self._pop(&first)
        return (first.t, first.seq, first.kind, obj)

    def skip_stale(self, att_type, closed, list speed, double lower,
                   long long ev_solve, long long ev_finish, long long running):
        """Let :meth:`pop_live` handle the entries the engine's loop would pass over:
        ``att_type`` is the attempts' class (``sim_bridge._attempt_core.Attempt``, whose C
        fields it reads; any other class: nothing is skipped, returns False), ``closed`` the
        closed attempts' stand-in, ``speed`` the nodes' speeds, ``lower`` the deferral's
        factor, then the kinds of a deferred solve's and a finish's events and the running
        state (``sim_bridge._engine.Simulator._loop``, ``AttemptPhysics._solve_deferred``)."""
        self._att_type = None
        if att_type is not CAttempt:
            return False
        self._closed = closed
        self._speed = speed
        self._lower = lower
        self._ev_solve = ev_solve
        self._ev_finish = ev_finish
        self._running = running
        self._att_type = att_type
        return True

    def pop_live(self, double before, bint limited):
        """The first event the engine's loop acts on, ``(t, seq, kind, obj)``, or None when
        the heap is empty or (``limited``) its first entry is not before ``before`` (an
        arrival at ``before`` goes first: the loop takes it when ``before <= next_time()``).

        The entries the loop would pass over are handled here, in its order and with its
        operations (after :meth:`skip_stale`; else this is :meth:`pop_next`):

        * a deferred solve's (``ev_solve``) of an attempt no longer running or with nothing
          pending, or of the closed attempts' stand-in: dropped, as ``_solve_deferred``
          returns;
        * one of an older deferral, ``_solve = (seq, t0, work)`` with another ``seq``:
          pushed again at ``t0 + work * speed[node] * lower`` with that ``seq``, as
          ``_solve_deferred`` re-queues it;
        * a finish (``ev_finish``) of an attempt not running, whose ``_end`` is not the
          entry's time or which has a check pending (``_ckpt``), or of the stand-in: dropped,
          as the loop's stale finish.

        An attempt whose node's speed is not a float in ``speed`` is handed back as is, for
        the loop to read in Python."""
        cdef Entry e
        cdef PyObject* q
        cdef object obj
        cdef CAttempt att
        cdef long long seq0
        cdef Py_ssize_t node
        cdef double due
        while self._n:
            if limited and before <= self._a[0].t:  # the loop's test, NaN alike
                return None
            obj = self._pop(&e)
            if self._att_type is None:
                return (e.t, e.seq, e.kind, obj)
            if e.kind != self._ev_solve and e.kind != self._ev_finish:
                return (e.t, e.seq, e.kind, obj)
            if obj is self._closed:
                self.skipped += 1
                continue
            if type(obj) is not self._att_type:
                return (e.t, e.seq, e.kind, obj)
            att = <CAttempt>obj
            if e.kind == self._ev_finish:
                if att.state != self._running or att._end != e.t or att._ckpt is not None:
                    self.skipped += 1
                    continue  # killed meanwhile, or re-solved: a stale finish
                return (e.t, e.seq, e.kind, obj)
            # a deferred solve
            if att.state != self._running or not att.has_solve:
                self.skipped += 1
                continue  # closed meanwhile, or re-solved without deferral
            seq0 = att.solve_seq
            if seq0 == e.seq:
                return (e.t, e.seq, e.kind, obj)  # its solve: the loop makes it
            node = <Py_ssize_t>att.node
            if node < 0 or node >= _list_size(self._speed):
                return (e.t, e.seq, e.kind, obj)
            q = _list_item(self._speed, node)
            if not _float_exact(q):
                return (e.t, e.seq, e.kind, obj)
            # AttemptPhysics._due: pend[1] + pend[2] * speed[node] * _LOWER, in that order
            due = att.solve_t + (att.solve_left * _float_value(q)) * self._lower
            self._push(due, seq0, self._ev_solve, obj)
            self.requeued += 1
        return None

    cdef object _pop(self, Entry* out):
        """Remove the first entry (the heap is not empty): its fields in ``out``, its object
        returned."""
        cdef Entry first, last
        cdef Py_ssize_t pos, child, n
        first = self._a[0]
        n = self._n - 1
        if n:
            last = self._a[n]
            # move the smaller child up into the root's hole down to a leaf, then sift the
            # last entry up from there (heapq's _siftup, fewer comparisons than a plain sift)
            pos = 0
            child = 1
            while child < n:
                # the next level's two pairs of children, asked for while this one's are
                # compared (128 bytes: a big heap's deep levels are outside the caches)
                if 4 * pos + 3 < n:
                    prefetch(&self._a[4 * pos + 3])
                    prefetch(<char*>&self._a[4 * pos + 3] + 64)
                if child + 1 < n and not self._lt(&self._a[child], &self._a[child + 1]):
                    child += 1
                self._a[pos] = self._a[child]
                pos = child
                child = 2 * pos + 1
            while pos > 0:
                child = (pos - 1) >> 1  # the parent
                if self._lt(&last, &self._a[child]):
                    self._a[pos] = self._a[child]
                    pos = child
                else:
                    break
            self._a[pos] = last
        self._n = n
        obj = self._objs[first.slot]
        self._objs[first.slot] = None
        self._free[self._n_free] = first.slot  # room: at most _n + _n_free <= _cap slots
        self._n_free += 1
        out[0] = first
        return obj

    def next_time(self):
        """The first event's time (IndexError if empty)."""
        if self._n == 0:
            raise IndexError("an empty event heap has no next event")
        return self._a[0].t

    def replace_objects(self, fn):
        """Give each entry the object ``fn(kind, obj)`` returns for it (its order is its
        time, sequence number and kind, so the heap stays as it is); returns how many
        objects changed. ``PyEventHeap.replace_objects`` is its reference."""
        cdef Py_ssize_t i, slot, changed = 0
        cdef object obj, new
        for i in range(self._n):
            slot = self._a[i].slot
            obj = self._objs[slot]
            new = fn(self._a[i].kind, obj)
            if new is not obj:
                self._objs[slot] = new
                changed += 1
        return changed

    def __len__(self):
        return self._n

    def __bool__(self):
        return self._n > 0

    def __getitem__(self, Py_ssize_t i):
        """The entry at position ``i`` of the heap's array (``h[0]`` is the first event)."""
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("event heap index out of range")
        e = self._a[i]
        return (e.t, e.seq, e.kind, self._objs[e.slot])

    def __iter__(self):
        """The entries in the heap's array order (not sorted), as tuples."""
        return iter([self[i] for i in range(self._n)])

    def __reduce__(self):
        raise TypeError("an EventHeap cannot be pickled")
