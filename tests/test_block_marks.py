"""Issue 13: a part of a persistent block drawn from the marks of the block's first pass.

A big cluster draws each day-block of contention levels in parts; each part used to draw and
filter the whole block's stream again. The first pass now marks where each row's part starts
(``sim_bridge._normals_core``: NumPy's normals drawn in C from a PCG64 state it can read and
set), and later parts draw only their own steps. The oracles: NumPy's own
``Generator.standard_normal`` for the stream, and the whole block (``block``, itself checked
against the lfilter reference in ``test_persistence_block.py``) for every part, in any order.
"""

from __future__ import annotations

import mmap
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge.world import DEFAULT_PERSISTENCE, PersistentLevels, _block_marks, _persistence

nc = pytest.importorskip("sim_bridge._normals_core")

pytestmark = pytest.mark.skipif(
    not _block_marks.seekable(), reason="the compiled stream does not match this NumPy"
)

#: a stream's seed, its rows and steps, and the steps between marks
STREAMS = dict(
    seed=st.integers(0, 2**32 - 1),
    rows=st.integers(1, 5),
    steps=st.integers(0, 3000),
    every=st.integers(1, 400),
)


@settings(max_examples=30, deadline=None)
@given(**STREAMS)
def test_the_stream_and_its_marks_are_numpys(seed, rows, steps, every):
    """``draw_marked`` draws ``standard_normal``'s values from the same state and leaves the
    generator's state where NumPy's is after them; ``draw_from`` at each mark draws the rest
    of that row again. ~1% of normals take a slow path of the ziggurat: thousands of draws a
    case reach them."""
    rng = np.random.default_rng(seed)
    words = nc.state_words(rng)
    y = np.empty((rows, steps))
    parts = -(-steps // every)
    marks = np.empty((rows, parts, 2), dtype=np.uint64)
    nc.draw_marked(words, y, every, marks)
    assert np.array_equal(y, rng.standard_normal((rows, steps)))
    assert np.array_equal(words, nc.state_words(rng))
    for p in range(parts):
        lo = p * every
        z = np.empty((rows, steps - lo))
        nc.draw_from(marks[:, p], words[2], words[3], z)
        assert np.array_equal(z, y[:, lo:])


@settings(max_examples=30, deadline=None)
@given(**STREAMS)
def test_counted_marks_seek_where_the_stream_was(seed, rows, steps, every):
    """``draw_counted`` draws ``draw_marked``'s values and states; its marks, each row's head
    state and the outputs drawn before each part, lead ``draw_seek`` (an LCG jump ahead) to
    the states ``draw_marked`` recorded: the rest of each row again, bit for bit."""
    words, words2 = (nc.state_words(np.random.default_rng(seed)) for _ in range(2))
    parts = -(-steps // every)
    y, y2 = np.empty((rows, steps)), np.empty((rows, steps))
    marks = np.empty((rows, parts, 2), dtype=np.uint64)
    heads = np.empty((rows, 2), dtype=np.uint64)
    counts = np.empty((rows, parts), dtype=np.uint32)
    nc.draw_marked(words, y, every, marks)
    nc.draw_counted(words2, y2, every, heads, counts)
    assert np.array_equal(y, y2) and np.array_equal(words, words2)
    if parts:
        assert np.array_equal(heads, marks[:, 0]) and not counts[:, 0].any()
        assert (np.diff(counts.astype(np.int64), axis=1) >= every).all()  # >= 1 output a normal
    for p in range(parts):
        lo = p * every
        z = np.empty((rows, steps - lo))
        nc.draw_seek(heads, counts[:, p], words[2], words[3], z)
        assert np.array_equal(z, y[:, lo:])


def test_the_check_against_numpy_can_fail():
    """The self-check that switches the marks on compares values and the state after them:
    a stream one draw ahead fails it."""
    rng = np.random.default_rng([2026, 11, 29])
    words = nc.state_words(rng)
    y = np.empty((1, 1000))
    nc.draw_marked(words, y, 1000, np.empty((1, 1, 2), dtype=np.uint64))
    rng.standard_normal(1)
    assert not np.array_equal(y[0], rng.standard_normal(1000))
    assert nc.stream_matches_numpy()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="rng: needs a fresh PCG64 generator, got 'MT19937'"):
        nc.state_words(np.random.Generator(np.random.MT19937(1)))
    words = nc.state_words(np.random.default_rng(1))
    with pytest.raises(ValueError, match=r"marks must have shape \(2, 3, 2\), got \(2, 2, 2\)"):
        nc.draw_marked(words, np.empty((2, 9)), 3, np.empty((2, 2, 2), dtype=np.uint64))
    with pytest.raises(ValueError, match="parameter every must be >= 1, got 0"):
        nc.draw_marked(words, np.empty((2, 9)), 0, np.empty((2, 0, 2), dtype=np.uint64))
    with pytest.raises(ValueError, match=r"starts must have shape \(2, 2\), got \(3, 2\)"):
        nc.draw_from(np.zeros((3, 2), dtype=np.uint64), 0, 1, np.empty((2, 4)))
    heads, y = np.empty((2, 2), dtype=np.uint64), np.empty((2, 9))
    with pytest.raises(ValueError, match=r"counts must have shape \(2, 3\), got \(2, 2\)"):
        nc.draw_counted(words, y, 3, heads, np.empty((2, 2), dtype=np.uint32))
    with pytest.raises(ValueError, match=r"heads must have shape \(2, 2\), got \(3, 2\)"):
        nc.draw_counted(words, y, 3, np.empty((3, 2), dtype=np.uint64), np.empty((2, 3), np.uint32))
    with pytest.raises(ValueError, match=r"shapes \(2, 2\) and \(2,\), got \(2, 2\) and \(3,\)"):
        nc.draw_seek(heads, np.zeros(3, dtype=np.uint32), 0, 1, y)


class _Counting(PersistentLevels):
    """Counts the normals each part drew (through NumPy or the marks)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.drawn: list[int] = []

    def block_part(self, b, n_steps, lo, m, out=None):
        before = _COUNT[0]
        got = super().block_part(b, n_steps, lo, m, out=out)
        self.drawn.append(_COUNT[0] - before)
        return got


_COUNT = [0]


@pytest.fixture
def counted(monkeypatch):
    """Count the normals drawn by NumPy and by the compiled kernels inside block_part."""
    real_counted, real_seek = nc.draw_counted, nc.draw_seek

    def counted(words, y, every, heads, counts):
        _COUNT[0] += y.size
        return real_counted(words, y, every, heads, counts)

    def seek(heads, counts, hi, lo, y):
        _COUNT[0] += y.size
        return real_seek(heads, counts, hi, lo, y)

    monkeypatch.setattr(_block_marks._normals_core, "draw_counted", counted)
    monkeypatch.setattr(_block_marks._normals_core, "draw_seek", seek)
    real_normal = np.random.Generator.standard_normal

    class _Rng:
        def __init__(self, rng):
            self._rng = rng

        def standard_normal(self, size):
            _COUNT[0] += int(np.prod(size))
            return real_normal(self._rng, size)

        def __getattr__(self, name):
            return getattr(self._rng, name)

    real_default = np.random.default_rng
    monkeypatch.setattr(_persistence.np.random, "default_rng", lambda s: _Rng(real_default(s)))
    _COUNT[0] = 0


@pytest.mark.parametrize(
    ("nodes", "n_steps", "every", "order"),
    [
        (7, 1440, 240, "in order"),
        (3, 1440, 60, "in order"),
        (5, 12, 4, "reversed"),
        (4, 96, 8, "shuffled"),
        (2, 10, 5, "twice"),
    ],
)
def test_parts_in_any_order_are_the_whole_blocks_and_draw_only_their_steps(
    counted, nodes, n_steps, every, order
):
    whole = PersistentLevels(DEFAULT_PERSISTENCE, nodes, (5, 1))
    part = _Counting(DEFAULT_PERSISTENCE, nodes, (5, 1))
    k = n_steps // every
    starts = list(range(0, n_steps, every))
    if order == "reversed":
        starts.reverse()
    elif order == "shuffled":
        starts = [starts[i] for i in np.random.default_rng(3).permutation(k)]
    elif order == "twice":  # the first part asked again: its marks were let go
        starts = starts[:1] + starts
    block_normals = 2 * 4 * nodes * n_steps
    for b in range(3):  # consecutive blocks go on from each other's end state
        ref = whole.block(b, n_steps)
        part.drawn.clear()
        got = {lo: part.block_part(b, n_steps, lo, every) for lo in starts}
        for lo, levels in got.items():
            assert np.array_equal(levels, ref[:, :, lo : lo + every]), (b, lo)
        # the first part draws the whole block once (a part asked again after its marks
        # were let go, once more); every other part only its own steps
        full = 2 if order == "twice" else 1
        assert part.drawn[:full] == [block_normals] * full
        assert part.drawn[full:] == [block_normals // k] * (len(starts) - full)
        # the block's end state comes with the part that reaches it; the marks go once
        # every part was drawn
        assert np.array_equal(part._end[b], whole._end[b])
        assert part._marks is None


def test_a_part_off_the_split_is_not_read_from_its_marks(counted):
    """Marks of parts of 4 steps say nothing of a part of 4 steps from step 2: it draws the
    whole block, and the marks stay for the parts they belong to."""
    g = _Counting(DEFAULT_PERSISTENCE, 3, (1,))
    ref = PersistentLevels(DEFAULT_PERSISTENCE, 3, (1,)).block(0, 12)
    assert np.array_equal(g.block_part(0, 12, 0, 4), ref[:, :, :4])
    assert np.array_equal(g.block_part(0, 12, 2, 4), ref[:, :, 2:6])
    assert np.array_equal(g.block_part(0, 12, 4, 4), ref[:, :, 4:8])
    assert g.drawn == [288, 288, 96]
    assert g._marks is not None and g._marks.left == {2}


def test_a_part_of_an_uneven_split_or_the_whole_block_draws_no_marks(counted):
    g = _Counting(DEFAULT_PERSISTENCE, 3, (1,))
    ref = PersistentLevels(DEFAULT_PERSISTENCE, 3, (1,)).block(0, 100)
    assert np.array_equal(g.block_part(0, 100, 0, 30), ref[:, :, :30])
    assert np.array_equal(g.block_part(0, 100, 30, 70), ref[:, :, 30:])
    assert g._marks is None and g.drawn == [2400, 2400]
    g.block(1, 100)
    assert g._marks is None


def test_without_marks_the_parts_are_the_same(monkeypatch):
    """The fallback (no extension, or a NumPy whose stream differs) draws the whole block
    for every part: the same values."""
    seek = PersistentLevels(DEFAULT_PERSISTENCE, 6, (9, 2))
    seek_parts = [seek.block_part(0, 1440, lo, 360) for lo in range(0, 1440, 360)]
    monkeypatch.setattr(_persistence, "seekable", lambda: False)
    plain = PersistentLevels(DEFAULT_PERSISTENCE, 6, (9, 2))
    for lo, levels in zip(range(0, 1440, 360), seek_parts, strict=True):
        assert np.array_equal(plain.block_part(0, 1440, lo, 360), levels)
        assert plain._marks is None


def test_the_extensions_docstring_examples_run():
    """A compiled module's examples are not collected by ``--doctest-modules``."""
    import doctest

    assert doctest.testmod(nc).failed == 0


def test_a_drawn_parts_marks_are_given_back():
    """Each part's marks lie in pages of their own, given back once the part is drawn: they
    read as zeros after (an anonymous map's pages dropped by ``madvise``), the parts not yet
    drawn keep theirs, and a let-go part's marks are refused, not read."""
    g = PersistentLevels(DEFAULT_PERSISTENCE, 300, (5, 1))
    ref = PersistentLevels(DEFAULT_PERSISTENCE, 300, (5, 1)).block(0, 60)
    assert np.array_equal(g.block_part(0, 60, 0, 10), ref[:, :, :10])
    marks = g._marks
    assert marks is not None and marks.left == {1, 2, 3, 4, 5}
    region = marks.counts.strides[0]
    assert region % mmap.PAGESIZE == 0 and region >= 24 * 4 * 300
    assert marks.starts.strides[0] == region
    assert len(marks.counts.base) == 6 * region + -(-32 * 4 * 300 // mmap.PAGESIZE) * mmap.PAGESIZE
    for p in range(6):
        assert marks.counts[p].any() == (p > 0), p  # part 0: no output before it, drawn
    assert np.array_equal(g.block_part(0, 60, 30, 10), ref[:, :, 30:40])
    for p in range(6):
        assert marks.counts[p].any() == (p not in (0, 3)), p
        assert marks.starts[p].any() == (p not in (0, 3)), p
    assert marks.heads.any()  # every part starts from them: kept to the last
    with pytest.raises(ValueError, match="part 3 of block 0: its marks were let go"):
        marks.part(0, 0, 5, 3)
    with pytest.raises(ValueError, match="part 0 of block 0: its marks were let go"):
        marks.start_of(1, 0, 5, 0)
    for lo in (10, 20, 40, 50):
        assert np.array_equal(g.block_part(0, 60, lo, 10), ref[:, :, lo : lo + 10])
    assert g._marks is None and not marks.counts.any() and not marks.starts.any()


def test_marks_survive_a_copy():
    """A copied block keeps its parts' marks (in memory of its own) and draws the same."""
    import copy

    g = PersistentLevels(DEFAULT_PERSISTENCE, 20, (5, 3))
    ref = PersistentLevels(DEFAULT_PERSISTENCE, 20, (5, 3)).block(0, 40)
    g.block_part(0, 40, 0, 10)
    for h in (copy.deepcopy(g), pickle.loads(pickle.dumps(g))):
        assert h._marks is not None and h._marks.left == {1, 2, 3}
        for lo in (10, 20, 30):
            assert np.array_equal(h.block_part(0, 40, lo, 10), ref[:, :, lo : lo + 10])
        assert h._marks is None
