"""Persistent degraded nodes: a throttled CPU, a slow disk, a flaky network.

A degraded node keeps only a fraction ``c`` of one resource's capacity. Withholding capacity
is the same as raising the resource's utilisation: the free share ``1 - l`` shrinks by ``c``,
so the level a task meets is ``1 - c * (1 - l)``. Through the convex response
(:func:`~sim_bridge.world.contention_response`) that slows a task sensitive to the resource
several-fold and one that is not barely at all, and the node's counters (cpu, disk, network
readings are functions of the levels) show it. The capacity drifts: ``c(t) = c0 *
exp(drift * x(t))`` (clipped to [0.05, 1]) with ``x`` a unit AR(1) of time constant
``drift_hours``, so a bad node gets better and worse over hours.

Evidence. FlowBench (PoSeiDon, ``../shared/data/flowbench``) injects exactly these faults
on a real HTCondor cluster: ``cpu_2``/``cpu_3`` withhold 2 or 3 of an executor's 4 cores
(``c = 1/2, 1/4``), ``hdd_5``/``hdd_10`` cap its disk writes; on the throttled executors the
median job ran 1.5-3.5x slower than on the others (``cpu_3``: 3.5x, ``cpu_2``: 1.8x,
``hdd_5``: 1.5x; :func:`flowbench_throttle_facts` measures it), and 40% of all stragglers ran
on them. ``c0`` is drawn uniformly between 1/4 and 1/2 to span those settings. The share of
degraded nodes in a production cluster has no published figure we could find: 10% is an
assumption (FlowBench throttles about a quarter of the executors in an anomaly run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim_bridge import _portable_math as portable_math
from sim_bridge.world._block_marks import _normals_core, seekable
from sim_bridge.world._capacity_marks import CapacityParts
from sim_bridge.world._persistence import _CHUNK_BYTES, ar1_inplace

__all__ = ["BAD_NODE_SHARE", "BadNodes", "degrade_levels"]

BAD_NODE_SHARE = 0.10
#: kinds of degradation: the resource index (cpu, mem, disk, net) each one throttles
BAD_KINDS = {"cpu": 0, "disk": 2, "net": 3}


@dataclass
class BadNodes:
    """Which nodes are degraded, on which resource, and their capacity path.

    Parameters
    ----------
    n_nodes : int
    seed_words : tuple of int
        Seed of the draws (``numpy.random.default_rng([*seed_words, ...])``).
    share : float
        Share of degraded nodes.
    capacity : (float, float)
        Range of the initial capacity fraction ``c0`` (uniform).
    drift : float
        Log-sd of the capacity's drift.
    drift_hours : float
        Time constant of the drift (h).

    Examples
    --------
    >>> b = BadNodes(200, (1,))
    >>> bool(0.03 < (b.resource >= 0).mean() < 0.2)
    True
    >>> c = b.capacity_block(0, 1440, 60.0)
    >>> c.shape, bool(((c > 0) & (c <= 1)).all()), bool((c[b.resource == -1] == 1).all())
    ((200, 1440), True, True)
    """

    n_nodes: int
    seed_words: tuple = (0,)
    share: float = BAD_NODE_SHARE
    capacity: tuple[float, float] = (0.25, 0.5)
    drift: float = 0.3
    drift_hours: float = 6.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.share <= 1.0:
            raise ValueError(f"parameter bad_node_share must be in [0, 1], got {self.share!r}")
        rng = np.random.default_rng([*self.seed_words, 0])
        n = self.n_nodes
        bad = rng.random(n) < self.share
        kinds = np.array(list(BAD_KINDS.values()))
        #: resource index degraded on each node (-1: a healthy node)
        self.resource = np.where(bad, kinds[rng.integers(0, len(kinds), n)], -1)
        lo, hi = self.capacity
        self.c0 = np.where(bad, rng.uniform(lo, hi, n), 1.0)
        self._x = rng.standard_normal(n)  # the drift's state (stationary start)

    def capacity_block(
        self, b: int, n_steps: int, dt: float, *, bad_only: bool = False
    ) -> np.ndarray:
        """Capacity fractions ``(n_nodes, n_steps)`` of block ``b`` (b = 0, 1, ... in order);
        ``bad_only``: only the degraded nodes' rows, ``(len(bad_nodes), n_steps)`` in the
        order of :attr:`bad_nodes` (the others are 1), the same values without the healthy
        nodes' rows (a block of 33,000 nodes is 380 MB, its degraded rows 38 MB).

        The block's normals are one stream over (node, step) in C order, drawn and turned
        into capacities in chunks of node rows of about ``_CHUNK_BYTES``: NumPy's normals
        carry no state between calls but the bit generator's, each row's AR(1) and the
        element-wise steps are the row's own, so the values are those of the whole block at
        once, bit for bit, with one chunk's temporaries (not five block-sized arrays, ~1.1 GB
        beside the levels on 33,000 nodes).

        Examples
        --------
        >>> b, b2 = BadNodes(50, (3,)), BadNodes(50, (3,))
        >>> rows = b2.capacity_block(0, 30, 60.0, bad_only=True)
        >>> bool((b.capacity_block(0, 30, 60.0)[b.bad_nodes] == rows).all())
        True
        """
        (c,) = self._capacity(b, n_steps, dt, bad_only=bad_only, parts=1)
        return c

    def capacity_parts(self, b: int, n_steps: int, dt: float, parts: int) -> list[np.ndarray]:
        """:meth:`capacity_block` of the degraded nodes' rows (``bad_only``) in ``parts``
        arrays of ``n_steps // parts`` steps each, the same values: a cluster that draws its
        paths a part at a time lets each part's capacities go once used (on 33,000 nodes the
        block's rows are 38 MB).

        Examples
        --------
        >>> b, b2 = BadNodes(50, (3,)), BadNodes(50, (3,))
        >>> rows = b2.capacity_block(0, 30, 60.0, bad_only=True)
        >>> parts = b.capacity_parts(0, 30, 60.0, 3)
        >>> [p.shape[1] for p in parts], bool((np.concatenate(parts, axis=1) == rows).all())
        ([10, 10, 10], True)
        """
        if not (isinstance(parts, (int, np.integer)) and parts >= 1 and n_steps % parts == 0):
            raise ValueError(f"parameter parts must divide n_steps={n_steps}, got {parts!r}")
        return self._capacity(b, n_steps, dt, bad_only=True, parts=int(parts))

    def capacity_marks(self, b: int, n_steps: int, dt: float, parts: int) -> CapacityParts:
        """:meth:`capacity_parts` drawn a part at a time: the block's stream is drawn whole
        now (the drift's state moves on to the next block, as :meth:`capacity_parts` moves
        it), but only each degraded row's marks at every part are kept, and a part's
        capacities are drawn from them when asked (:class:`CapacityParts`, the same
        floats): 24 bytes a degraded row and part, where the parts' arrays are 8 bytes a
        row and step (0.9 MB, not 38 MB, on 33,000 nodes in 12 parts). Without
        ``sim_bridge._normals_core`` (or a stream that does not match this NumPy's) the
        parts are computed now and held.

        Examples
        --------
        >>> a, b = BadNodes(40, (2,)), BadNodes(40, (2,))
        >>> held = a.capacity_parts(0, 12, 60.0, 4)
        >>> marks = b.capacity_marks(0, 12, 60.0, 4)
        >>> all(bool((marks.part(p) == held[p]).all()) for p in range(4))
        True
        """
        if not (isinstance(parts, (int, np.integer)) and parts >= 1 and n_steps % parts == 0):
            raise ValueError(f"parameter parts must divide n_steps={n_steps}, got {parts!r}")
        if n_steps < 1:
            raise ValueError(f"parameter n_steps must be >= 1, got {n_steps!r}")
        parts, m = int(parts), n_steps // int(parts)
        if not seekable():
            held: list[np.ndarray | None] = [
                *self._capacity(b, n_steps, dt, bad_only=True, parts=parts)
            ]
            return CapacityParts(m, held=held, left=set(range(parts)))
        assert _normals_core is not None
        rng = np.random.default_rng([*self.seed_words, b + 1])
        words = _normals_core.state_words(rng)
        phi = math.exp(-dt / (3600.0 * self.drift_hours))
        scale = np.sqrt(1.0 - phi * phi)
        n = self.n_nodes
        healthy = self.resource == -1
        where = np.cumsum(~healthy) - 1
        n_bad = int((~healthy).sum())
        states = np.empty((parts, n_bad, 2), dtype=np.uint64)
        starts = np.empty((parts, n_bad))
        last = np.empty(n)
        rows = max(1, _CHUNK_BYTES // (8 * max(n_steps, 1)))
        for i in range(0, n, rows):
            j = min(i + rows, n)
            e = np.empty((j - i, n_steps))
            marks = np.empty((j - i, parts, 2), dtype=np.uint64)
            _normals_core.draw_marked(words, e, m, marks)  # rng.standard_normal's values
            e *= scale
            x = ar1_inplace(e, phi, self._x[i:j])
            last[i:j] = x[:, -1]
            keep = np.flatnonzero(~healthy[i:j])
            if keep.size:
                at = where[i + keep]
                states[:, at] = marks[keep].transpose(1, 0, 2)
                starts[0, at] = self._x[i + keep]
                starts[1:, at] = x[keep][:, m - 1 : -1 : m].T
        self._x = phi * last / phi if phi > 0 else last  # as _capacity leaves it
        return CapacityParts(
            m,
            states=states,
            starts=starts,
            inc=(int(words[2]), int(words[3])),
            phi=phi,
            scale=float(scale),
            drift=float(self.drift),
            c0=self.c0[~healthy].copy(),
            left=set(range(parts)),
        )

    def _capacity(
        self, b: int, n_steps: int, dt: float, *, bad_only: bool, parts: int
    ) -> list[np.ndarray]:
        rng = np.random.default_rng([*self.seed_words, b + 1])
        phi = math.exp(-dt / (3600.0 * self.drift_hours))
        scale = np.sqrt(1.0 - phi * phi)
        n = self.n_nodes
        healthy = self.resource == -1
        where = np.cumsum(~healthy) - 1  # the row of each degraded node in the bad_only array
        m = n_steps // parts
        out = [np.empty((int((~healthy).sum()) if bad_only else n, m)) for _ in range(parts)]
        last = np.empty(n)
        rows = max(1, _CHUNK_BYTES // (8 * max(n_steps, 1)))
        for i in range(0, n, rows):
            j = min(i + rows, n)
            e = rng.standard_normal((j - i, n_steps)) * scale
            x = ar1_inplace(e, phi, self._x[i:j])  # lfilter's AR(1), bit for bit
            last[i:j] = x[:, -1]
            if not bad_only:
                (c,) = out
                drift = portable_math.exp(self.drift * x)
                np.clip(self.c0[i:j, None] * drift, 0.05, 1.0, out=c[i:j])
                continue
            keep = np.flatnonzero(~healthy[i:j])
            if keep.size:
                x = x[keep]
                drift = portable_math.exp(self.drift * x)
                got = np.clip(self.c0[i + keep, None] * drift, 0.05, 1.0)
                for p, c in enumerate(out):
                    c[where[i + keep]] = got[:, p * m : (p + 1) * m]
        self._x = phi * last / phi if phi > 0 else last  # as from lfilter's zf / phi
        if not bad_only:
            out[0][healthy] = 1.0
        return out

    @property
    def bad_nodes(self) -> np.ndarray:
        """The degraded nodes, in increasing order."""
        return np.flatnonzero(self.resource >= 0)


def degrade_levels(
    levels: np.ndarray,
    bad: BadNodes,
    capacity: np.ndarray,
    *,
    inplace: bool = False,
    bad_rows: bool = False,
) -> np.ndarray:
    """Levels ``(4, n, k)`` as a task meets them: ``1 - c (1 - l)`` on each bad node's resource
    (``inplace``: written over ``levels``, same values, no copy; ``bad_rows``: ``capacity``
    holds only the degraded nodes' rows, in the order of :attr:`BadNodes.bad_nodes`).

    Examples
    --------
    >>> b = BadNodes(3, (0,), share=1.0)
    >>> lv = np.full((4, 3, 2), 0.2)
    >>> out = degrade_levels(lv, b, np.full((3, 2), 0.5))
    >>> sorted(set(out.round(2).ravel().tolist()))
    [0.2, 0.6]
    """
    out = levels if inplace else levels.copy()
    for i, node in enumerate(bad.bad_nodes):
        r = bad.resource[node]
        out[r, node] = 1.0 - capacity[i if bad_rows else node] * (1.0 - levels[r, node])
    return out
