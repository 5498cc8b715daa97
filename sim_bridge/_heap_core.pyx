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
from cpython.object cimport Py_LT, PyObject_RichCompareBool


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

    def pop_next(self):
        """Remove and return the first event, ``(t, seq, kind, obj)`` (IndexError if empty)."""
        cdef Entry first, last
        cdef Py_ssize_t pos, child, n
        if self._n == 0:
            raise IndexError("pop from an empty event heap")
        first = self._a[0]
        n = self._n - 1
        if n:
            last = self._a[n]
            # move the smaller child up into the root's hole down to a leaf, then sift the
            # last entry up from there (heapq's _siftup, fewer comparisons than a plain sift)
            pos = 0
            child = 1
            while child < n:
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
        return (first.t, first.seq, first.kind, obj)

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
