# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""NumPy's standard-normal stream, drawn in C from positions that were marked on the way.

A block of persistent contention levels (:class:`sim_bridge.world.PersistentLevels`) is one
stream of standard normals ordered by row, then step. A big cluster draws a block a part (a
range of steps) at a time, and every row's part sits somewhere inside the stream: NumPy can
only reach it by drawing everything before it. These kernels draw the same stream with
NumPy's own ziggurat (``random_standard_normal`` of ``libnpyrandom``, the C library NumPy
ships for extensions) over a PCG64 bit generator of their own, whose 128-bit state can be
read and set: the first pass over a block (:func:`draw_marked`) records the state before
each row's part, and each later part (:func:`draw_from`) starts every row there and draws
only its own steps. The values are NumPy's, bit for bit: PCG64's output function and
NumPy's ``next_double`` are restated here, and :func:`stream_matches_numpy` checks a long
draw, slow paths of the ziggurat included, against ``Generator.standard_normal`` (the caller
falls back to NumPy when it does not match).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(3)
>>> words = state_words(rng)
>>> y, marks = np.empty((2, 6)), np.empty((2, 2, 2), dtype=np.uint64)
>>> draw_marked(words, y, 3, marks)
>>> bool((y == rng.standard_normal((2, 6))).all())
True
>>> z = np.empty((2, 3))
>>> draw_from(marks[:, 1], words[2], words[3], z)  # the second half of each row again
>>> bool((z == y[:, 3:]).all())
True
"""

import numpy as np

from libc.stdint cimport uint32_t, uint64_t

cdef extern from "numpy/random/bitgen.h":
    ctypedef struct bitgen_t:
        pass

cdef extern from "numpy/random/distributions.h":
    double random_standard_normal(bitgen_t *bitgen_state) nogil

cdef extern from *:
    """
    /* NumPy's PCG64 (XSL-RR 128/64 on a 128-bit LCG; numpy/random/src/pcg64/pcg64.h) */
    typedef unsigned __int128 sb_u128;
    /* n: the outputs drawn since it was last set (a position in the stream) */
    typedef struct { sb_u128 state; sb_u128 inc; uint64_t n; } sb_pcg64;
    #define SB_MULT ((((sb_u128)2549297995355413924ULL) << 64) + 4865540595714422341ULL)

    static inline uint64_t sb_next64(void *st) {
        sb_pcg64 *r = (sb_pcg64 *)st;
        const sb_u128 mult = SB_MULT;
        uint64_t x;
        unsigned rot;
        r->n++;
        r->state = r->state * mult + r->inc;
        x = ((uint64_t)(r->state >> 64)) ^ (uint64_t)r->state;
        rot = (unsigned)(r->state >> 122);
        return (x >> rot) | (x << ((-rot) & 63u));
    }
    static uint32_t sb_next32(void *st) { return (uint32_t)(sb_next64(st) >> 32); }
    static double sb_next_double(void *st) {
        return (double)(sb_next64(st) >> 11) * (1.0 / 9007199254740992.0);
    }
    static void sb_bind(bitgen_t *bg, sb_pcg64 *r) {
        bg->state = r;
        bg->next_uint64 = sb_next64;
        bg->next_uint32 = sb_next32;
        bg->next_double = sb_next_double;
        bg->next_raw = sb_next64;
    }
    static void sb_set(sb_pcg64 *r, uint64_t s_hi, uint64_t s_lo, uint64_t i_hi, uint64_t i_lo) {
        r->state = (((sb_u128)s_hi) << 64) | s_lo;
        r->inc = (((sb_u128)i_hi) << 64) | i_lo;
        r->n = 0;
    }
    /* the LCG stepped `delta` times at once (Brown, "Random number generation with arbitrary
       strides", 1994; pcg_advance_lcg_128 of the PCG library): O(log delta) products */
    static void sb_advance(sb_pcg64 *r, uint64_t delta) {
        sb_u128 cur_mult = SB_MULT, cur_plus = r->inc, acc_mult = 1, acc_plus = 0;
        while (delta > 0) {
            if (delta & 1) {
                acc_mult *= cur_mult;
                acc_plus = acc_plus * cur_mult + cur_plus;
            }
            cur_plus = (cur_mult + 1) * cur_plus;
            cur_mult *= cur_mult;
            delta >>= 1;
        }
        r->state = acc_mult * r->state + acc_plus;
    }
    static uint64_t sb_hi(const sb_pcg64 *r) { return (uint64_t)(r->state >> 64); }
    static uint64_t sb_lo(const sb_pcg64 *r) { return (uint64_t)r->state; }
    """
    ctypedef struct sb_pcg64:
        uint64_t n
    void sb_bind(bitgen_t *bg, sb_pcg64 *r) nogil
    void sb_set(sb_pcg64 *r, uint64_t s_hi, uint64_t s_lo, uint64_t i_hi, uint64_t i_lo) nogil
    void sb_advance(sb_pcg64 *r, uint64_t delta) nogil
    uint64_t sb_hi(const sb_pcg64 *r) nogil
    uint64_t sb_lo(const sb_pcg64 *r) nogil

_MASK64 = (1 << 64) - 1


def state_words(rng) -> np.ndarray:
    """The state of a PCG64 ``Generator`` as four words (state high, low; increment high,
    low), the first argument of :func:`draw_marked`.

    Raises
    ------
    ValueError
        When ``rng``'s bit generator is not PCG64 (``numpy.random.default_rng``'s).
    """
    st = rng.bit_generator.state
    if st.get("bit_generator") != "PCG64" or st.get("has_uint32"):
        raise ValueError(f"parameter rng: needs a fresh PCG64 generator, got {st.get('bit_generator')!r}")
    s, inc = int(st["state"]["state"]), int(st["state"]["inc"])
    return np.array([s >> 64, s & _MASK64, inc >> 64, inc & _MASK64], dtype=np.uint64)


def draw_marked(uint64_t[::1] words, double[:, ::1] out, Py_ssize_t every, uint64_t[:, :, :] marks) -> None:
    """Fill ``out`` (rows, steps) in C order with the stream's standard normals, from the
    state ``words`` (updated to the state after them), recording in ``marks[i, j]`` (high,
    low) the state before row ``i``'s step ``j * every``."""
    cdef Py_ssize_t rows = out.shape[0], steps = out.shape[1], i, k, j
    cdef sb_pcg64 r
    cdef bitgen_t bg
    if words.shape[0] != 4:
        raise ValueError(f"parameter words: needs 4 words, got {words.shape[0]}")
    if every < 1:
        raise ValueError(f"parameter every must be >= 1, got {every}")
    if marks.shape[0] != rows or marks.shape[1] != (steps + every - 1) // every or marks.shape[2] != 2:
        raise ValueError(
            f"parameter marks must have shape {(rows, (steps + every - 1) // every, 2)}, "
            f"got {(marks.shape[0], marks.shape[1], marks.shape[2])}"
        )
    sb_set(&r, words[0], words[1], words[2], words[3])
    sb_bind(&bg, &r)
    with nogil:
        for i in range(rows):
            j = 0
            for k in range(steps):
                if k == j * every:
                    marks[i, j, 0] = sb_hi(&r)
                    marks[i, j, 1] = sb_lo(&r)
                    j += 1
                out[i, k] = random_standard_normal(&bg)
    words[0] = sb_hi(&r)
    words[1] = sb_lo(&r)


def draw_from(const uint64_t[:, :] starts, uint64_t inc_hi, uint64_t inc_lo, double[:, ::1] out) -> None:
    """Fill each row ``i`` of ``out`` with the stream's normals from the state ``starts[i]``
    (high, low; the increment is the generator's)."""
    cdef Py_ssize_t rows = out.shape[0], steps = out.shape[1], i, k
    cdef sb_pcg64 r
    cdef bitgen_t bg
    if starts.shape[0] != rows or starts.shape[1] != 2:
        raise ValueError(f"parameter starts must have shape {(rows, 2)}, got {(starts.shape[0], starts.shape[1])}")
    sb_bind(&bg, &r)
    with nogil:
        for i in range(rows):
            sb_set(&r, starts[i, 0], starts[i, 1], inc_hi, inc_lo)
            for k in range(steps):
                out[i, k] = random_standard_normal(&bg)


def draw_counted(
    uint64_t[::1] words,
    double[:, ::1] out,
    Py_ssize_t every,
    uint64_t[:, :] heads,
    uint32_t[:, :] counts,
) -> None:
    """:func:`draw_marked` with smaller marks: ``heads[i]`` (high, low) the state before row
    ``i``'s first normal, and ``counts[i, j]`` how many outputs of the bit generator the row
    drew before its step ``j * every`` (4 bytes a mark, not 16: :func:`draw_seek` steps the
    generator on to it at once).

    Raises
    ------
    OverflowError
        When a row draws more than 2**32 - 1 outputs before a mark.
    """
    cdef Py_ssize_t rows = out.shape[0], steps = out.shape[1], i, k, j
    cdef sb_pcg64 r
    cdef bitgen_t bg
    cdef bint over = False
    if words.shape[0] != 4:
        raise ValueError(f"parameter words: needs 4 words, got {words.shape[0]}")
    if every < 1:
        raise ValueError(f"parameter every must be >= 1, got {every}")
    if counts.shape[0] != rows or counts.shape[1] != (steps + every - 1) // every:
        raise ValueError(
            f"parameter counts must have shape {(rows, (steps + every - 1) // every)}, "
            f"got {(counts.shape[0], counts.shape[1])}"
        )
    if heads.shape[0] != rows or heads.shape[1] != 2:
        raise ValueError(
            f"parameter heads must have shape {(rows, 2)}, got {(heads.shape[0], heads.shape[1])}"
        )
    sb_set(&r, words[0], words[1], words[2], words[3])
    sb_bind(&bg, &r)
    with nogil:
        for i in range(rows):
            heads[i, 0] = sb_hi(&r)
            heads[i, 1] = sb_lo(&r)
            r.n = 0
            j = 0
            for k in range(steps):
                if k == j * every:
                    if r.n > 0xFFFFFFFFu:
                        over = True
                    counts[i, j] = <uint32_t>r.n
                    j += 1
                out[i, k] = random_standard_normal(&bg)
    if over:
        raise OverflowError("a row drew more than 2**32 - 1 outputs before one of its marks")
    words[0] = sb_hi(&r)
    words[1] = sb_lo(&r)


def draw_seek(
    const uint64_t[:, :] heads,
    const uint32_t[:] counts,
    uint64_t inc_hi,
    uint64_t inc_lo,
    double[:, ::1] out,
) -> None:
    """Fill each row ``i`` of ``out`` with the stream's normals from ``counts[i]`` outputs
    past the state ``heads[i]`` (:func:`draw_counted`'s marks; the increment is the
    generator's)."""
    cdef Py_ssize_t rows = out.shape[0], steps = out.shape[1], i, k
    cdef sb_pcg64 r
    cdef bitgen_t bg
    if heads.shape[0] != rows or heads.shape[1] != 2 or counts.shape[0] != rows:
        raise ValueError(
            f"parameters heads and counts must have shapes {(rows, 2)} and {(rows,)}, "
            f"got {(heads.shape[0], heads.shape[1])} and {(counts.shape[0],)}"
        )
    sb_bind(&bg, &r)
    with nogil:
        for i in range(rows):
            sb_set(&r, heads[i, 0], heads[i, 1], inc_hi, inc_lo)
            sb_advance(&r, counts[i])
            for k in range(steps):
                out[i, k] = random_standard_normal(&bg)


def stream_matches_numpy(Py_ssize_t n=1 << 18, seed=(2026, 11, 29)) -> bool:
    """Whether :func:`draw_marked` draws ``Generator.standard_normal``'s values bit for bit
    (``n`` of them, the ziggurat's slow paths included: about 1% of draws take one)."""
    rng = np.random.default_rng(list(seed))
    words = state_words(rng)
    mine = np.empty((1, n))
    draw_marked(words, mine, n, np.empty((1, 1, 2), dtype=np.uint64))
    return bool(np.array_equal(mine[0], rng.standard_normal(n))) and bool(
        np.array_equal(words, state_words(rng))
    )
