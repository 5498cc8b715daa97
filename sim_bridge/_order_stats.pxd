# cython: boundscheck=False, wraparound=False, cdivision=True
"""Order statistics of two runs of floats, one unsorted and one sorted, without sorting the
first: what LATE's cut needs of a job's rates and its stage's finished tasks.

LATE's cut is a percentile of the progress rates of a stage's running attempts (``r``, in
no order) and its finished tasks (``done``, ascending, or their inverses read backwards):
two neighbouring order statistics of the union. Sorting ``r`` for them costs O(n log n) a
job a scan; :func:`_select` finds the ``k``-th by a selection over ``r`` alone that counts
the sorted run's values below each pivot by bisection (expected O(n + log n log nd)), and
:func:`_next_of` the ``k + 1``-th from it in one pass. Both return values of the union, as
``sorted(r + done)[k]`` does; equal values (``-0.0`` and ``0.0`` too) compare equal either
way. No NaN anywhere: the caller checks.

:c:type:`Ranked` and :func:`_rank_cmp` order LATE's candidates for ``qsort``, as its
ranking's sort key does.

Inline functions (like ``_prefetch.pxd``): cimported where used, nothing to link.
"""


cdef inline double _done_at(
    const double* done, Py_ssize_t nd, Py_ssize_t j, bint inverse
) noexcept nogil:
    """``done``'s ``j``-th value, or with ``inverse`` the ``j``-th of ``1 / done`` read
    backwards (ascending when ``done`` is ascending and positive)."""
    return 1.0 / done[nd - 1 - j] if inverse else done[j]


cdef inline Py_ssize_t _n_done_below(
    const double* done, Py_ssize_t nd, double v, bint inverse, bint or_equal,
    Py_ssize_t lo, Py_ssize_t hi,
) noexcept nogil:
    """How many of the sorted run's values are ``< v`` (``<= v`` with ``or_equal``), given
    that the first ``lo`` are and those from ``hi`` on are not (``0 <= lo <= hi <= nd``)."""
    cdef Py_ssize_t mid
    cdef double x
    while lo < hi:
        mid = (lo + hi) // 2
        x = _done_at(done, nd, mid, inverse)
        if (x <= v) if or_equal else (x < v):
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline Py_ssize_t _round_limit(Py_ssize_t n) noexcept nogil:
    """:func:`_select`'s rounds before it gives up on ``n`` values: ``2 floor(log2 n) + 8``
    (median-of-three pivots keep about half a range or less a round)."""
    cdef Py_ssize_t limit = 8
    while n > 1:
        limit += 2
        n >>= 1
    return limit


cdef inline double _select(
    double* r,
    Py_ssize_t n,
    const double* done,
    Py_ssize_t nd,
    Py_ssize_t k,
    bint inverse,
    Py_ssize_t limit,
    bint* ok,
) noexcept nogil:
    """The ``k``-th smallest (from 0) of ``r[:n]`` and the sorted run together
    (``0 <= k < n + nd``), permuting ``r`` in place. Sets ``ok[0]`` False and returns 0.0
    when it gives up after ``limit`` rounds (:func:`_round_limit`: a pivot sequence that
    keeps splitting badly), ``r`` still a permutation of its values, for the caller to sort.

    Each round takes the median of three of the range as pivot ``p`` and partitions the range
    three ways (``< p``, ``== p``, ``> p``); the union's values below ``p`` are those of
    ``r`` known to be below (left of the range, and the range's ``< p`` part) plus the
    sorted run's, counted by bisection. The answer is ``p``, or lies on the side holding
    rank ``k``. Once the range is empty, ``r`` holds ``below`` values under the answer and
    the rest above it, so the answer is the sorted run's ``(k - below)``-th."""
    cdef Py_ssize_t lo = 0, hi = n, below = 0, lt, i, gt, less, upto, rounds = 0
    cdef Py_ssize_t dlo = 0, dhi = nd, j_lt, j_le  # the run's values between the pivots
    cdef double p, a, b, c, t
    ok[0] = True
    while lo < hi:
        rounds += 1
        if rounds > limit:
            ok[0] = False
            return 0.0
        a = r[lo]
        b = r[lo + (hi - lo) // 2]
        c = r[hi - 1]
        if a < b:
            p = b if b < c else (c if a < c else a)
        else:
            p = a if a < c else (c if b < c else b)
        lt = lo
        i = lo
        gt = hi - 1
        while i <= gt:  # [lo, lt) < p, [lt, i) == p, (gt, hi) > p
            t = r[i]
            if t < p:
                r[i] = r[lt]
                r[lt] = t
                lt += 1
                i += 1
            elif t > p:
                r[i] = r[gt]
                r[gt] = t
                gt -= 1
            else:
                i += 1
        j_lt = _n_done_below(done, nd, p, inverse, False, dlo, dhi)
        j_le = j_lt  # mostly no tie: one probe, else a bisection past the ties
        if j_le < dhi and _done_at(done, nd, j_le, inverse) <= p:
            j_le = _n_done_below(done, nd, p, inverse, True, j_le + 1, dhi)
        less = below + (lt - lo) + j_lt
        upto = below + (gt + 1 - lo) + j_le
        if k < less:
            hi = lt
            dhi = j_lt
        elif k < upto:
            return p
        else:
            below += gt + 1 - lo
            lo = gt + 1
            dlo = j_le
    if not 0 <= k - below < nd:  # cannot happen without NaN; give up rather than misread
        ok[0] = False
        return 0.0
    return _done_at(done, nd, k - below, inverse)


cdef inline double _next_of(
    const double* r,
    Py_ssize_t n,
    const double* done,
    Py_ssize_t nd,
    Py_ssize_t k,
    double x,
    bint inverse,
) noexcept nogil:
    """The ``k + 1``-th smallest of ``r[:n]`` (any order) and the sorted run, given ``x``,
    the ``k``-th (``k + 1 < n + nd``): ``x`` again when the union holds more than ``k + 1``
    values ``<= x``, else the smallest value above ``x``."""
    cdef Py_ssize_t i, n_le = 0, j
    cdef double v, y = 0.0
    cdef bint have = False
    for i in range(n):
        v = r[i]
        if v <= x:
            n_le += 1
        elif not have or v < y:
            y = v
            have = True
    j = _n_done_below(done, nd, x, inverse, True, 0, nd)
    if k + 1 < n_le + j:
        return x
    if j < nd:
        v = _done_at(done, nd, j, inverse)
        if not have or v < y:
            y = v
    return y


# LATE's ranking of its candidates: the longest estimated time left first, then the oldest
# attempt (the smallest uid), as ``sort(key=lambda c: (-c[0], c[1]))`` orders them
cdef struct Ranked:
    double est
    long long uid
    Py_ssize_t at  # the candidate's index in the scan's list


cdef inline int _rank_cmp(const void* pa, const void* pb) noexcept nogil:
    """``qsort``'s comparison for :c:type:`Ranked`: estimates descending, then uids
    ascending (no NaN: the caller checks; uids are unique, so no two compare equal)."""
    cdef const Ranked* a = <const Ranked*>pa
    cdef const Ranked* b = <const Ranked*>pb
    if a.est != b.est:
        return -1 if a.est > b.est else 1
    if a.uid != b.uid:
        return -1 if a.uid < b.uid else 1
    return 0
