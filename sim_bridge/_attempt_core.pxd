# The compiled Attempt's fields, for the extensions that read and write them in place
# (``cimport``: ``_progress_core``, ``_retenant_core``, ``_heap_core``).


cdef class Attempt:
    cdef public long long uid
    cdef public object task
    cdef public long long index
    cdef public long long node
    cdef public double launch_time
    cdef public double start_fraction
    cdef public long long state
    cdef public object end_time
    cdef public double _end
    cdef public double _c0
    cdef public double _work
    cdef public double _seg_t
    cdef public double _seg_done
    cdef public object _dem
    cdef public object _step_rate
    cdef public object _rec
    cdef public object _ckpt
    cdef public object _pid
    # ``_prog``, the last read under demand ``(t, done)``, when ``has_prog``
    cdef bint has_prog
    cdef double prog_t
    cdef double prog_done
    # ``_solve``, a deferred end solve ``(seq, t0, left)``, when ``has_solve``
    cdef bint has_solve
    cdef long long solve_seq
    cdef double solve_t
    cdef double solve_left


cdef class RateMemo:
    cdef public long long step
    cdef public object demand
    cdef public double rate
