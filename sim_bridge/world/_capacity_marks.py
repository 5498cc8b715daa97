"""A day-block's degraded capacities drawn a part at a time from marks.

A cluster that draws its contention paths a part (a range of steps) at a time degrades each
part's levels with the degraded nodes' capacities over those steps
(:meth:`~sim_bridge.world.BadNodes.capacity_parts`). The capacities of a block are one stream
of normals ordered by node row, then step, over every node, healthy or not, filtered by an
AR(1) per row; so the block's first part drew the whole stream, and until 2026-11-30 kept the
degraded rows of every part: 38 MB on 33,000 nodes, drawn whole at the block's first part
(at 23.87 h of an FB-2010 day, on top of the day's live work).

:class:`CapacityParts` keeps instead, for every degraded row and part, the bit generator's
state before the part's first normal and the AR(1) state before its first step (24 bytes a
row and part: 0.9 MB on 33,000 nodes in 12 parts), as
:class:`~sim_bridge.world._block_marks.BlockMarks` does for the levels; a part's capacities
are drawn when asked, from its marks, to the same floats: the same normals
(``sim_bridge._normals_core``, NumPy's ziggurat over the same PCG64 states), scaled, filtered,
exponentiated and clipped by the same operations in the same order. Without the extension,
or when its stream does not match this NumPy's (:func:`~sim_bridge.world._block_marks.seekable`),
the parts are computed at once and held, as before.

Examples
--------
>>> from sim_bridge.world import BadNodes
>>> a, b = BadNodes(60, (4,)), BadNodes(60, (4,))
>>> whole = a.capacity_block(0, 30, 60.0, bad_only=True)
>>> parts = b.capacity_marks(0, 30, 60.0, 3)
>>> got = np.concatenate([parts.part(p) for p in range(3)], axis=1)
>>> bool((got == whole).all()), bool((b._x == a._x).all())
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim_bridge import _portable_math as portable_math
from sim_bridge.world._block_marks import _normals_core
from sim_bridge.world._persistence import ar1_inplace

__all__ = ["CapacityParts"]


@dataclass
class CapacityParts:
    """The degraded rows' capacities of one block, a part of ``every`` steps at a time.

    Attributes
    ----------
    every : int
        Steps a part.
    held : list of ndarray or None
        The parts computed at once (no marks: without the extension); else None.
    states : ndarray of uint64, shape (parts, rows, 2)
        The bit generator's state (high, low) before each part's first normal of each
        degraded row.
    starts : ndarray of float64, shape (parts, rows)
        The AR(1) state before each part's first step.
    inc : tuple of int
        The bit generator's increment (high, low).
    phi, scale, drift : float
        The drift's AR coefficient, its innovations' scale and its log-sd.
    c0 : ndarray, shape (rows,)
        The degraded rows' initial capacities.
    left : set of int
        The parts not let go (:meth:`release`).
    """

    every: int
    held: list[np.ndarray | None] | None = None
    states: np.ndarray | None = None
    starts: np.ndarray | None = None
    inc: tuple[int, int] = (0, 0)
    phi: float = 0.0
    scale: float = 0.0
    drift: float = 0.0
    c0: np.ndarray | None = None
    left: set[int] = field(default_factory=set)

    def part(self, p: int) -> np.ndarray:
        """The capacities of part ``p``: ``(rows, every)``, in the order of the degraded
        nodes."""
        if p not in self.left:
            raise ValueError(f"part {p} of the capacities was let go or does not exist")
        if self.held is not None:
            got = self.held[p]
            assert got is not None
            return got
        assert _normals_core is not None and self.states is not None
        assert self.starts is not None and self.c0 is not None
        e = np.empty((self.states.shape[1], self.every))
        _normals_core.draw_from(self.states[p], self.inc[0], self.inc[1], e)
        e *= self.scale
        x = ar1_inplace(e, self.phi, self.starts[p])
        drift = portable_math.exp(self.drift * x)
        return np.clip(self.c0[:, None] * drift, 0.05, 1.0)

    def release(self, p: int) -> None:
        """Part ``p`` was used: let it go."""
        self.left.discard(p)
        if self.held is not None:
            self.held[p] = None

    @property
    def nbytes(self) -> int:
        """Bytes held: the parts (no marks) or the marks."""
        if self.held is not None:
            return sum(a.nbytes for a in self.held if a is not None)
        assert self.states is not None and self.starts is not None
        return self.states.nbytes + self.starts.nbytes
