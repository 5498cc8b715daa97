"""Where each row's part of a persistent block starts in its stream, so a part draws only
its own steps.

A block of :class:`~sim_bridge.world.PersistentLevels` is one stream of standard normals
ordered by (component, resource, node) row, then step, filtered row by row by an AR(1)
recursion. A cluster whose day-block is too big to hold draws it a part (a range of steps)
at a time (``Cluster(extend_steps=...)``; 4 hours on 33,000 nodes). NumPy reaches a row's
part only by drawing everything before it, so each part used to draw and filter the whole
block again: 3.9 s a part on 33,000 nodes, the CPU of a long drain (issue 13).

:class:`BlockMarks` is what the first part's pass over the block records on the way (with
``sim_bridge._normals_core``, which draws NumPy's stream in C from a PCG64 state it can
read and set): for every row, the bit generator's state before its first normal, and for
every row and part, how many outputs the generator drew for the row before the part's first
normal and the AR(1) state before its first step. A later part steps every row's generator
on to its part at once (an LCG's jump ahead, O(log n) products) and draws and filters only
its own steps, to the same floats: the same normals (the stream's values from the same
state), scaled and filtered by the same operations in the same order. That is 4 + 8 bytes a
(component, row) and part, and 16 a (component, row): 40 MiB on 33,000 nodes in 12 parts
(until 2026-11-30 each part kept the row's whole state, 16 + 8 bytes: 73 MiB). Each part's
marks lie in pages of their own (an anonymous map), which are given back
(``madvise(MADV_DONTNEED)``) once the part is drawn: a block's marks shrink by a part's share
each part, from 40 MiB after its first pass to the rows' states, 4 MiB, by its last (issue
13: a day's peak comes mid-block, at 14-15 h on FB-2010, or at the next block's first pass).
A part asked again after that is drawn from a new first pass, to the same floats.

Without the extension, or when its stream does not match this NumPy's
(:func:`sim_bridge._normals_core.stream_matches_numpy`, checked once), :data:`SEEKABLE` is
False and every part draws the whole block as before.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from functools import cache

import numpy as np

try:  # built by pip install against NumPy's libnpyrandom; optional
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    import sim_bridge._normals_core as _normals_core
except ImportError:  # pragma: no cover - an install without a C compiler
    _normals_core = None

__all__ = ["BlockMarks", "seekable"]

_PRIVATE = getattr(mmap, "MAP_PRIVATE", 0)  # where there is none, the pages are not given back


@cache
def seekable() -> bool:
    """Whether parts can be drawn from marks: the extension is built and draws this NumPy's
    normals bit for bit (checked on 262,144 draws, once a process).

    Examples
    --------
    >>> isinstance(seekable(), bool)
    True
    """
    return _normals_core is not None and _normals_core.stream_matches_numpy()


@dataclass
class BlockMarks:
    """The marks of block ``b`` of ``n_steps`` steps in parts of ``every`` steps.

    Attributes
    ----------
    key : tuple of int
        ``(b, n_steps, every)``.
    words : ndarray of uint64, shape (4,)
        The bit generator's state while the first pass draws (high, low), then its
        increment (high, low).
    heads : ndarray of uint64, shape (2, rows, 2)
        The state before each (component, row)'s first normal (high, low).
    counts : ndarray of uint32, shape (parts, 2, rows)
        The bit generator's outputs each (component, row) drew before each part's first
        normal: a part starts from its row's head stepped on that many times at once
        (``sim_bridge._normals_core.draw_seek``).
    starts : ndarray of float64, shape (parts, 2, rows)
        The AR(1) state before each part's first step.
    left : set of int
        The parts not drawn yet, whose marks are kept (:meth:`release`); the block's owner
        drops the marks once it is empty.

    Examples
    --------
    >>> import numpy as np
    >>> m = BlockMarks.start(np.random.default_rng(1), (0, 12, 4), rows=5)
    >>> m.heads.shape, m.counts.shape, m.starts.shape, sorted(m.left)
    ((2, 5, 2), (3, 2, 5), (3, 2, 5), [0, 1, 2])
    >>> m.release(1)
    >>> sorted(m.left)
    [0, 2]
    """

    key: tuple[int, int, int]
    words: np.ndarray
    heads: np.ndarray
    counts: np.ndarray
    starts: np.ndarray
    left: set[int]

    @classmethod
    def start(cls, rng: np.random.Generator, key: tuple[int, int, int], rows: int) -> BlockMarks:
        """Empty marks for a first pass that draws from ``rng``'s current state."""
        assert _normals_core is not None
        parts = key[1] // key[2]
        # the heads (2, rows, 2) in pages of their own, then part p's counts (2, rows) and
        # starts (2, rows) in whole pages from head + p * region: one private anonymous map,
        # whose pages a part gives back once drawn (a shared one would keep them in its
        # backing store); 24 bytes a row and part, and 32 a row (until 2026-11-30 each part
        # kept a row's whole state, 48 bytes a row and part: 73 MiB on 33,000 nodes in 12
        # parts, now 40 MiB)
        region = -(-24 * rows // mmap.PAGESIZE) * mmap.PAGESIZE
        head = -(-32 * rows // mmap.PAGESIZE) * mmap.PAGESIZE
        size = max(head + parts * region, 1)
        buf = mmap.mmap(-1, size, flags=_PRIVATE) if _PRIVATE else bytearray(size)
        heads = np.ndarray((2, rows, 2), np.uint64, buf, 0, (16 * rows, 16, 8))
        counts = np.ndarray((parts, 2, rows), np.uint32, buf, head, (region, 4 * rows, 4))
        starts = np.ndarray(
            (parts, 2, rows), np.float64, buf, head + 8 * rows, (region, 8 * rows, 8)
        )
        words = _normals_core.state_words(rng)
        return cls(key, words, heads, counts, starts, set(range(parts)))

    def draw(self, c: int, i: int, j: int, n_steps: int) -> np.ndarray:
        """Rows ``i`` to ``j`` of component ``c``: all their normals, as ``standard_normal``
        draws them next, recording where each part starts."""
        assert _normals_core is not None
        y = np.empty((j - i, n_steps))
        counts = self.counts[:, c, i:j].T  # (rows, parts), strided
        _normals_core.draw_counted(self.words, y, self.key[2], self.heads[c, i:j], counts)
        return y

    def note_starts(self, c: int, i: int, j: int, y: np.ndarray, start: np.ndarray) -> None:
        """Record the AR(1) state before each part of rows ``i`` to ``j``: ``start`` before
        the first, the filtered ``y`` at each later part's previous step."""
        every = self.key[2]
        self.starts[0, c, i:j] = start
        self.starts[1:, c, i:j] = y[:, every - 1 : -1 : every].T

    def part(self, c: int, i: int, j: int, p: int) -> np.ndarray:
        """Rows ``i`` to ``j`` of component ``c``: the normals of part ``p`` alone."""
        assert _normals_core is not None
        if p not in self.left:
            raise ValueError(f"part {p} of block {self.key[0]}: its marks were let go")
        y = np.empty((j - i, self.key[2]))
        heads, counts = self.heads[c, i:j], self.counts[p, c, i:j]
        _normals_core.draw_seek(heads, counts, self.words[2], self.words[3], y)
        return y

    def start_of(self, c: int, i: int, j: int, p: int) -> np.ndarray:
        """The AR(1) state before part ``p``'s first step, rows ``i`` to ``j`` of component
        ``c``."""
        if p not in self.left:
            raise ValueError(f"part {p} of block {self.key[0]}: its marks were let go")
        return self.starts[p, c, i:j]

    @property
    def nbytes(self) -> int:
        """Bytes of marks kept: the rows' heads, and the pages of the parts not drawn yet."""
        return self.heads.nbytes + len(self.left) * self.counts.strides[0]

    def release(self, p: int) -> None:
        """Part ``p`` was drawn: its marks are let go, and their pages given back to the
        system (a copy, after pickling, keeps them until it is dropped whole)."""
        self.left.discard(p)
        buf = self.counts.base
        if isinstance(buf, mmap.mmap) and _PRIVATE and hasattr(mmap, "MADV_DONTNEED"):
            region = self.counts.strides[0]
            head = len(buf) - self.counts.shape[0] * region
            buf.madvise(mmap.MADV_DONTNEED, head + p * region, region)
