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
read and set): for every row and every part, the bit generator's state before the part's
first normal and the AR(1) state before its first step. A later part starts every row there
and draws and filters only its own steps, to the same floats: the same normals (the
stream's values from the same state), scaled and filtered by the same operations in the
same order. That is 16 + 8 bytes a (component, row) and part: 73 MiB on 33,000 nodes in 12
parts. Each part's marks lie in pages of their own (an anonymous map), which are given back
(``madvise(MADV_DONTNEED)``) once the part is drawn: a block's marks shrink by a part's share
each part, from 73 MiB after its first pass to none by its last (issue 13: a day's peak comes
mid-block, at 14-15 h on FB-2010). A part asked again after that is drawn from a new first
pass, to the same floats.

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
    states : ndarray of uint64, shape (parts, 2, rows, 2)
        The state before each part's (component, row) (high, low).
    starts : ndarray of float64, shape (parts, 2, rows)
        The AR(1) state before each part's first step.
    left : set of int
        The parts not drawn yet, whose marks are kept (:meth:`release`); the block's owner
        drops the marks once it is empty.

    Examples
    --------
    >>> import numpy as np
    >>> m = BlockMarks.start(np.random.default_rng(1), (0, 12, 4), rows=5)
    >>> m.states.shape, m.starts.shape, sorted(m.left)
    ((3, 2, 5, 2), (3, 2, 5), [0, 1, 2])
    >>> m.release(1)
    >>> sorted(m.left)
    [0, 2]
    """

    key: tuple[int, int, int]
    words: np.ndarray
    states: np.ndarray
    starts: np.ndarray
    left: set[int]

    @classmethod
    def start(cls, rng: np.random.Generator, key: tuple[int, int, int], rows: int) -> BlockMarks:
        """Empty marks for a first pass that draws from ``rng``'s current state."""
        assert _normals_core is not None
        parts = key[1] // key[2]
        # part p's states (2, rows, 2) then its starts (2, rows), in whole pages from
        # p * region: one private anonymous map, whose pages a part gives back once drawn
        # (a shared one would keep them in its backing store)
        region = -(-48 * rows // mmap.PAGESIZE) * mmap.PAGESIZE
        size = max(parts * region, 1)
        buf = mmap.mmap(-1, size, flags=_PRIVATE) if _PRIVATE else bytearray(size)
        states = np.ndarray((parts, 2, rows, 2), np.uint64, buf, 0, (region, 16 * rows, 16, 8))
        starts = np.ndarray((parts, 2, rows), np.float64, buf, 32 * rows, (region, 8 * rows, 8))
        return cls(key, _normals_core.state_words(rng), states, starts, set(range(parts)))

    def draw(self, c: int, i: int, j: int, n_steps: int) -> np.ndarray:
        """Rows ``i`` to ``j`` of component ``c``: all their normals, as ``standard_normal``
        draws them next, recording where each part starts."""
        assert _normals_core is not None
        y = np.empty((j - i, n_steps))
        marks = self.states[:, c, i:j].transpose(1, 0, 2)  # (rows, parts, 2), strided
        _normals_core.draw_marked(self.words, y, self.key[2], marks)
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
        _normals_core.draw_from(self.states[p, c, i:j], self.words[2], self.words[3], y)
        return y

    def start_of(self, c: int, i: int, j: int, p: int) -> np.ndarray:
        """The AR(1) state before part ``p``'s first step, rows ``i`` to ``j`` of component
        ``c``."""
        if p not in self.left:
            raise ValueError(f"part {p} of block {self.key[0]}: its marks were let go")
        return self.starts[p, c, i:j]

    def release(self, p: int) -> None:
        """Part ``p`` was drawn: its marks are let go, and their pages given back to the
        system (a copy, after pickling, keeps them until it is dropped whole)."""
        self.left.discard(p)
        buf = self.states.base
        if isinstance(buf, mmap.mmap) and _PRIVATE and hasattr(mmap, "MADV_DONTNEED"):
            region = self.states.strides[0]
            buf.madvise(mmap.MADV_DONTNEED, p * region, region)
