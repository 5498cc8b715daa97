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
same order. That is 16 + 8 bytes a (component, row) and part: 36 MiB on 33,000 nodes in 6
parts.

Without the extension, or when its stream does not match this NumPy's
(:func:`sim_bridge._normals_core.stream_matches_numpy`, checked once), :data:`SEEKABLE` is
False and every part draws the whole block as before.
"""

from __future__ import annotations

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
    states : ndarray of uint64, shape (2, rows, parts, 2)
        The state before each (component, row)'s part (high, low).
    starts : ndarray of float64, shape (2, rows, parts)
        The AR(1) state before each part's first step.
    left : set of int
        The parts not drawn yet; the block's owner drops the marks once it is empty.
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
        return cls(
            key,
            _normals_core.state_words(rng),
            np.empty((2, rows, parts, 2), dtype=np.uint64),
            np.empty((2, rows, parts)),
            set(range(parts)),
        )

    def draw(self, c: int, i: int, j: int, n_steps: int) -> np.ndarray:
        """Rows ``i`` to ``j`` of component ``c``: all their normals, as ``standard_normal``
        draws them next, recording where each part starts."""
        assert _normals_core is not None
        y = np.empty((j - i, n_steps))
        _normals_core.draw_marked(self.words, y, self.key[2], self.states[c, i:j])
        return y

    def note_starts(self, c: int, i: int, j: int, y: np.ndarray, start: np.ndarray) -> None:
        """Record the AR(1) state before each part of rows ``i`` to ``j``: ``start`` before
        the first, the filtered ``y`` at each later part's previous step."""
        every = self.key[2]
        self.starts[c, i:j, 0] = start
        self.starts[c, i:j, 1:] = y[:, every - 1 : -1 : every]

    def part(self, c: int, i: int, j: int, p: int) -> np.ndarray:
        """Rows ``i`` to ``j`` of component ``c``: the normals of part ``p`` alone."""
        assert _normals_core is not None
        y = np.empty((j - i, self.key[2]))
        _normals_core.draw_from(self.states[c, i:j, p], self.words[2], self.words[3], y)
        return y
