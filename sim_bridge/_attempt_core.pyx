# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled :class:`Attempt` (optional extension, built by pip install).

The same class as ``sim_bridge._jobs.PyAttempt``, the reference that runs without a C
compiler, with its numbers held in the object as C fields: its uid, index, node and state,
its launch time, start fraction and work, and the physics' segment, end and running sum
(``_seg_t``, ``_seg_done``, ``_end``, ``_c0``). Its last read under co-located demand
(``_prog``) and its deferred solve (``_solve``) are C fields too, read and written in Python
as the pairs and triples the reference holds (None when unset). A speculation scan reads
every live attempt every few seconds, and each re-solve reads a node's co-tenants: from C
they read these fields in place, where the reference's fields are Python floats and tuples,
each one more object to wait for. An FB-2010 day has up to 330,000 attempts running at once,
and a running attempt held some 800 bytes of such objects.

Examples
--------
>>> from sim_bridge._attempt_core import Attempt
>>> a = Attempt(7, None, 0, 3, 2.0, 0.0)
>>> a.node, a.launch_time, a._prog, a._solve
(3, 2.0, None, None)
>>> a._prog = (4.0, 1.5)
>>> a._solve = (9, 4.0, 2.5)
>>> a._prog, a._solve
((4.0, 1.5), (9, 4.0, 2.5))
>>> import pickle
>>> b = pickle.loads(pickle.dumps(a))
>>> (b.uid, b._prog, b._solve, b._end)
(7, (4.0, 1.5), (9, 4.0, 2.5), inf)
"""

import math

from sim_bridge._states import A_RUNNING


cdef class Attempt:
    """One run of a task on a node (read-only for policies): ``sim_bridge._jobs.PyAttempt``
    with its numbers held as C fields (see the module docstring)."""

    #: the fields that hold Python objects (the others are C numbers, made into Python ones
    #: when read): what a memory census walks, where it walks the reference's ``__slots__``
    OBJECT_FIELDS = ("task", "end_time", "_dem", "_step_rate", "_rec", "_ckpt", "_pid")

    def __init__(
        self,
        long long uid,
        object task,
        long long index,
        long long node,
        double launch_time,
        double start_fraction,
        object pid=None,
    ):
        self.uid = uid
        self.task = task
        self.index = index
        self.node = node
        self.launch_time = launch_time
        self.start_fraction = start_fraction
        self.state = A_RUNNING
        self.end_time = None
        self._end = math.inf
        self._c0 = 0.0
        self._work = 0.0
        self._seg_t = launch_time
        self._seg_done = 0.0
        self._dem = None
        self.has_prog = False
        self._step_rate = None
        self._rec = None
        self._ckpt = None
        self.has_solve = False
        self._pid = pid

    @property
    def _prog(self):
        """``(t, work done by t)``, the last read in a segment with demand, or None."""
        if not self.has_prog:
            return None
        return (self.prog_t, self.prog_done)

    @_prog.setter
    def _prog(self, value):
        if value is None:
            self.has_prog = False
            return
        t, done = value
        self.prog_t = t
        self.prog_done = done
        self.has_prog = True

    @property
    def _solve(self):
        """``(heap seq, start, work left)`` of a deferred end solve while its EV_SOLVE is
        pending, or None."""
        if not self.has_solve:
            return None
        return (self.solve_seq, self.solve_t, self.solve_left)

    @_solve.setter
    def _solve(self, value):
        if value is None:
            self.has_solve = False
            return
        seq, t0, left = value
        self.solve_seq = seq
        self.solve_t = t0
        self.solve_left = left
        self.has_solve = True

    @property
    def job(self):
        return self.task.job

    @property
    def running(self):
        return self.state == A_RUNNING

    def __repr__(self):
        return (
            f"Attempt({self.task.task_id}#{self.index} on node {self.node}, "
            f"launched {self.launch_time:.3f}, "
            f"state {('running', 'finished', 'killed')[self.state]})"
        )


cdef class RateMemo:
    """An attempt's rate memo, ``[step, demand, rate]``: the step its last progress read
    under co-located demand ended in, that demand (the object, compared by identity) and the
    step's rate (``Cluster.work_with``). The reference is a list of the three; this is the
    same as C fields, read and written by index as the list is (``memo[0]``, ``memo[:] =
    (k, demand, rate)``), in one object where the list took four (itself, its items, the
    step's int and the rate's float), each one more wait for a scan's read.

    Examples
    --------
    >>> m = RateMemo()
    >>> list(m), len(m)
    ([-1, None, 0.0], 3)
    >>> m[:] = (12, (0.1, 0.0, 0.2, 0.0), 0.5)
    >>> m[0], m[2], m == [12, (0.1, 0.0, 0.2, 0.0), 0.5]
    (12, 0.5, True)
    """

    def __init__(self, long long step=-1, object demand=None, double rate=0.0):
        self.step = step
        self.demand = demand
        self.rate = rate

    def __len__(self):
        return 3

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.step, self.demand, self.rate][i]
        if i == 0 or i == -3:
            return self.step
        if i == 1 or i == -2:
            return self.demand
        if i == 2 or i == -1:
            return self.rate
        raise IndexError("rate memo index out of range")

    def __setitem__(self, i, value):
        if isinstance(i, slice):
            if i != slice(None):
                raise ValueError("a rate memo is written whole (memo[:] = ...) or by index")
            step, demand, rate = value
            self.step = step
            self.demand = demand
            self.rate = rate
        elif i == 0 or i == -3:
            self.step = value
        elif i == 1 or i == -2:
            self.demand = value
        elif i == 2 or i == -1:
            self.rate = value
        else:
            raise IndexError("rate memo assignment index out of range")

    def __iter__(self):
        return iter((self.step, self.demand, self.rate))

    def __eq__(self, other):
        if isinstance(other, (RateMemo, list, tuple)) and len(other) == 3:
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return f"RateMemo({self.step}, {self.demand!r}, {self.rate!r})"
