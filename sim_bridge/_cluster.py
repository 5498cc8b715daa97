"""Cluster model: heterogeneous nodes, background contention paths, the rate at which an attempt
progresses, and the sysstat-like counters observed on a node (see :mod:`sim_bridge.world`).

Time is cut into steps of ``dt`` seconds (60 s, the sampling period of the Alibaba 2018 series).
Each node has, per resource (cpu, mem, disk, net), a background contention level that is
constant within a step: a 3-state Markov chain per node and resource (synthetic source) or a
replay of a real machine's series (``alibaba2018`` source). A task of workload profile ``a``
(sensitivity per resource) progresses on node ``n`` at rate

    rate[n, k] = 1 / (speed[n] * (1 + kappa * sum_r a[r] * sens[n, r] * phi(level[r, n, k])))

nominal work-seconds per second, with ``phi`` the convex, queueing-like response of
:func:`sim_bridge.world.contention_response`, so its end time follows from the cumulative rate
path, solved analytically at launch (no heartbeat events). The per-node sensitivity ``sens``
makes the relation between counters and slowdown differ by node; the profile makes it differ
by workload. A share of the nodes is persistently degraded (:class:`sim_bridge.world.BadNodes`):
one resource keeps a drifting fraction of its capacity, which raises the level its tasks meet
and its counters show.

The paths are drawn a block at a time (``_BLOCK`` = 1,440 steps, a day at ``dt = 60 s``),
when a read needs a step past them: the horizon (:attr:`Cluster.horizon_steps`) is the
smallest whole number of blocks that holds every step read so far (one block more after a
single-step read of a block's last step, below), so it stays at most two blocks, and mostly
less than one, ahead of the furthest step any read needed. A cluster may draw its blocks a
part at a time (``extend_steps``, a divisor of the block): the same values, the horizon then
counted in parts. Solves read only the steps their
work needs (a co-located solve, :meth:`Cluster.end_with`, reads a chunk of steps at a time
but draws no block for the part of a chunk past the work's end). A single-step read of the
last step (:meth:`Cluster.rate_with`) draws the next block.

A streaming run solves with ``within=True`` (:meth:`Cluster.end_with`,
:meth:`Cluster.end_from`): a solve whose work is not done by the end of the paths draws
nothing for it and returns a :class:`PastPaths`; the engine goes on with it
(:meth:`Cluster.end_resume`) when its clock gets there, to the float the unbounded solve
gives. Its paths so follow the clock (at most a block and a few steps ahead), however far
past them its attempts end, and only the clock decides when a block is drawn.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from sim_bridge import _portable_math as portable_math
from sim_bridge._alibaba2018 import MACHINE_USAGE_FILE, load_machine_levels
from sim_bridge._path_window import slide_window
from sim_bridge.world._bad_nodes import BAD_NODE_SHARE, BadNodes, degrade_levels
from sim_bridge.world._capacity_marks import CapacityParts
from sim_bridge.world._persistence import (
    DEFAULT_PERSISTENCE,
    PersistenceParams,
    PersistentLevels,
)
from sim_bridge.world._response import RESPONSE_EPS, contention_load, contention_response

try:  # the counters computed in C (built by pip install; optional)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._counters_core import CounterSynth
except ImportError:  # pragma: no cover - an install without a C compiler
    CounterSynth = None
try:  # the co-located tenants' step rates computed in C (built by pip install; optional)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._tenants_core import TenantRates
except ImportError:  # pragma: no cover - an install without a C compiler
    TenantRates = None
try:  # the convex response of a block in one C pass (built by pip install; optional)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._paths_core import response as _compiled_response
except ImportError:  # pragma: no cover - an install without a C compiler
    _compiled_response = None

__all__ = ["COUNTER_NAMES", "RESOURCES", "Cluster", "PastPaths"]

RESOURCES = ("cpu", "mem", "disk", "net")
#: background contention sources: fitted persistence (default), the real series replayed,
#: and the old 3-state Markov chain (kept as a special case: it forgets within the hour)
SOURCES = ("synthetic", "alibaba2018", "markov")
_STATE_LEVELS = np.array([0.08, 0.35, 0.75])
_BLOCK = 1440  # steps per extension (one day at dt = 60 s)
_CHUNK_MIN = 8  # steps solved one at a time before end_with/work_with vectorise
#: the chunks of a co-tenant walk (``rates_with``, ``_end_chunks``) in C when the extension is
#: built; off, the NumPy reference walks them, to the same floats (``bench_chunk_walks.py``)
CHUNKS_IN_C = True
#: released steps are dropped at the next extension (which copies the paths anyway), or at
#: once when at least this many and at least half the window are released (a copy of what is
#: kept costs a transient as large as itself: trimming a small prefix raises the peak)
_TRIM_STEPS = 120
_RATE_CHUNK_BYTES = 8 << 20  # responses computed at once when a block's rates are appended
#: set to 1 to keep every contention path step ever computed (the peer of the window)
KEEP_PATHS_ENV = "STRAGGLER_KEEP_PATHS"

#: the node counters recorded at every launch (column ``c_<name>`` in the trace)
COUNTER_NAMES: tuple[str, ...] = (
    "cpu_user",
    "cpu_sys",
    "cpu_iowait",
    "cpu_idle",
    "run_queue",
    "load1",
    "load5",
    "load15",
    "running_tasks",
    "free_slots",
    "mem_used_pct",
    "mem_cached_pct",
    "swap_used_pct",
    "page_faults",
    "major_faults",
    "mem_bw",
    "cache_miss_pki",
    "disk_util_pct",
    "disk_queue",
    "disk_read_kbs",
    "disk_write_kbs",
    "disk_await_ms",
    "net_rx_kbs",
    "net_tx_kbs",
    "net_retrans",
    "ctx_switches",
    "interrupts",
    "cpu_cores",
    "cpu_mhz",
)


def _hash_normal(
    seed: int, node: np.ndarray, sample: np.ndarray, counter: int | np.ndarray
) -> np.ndarray:
    """Standard normal noise that is a pure function of (seed, node, sample index, counter):
    the same reading is seen by a policy querying a node and by the trace row of a launch at
    that instant. SplitMix64 finaliser + Box-Muller."""
    with np.errstate(over="ignore"):
        x = (
            np.uint64(seed & 0xFFFFFFFF) * np.uint64(0x9E3779B97F4A7C15)
            ^ node.astype(np.uint64) * np.uint64(0xBF58476D1CE4E5B9)
            ^ sample.astype(np.uint64) * np.uint64(0x94D049BB133111EB)
            ^ np.uint64(counter + 1) * np.uint64(0xD6E8FEB86659FD93)
        )
        out = []
        for salt in (np.uint64(0x632BE59BD9B4E019), np.uint64(0x2545F4914F6CDD1D)):
            z = x + salt
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
            out.append(((z >> np.uint64(11)).astype(np.float64) + 0.5) * (1.0 / 2**53))
    u1, u2 = out
    return np.sqrt(-2.0 * portable_math.log(u1)) * portable_math.cos(2.0 * np.pi * u2)


class PastPaths:
    """Where a bounded solve stopped (:meth:`Cluster.end_with` and :meth:`Cluster.end_from`
    with ``within=True``): the work is not done by the end of the contention paths.

    ``at`` is that end (the attempt's true end lies after it): the caller goes on with
    :meth:`Cluster.end_resume` once its clock gets there, and gets the same float the
    unbounded solve gives, without the paths having been drawn ahead of the clock for it.
    ``state`` is where the walk stopped: ``(k, m, left)`` for a solve under co-located
    demand (the chunk it goes on with and the work left before it), ``(t0, k0, r0, c0,
    work)`` for one without (its :meth:`Cluster.launch_point` and work: it is solved again
    from them, which reads the same values).
    """

    __slots__ = ("at", "state")

    def __init__(self, at: float, state: tuple):
        self.at = at
        self.state = state

    def __repr__(self) -> str:
        return f"PastPaths(at={self.at!r}, state={self.state!r})"


class Cluster:
    """Nodes, their background contention and the analytic attempt-duration solver.

    Parameters
    ----------
    n_nodes, slots : int
        Cluster size and slots per node.
    seed : int
        Seed of every draw of the cluster (node factors, contention paths, counter noise).
    source : {"synthetic", "alibaba2018", "markov"}
        Background contention: synthetic levels whose persistence and between-machine
        variance are fitted on the Alibaba 2018 series (:mod:`sim_bridge.world._persistence`),
        replay of the 16 real machines of that subset (node ``i`` replays machine ``i mod
        16`` from a random offset), or the old 3-state Markov chain.
    data_dir : path, optional
        Data directory holding ``alibaba-v2018-machine-usage-subset/`` (replay source).
    ideal : bool
        Homogeneous nodes, no contention: every rate is 1 (oracle tests).
    dt : float
        Step of the contention paths (s).
    kappa : float
        Strength of contention on the slowdown.
    mean_hold : float
        Mean number of steps a Markov contention state lasts (``source="markov"``).
    persistence : PersistenceParams
        Parameters of the synthetic source (default: the fit on the Alibaba 2018 series).
    bad_node_share : float
        Share of persistently degraded nodes (:class:`sim_bridge.world.BadNodes`); 0 turns
        the cause off.
    response_eps : float
        Saturation guard of the convex response (:func:`sim_bridge.world.contention_response`).
    keep_paths : bool, optional
        Keep every step of the contention paths ever computed, ignoring :meth:`hold`
        (default: ``$STRAGGLER_KEEP_PATHS`` is ``1``). Otherwise only a window is kept: from
        the oldest step any reader holds (:meth:`hold`) to the furthest step read ahead;
        a read before it raises ``IndexError``. Results are the same either way.
    extend_steps : int, optional
        Steps the paths grow by at a time (default ``_BLOCK``, a day): a divisor of
        ``_BLOCK``. A block is still one draw (its values do not depend on this), but drawn
        a part at a time: with a window (:meth:`hold`) the paths then hold the steps from the
        oldest one read to the clock and a part, not to the end of the clock's day (on
        33,000 nodes a day-block of levels, rates and sums is 2.9 GB). A synthetic block's
        first part draws the block's whole stream and marks where each row's other parts
        start; those draw only their own steps
        (:meth:`~sim_bridge.world.PersistentLevels.block_part`). Results are the same for
        every value; the ``markov`` source draws whole blocks only.
    rate_steps : int, optional
        With a window (:meth:`hold`), the steps of every node's rates and running sums
        computed at once when a read reaches past them (default :attr:`extend_steps`): a
        divisor of ``extend_steps``. Each profile keeps 16 bytes a node and step of them, so
        on 33,000 nodes a part of 120 steps is 63 MB a profile, held until the clock is past
        it; smaller parts are dropped sooner, as the clock passes them (a reader that holds
        no rates further back). A solve whose end lies past them computes its node's rates
        from the levels (:meth:`_node_ahead`). Results are the same for every value.

    Examples
    --------
    >>> c = Cluster(4, 2, seed=1)
    >>> pid = c.profile_id((1.0, 0.0, 0.0, 0.0))
    >>> end = c.end_time(0, pid, 10.0, 30.0)
    >>> end > 10.0 and abs(c.work_between(0, pid, 10.0, end) - 30.0) < 1e-9
    True
    >>> ideal = Cluster(2, 1, seed=0, ideal=True)
    >>> ideal.end_time(1, ideal.profile_id((1, 1, 1, 1)), 5.0, 7.0)
    12.0
    """

    def __init__(
        self,
        n_nodes: int,
        slots: int,
        seed: int = 0,
        *,
        source: str = "synthetic",
        data_dir: str | Path | None = None,
        ideal: bool = False,
        dt: float = 60.0,
        kappa: float = 1.0,
        mean_hold: float = 20.0,
        bad_node_share: float = BAD_NODE_SHARE,
        response_eps: float = RESPONSE_EPS,
        persistence: PersistenceParams = DEFAULT_PERSISTENCE,
        keep_paths: bool | None = None,
        extend_steps: int | None = None,
        rate_steps: int | None = None,
    ):
        if not (isinstance(n_nodes, (int, np.integer)) and n_nodes >= 1):
            raise ValueError(f"parameter nodes must be an integer >= 1, got {n_nodes!r}")
        if not (isinstance(slots, (int, np.integer)) and slots >= 1):
            raise ValueError(f"parameter slots must be an integer >= 1, got {slots!r}")
        if source not in SOURCES:
            raise ValueError(
                f"parameter counters must be one of {', '.join(SOURCES)}, got {source!r}"
            )
        if not (dt > 0 and math.isfinite(dt)):
            raise ValueError(f"parameter dt must be > 0, got {dt!r}")
        if extend_steps is None:
            extend_steps = _BLOCK
        if not (
            isinstance(extend_steps, (int, np.integer))
            and 1 <= extend_steps <= _BLOCK
            and _BLOCK % extend_steps == 0
        ):
            raise ValueError(
                f"parameter extend_steps must be a divisor of {_BLOCK}, got {extend_steps!r}"
            )
        if extend_steps != _BLOCK and source == "markov" and not ideal:
            raise ValueError(
                f"parameter extend_steps={extend_steps!r}: the markov source draws whole "
                f"blocks ({_BLOCK} steps)"
            )
        #: steps the paths grow by at a time (a divisor of a block, see the parameter)
        self.extend_steps = int(extend_steps)
        if rate_steps is None:
            rate_steps = self.extend_steps
        if not (
            isinstance(rate_steps, (int, np.integer))
            and 1 <= rate_steps <= self.extend_steps
            and self.extend_steps % rate_steps == 0
        ):
            raise ValueError(
                f"parameter rate_steps must be a divisor of extend_steps={self.extend_steps}, "
                f"got {rate_steps!r}"
            )
        #: steps of every node's rates computed at once with a window (see the parameter)
        self.rate_steps = int(rate_steps)
        #: what rebuilds this cluster's paths from the start (a profile registered late)
        self._init_args: dict[str, Any] = dict(
            n_nodes=n_nodes, slots=slots, seed=seed, source=source, data_dir=data_dir,
            ideal=ideal, dt=dt, kappa=kappa, mean_hold=mean_hold,
            bad_node_share=bad_node_share, response_eps=response_eps, persistence=persistence,
            extend_steps=extend_steps, rate_steps=rate_steps,
        )  # fmt: skip
        if keep_paths is None:
            keep_paths = os.environ.get(KEEP_PATHS_ENV, "") == "1"
        #: keep every path step (True) or only the window readers hold (:meth:`hold`)
        self.keep_paths = bool(keep_paths)
        self.n_nodes, self.slots, self.seed = int(n_nodes), int(slots), int(seed)
        self.source, self.ideal, self.dt = source, bool(ideal), float(dt)
        self.kappa, self.mean_hold = float(kappa), float(mean_hold)
        if not (isinstance(response_eps, (int, float)) and response_eps > 0):
            raise ValueError(f"parameter response_eps must be > 0, got {response_eps!r}")
        self.response_eps = float(response_eps)
        #: persistently degraded nodes (none on an ideal cluster)
        self.bad = BadNodes(n_nodes, (self.seed, 404), 0.0 if ideal else bad_node_share)
        rng = np.random.default_rng([self.seed, 101])
        n = self.n_nodes
        if self.ideal:
            self.speed = np.ones(n)
            self.sens = np.zeros((n, 4))
        else:
            self.speed = portable_math.exp(rng.normal(0.0, 0.08, n))  # > 1: slower hardware
            self.sens = portable_math.exp(rng.normal(0.0, 0.45, (n, 4)))
        self.cores = rng.choice(np.array([16, 24, 32]), n).astype(float)
        #: per node multiplier of the noise tail exponent: 1 everywhere since the residual
        #: noise is node-independent (degraded nodes are :attr:`bad`); kept for the oracle API
        rng.random(n)  # the draw the old flaky-node tail took: later draws stay as they were
        self.tail = np.ones(n)
        busy = rng.beta(2.0, 3.0, (4, n))
        self._pi = np.stack([(1 - busy) ** 2, 2 * busy * (1 - busy), busy**2], axis=-1)
        self._pi_cum = np.cumsum(self._pi, axis=-1)
        self._state = (rng.random((4, n))[..., None] > self._pi_cum).sum(-1)
        self._replay = None
        self._persist = None
        if source == "synthetic" and not self.ideal:
            self._persist = PersistentLevels(persistence, n, (self.seed, 505), dt=self.dt)
        if source == "alibaba2018" and not self.ideal:
            if data_dir is None:
                raise FileNotFoundError(
                    "counters='alibaba2018' needs a data directory with " + MACHINE_USAGE_FILE
                )
            self.machine_ids, series = load_machine_levels(Path(data_dir) / MACHINE_USAGE_FILE, dt)
            self._replay = series
            self.machine = np.arange(n) % series.shape[1]
            self.offset = rng.integers(0, series.shape[2], n)
        #: the flat buffer the window of levels lives in (:func:`slide_window` moves it on in
        #: place: one window's memory at any time, not the old and the new at once)
        self._lvbuf = np.zeros(0)
        self._levels = self._lvbuf.reshape(4, n, 0)
        #: the compiled counter synthesis (None: the NumPy reference ``_counters`` is used)
        self._synth = None
        if CounterSynth is not None and not self.ideal:
            self._synth = CounterSynth(
                self.seed & 0xFFFFFFFF, self.cores, self.speed, self.slots, self.dt
            )
            try:  # an extension built before windows existed reads from step 0 only
                self._synth.set_levels(self._levels, 0)
            except TypeError:  # pragma: no cover - a stale build: keep every step
                self.keep_paths = True
        #: the compiled step rates under co-located demand (None: the Python reference,
        #: :meth:`_rate_with_py`, walks every step)
        self._trates = None
        if TenantRates is not None and not self.ideal:
            self._trates = TenantRates(
                self.sens, self.speed, self.kappa, self.response_eps, self.dt
            )
        self._horizon = 0  # steps covered by the paths (``_base + _levels.shape[2]``)
        #: absolute step of the first column kept of ``_levels`` (and of ``_rate``/``_cum``
        #: unless a reader holds the rates apart: ``_rbase``)
        self._base = 0
        self._holds: dict[str, int] = {}  # reader -> the oldest step it may still read
        #: reader -> {node: the oldest step of that node's levels it may still read}, for
        #: single nodes read before the reader's hold (:meth:`hold`'s ``nodes``)
        self._pins: dict[str, dict[int, int]] = {}
        #: node -> (first step, its levels ``(4, steps)`` from there to ``_base``): the steps
        #: before the window that a pin keeps of that node (:meth:`_keep_aside`)
        self._aside: dict[int, tuple[int, np.ndarray]] = {}
        #: reader -> the oldest step of the rates and running sums it may still read, when
        #: later than its hold (:meth:`hold`'s ``rates_from``)
        self._rholds: dict[str, int] = {}
        #: absolute step of the first column kept of ``_rate`` and ``_cum`` (>= ``_base``)
        self._rbase = 0
        #: steps covered by ``_rate``/``_cum``: the horizon, or with a window (a reader holds
        #: steps) as far as the rates of every node were read; beyond it a node's rates are
        #: computed from its levels when read (:meth:`cum_end`, :meth:`end_from`)
        self._rhorizon = 0
        #: per profile: the horizon when it was registered (its running sum up to there is
        #: added step by step, block by block after)
        self._seq_to: list[int] = []
        self._ahead_cache: dict = {}  # (pid, node, horizon) -> cum_end
        #: the most path steps held at once (a run's memory; :attr:`window_steps` now)
        self.max_window_steps = 0
        self._profiles: list[np.ndarray] = []
        #: profiles, sens and speed as Python lists (rate_with)
        self._lists: tuple[list[list[float]], list[list[float]], list[float]] | None = None
        self._rate: list[np.ndarray] = []
        self._cum: list[np.ndarray] = []
        #: per profile, at ``_rhorizon``: the running sum at the start of its block and the
        #: sum of the block's steps rated since (a block's sums are its start's plus its own
        #: running sum, whether its steps are rated at once or a part at a time)
        self._block_start: list[np.ndarray] = []
        self._block_sum: list[np.ndarray] = []
        self._drawn = 0  # steps of levels drawn (the horizon of the paths ever drawn)
        #: the drawing block's degraded capacities, a part at a time (``BadNodes.capacity_marks``)
        self._cap_rows: CapacityParts | None = None
        self._extend()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and deep-copied without the window's buffer (the window is its view):
        :meth:`__setstate__` makes the copy's window a view of a buffer of its own again."""
        state = self.__dict__.copy()
        del state["_lvbuf"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        levels = self._levels
        self._lvbuf = np.empty(levels.size)  # a buffer that owns its memory (slide_window)
        self._levels = self._lvbuf.reshape(levels.shape)
        self._levels[...] = levels
        for reader in (self._synth, self._trates):
            if reader is not None:  # they read the copy's window, not one of their own
                reader.set_levels(self._levels, self._base)

    # ----------------------------------------------------------------- contention paths
    @property
    def horizon_steps(self) -> int:
        return self._horizon

    @property
    def base_step(self) -> int:
        """The oldest step still kept (0 unless steps were dropped, see :meth:`hold`)."""
        return self._base

    @property
    def window_steps(self) -> int:
        """Path steps held in memory now (``horizon_steps - base_step``)."""
        return self._horizon - self._base

    def hold(
        self,
        reader: str,
        t: float | None,
        *,
        rates_from: float | None = None,
        nodes: dict[int, float] | None = None,
    ) -> None:
        """Declare that ``reader`` will read nothing before time ``t`` (None: nothing at all);
        steps no reader holds are dropped (unless :attr:`keep_paths`): at the next extension
        of the paths, or at once when they are at least half the window. A hold may only move
        forward: steps once released are gone.

        ``nodes`` (``{node: time}``, times before ``t``): the reader also reads those nodes'
        levels from those times on. When the window drops their steps, those of each such
        node are kept aside (4 floats a step, not the whole cluster's 4 per node), and
        :meth:`rate_with`, :meth:`work_with`, :meth:`end_with` and :meth:`end_resume` read
        them from there, to the same floats. A streamed run's engine pins the few nodes
        whose attempts have run for hours under unchanged co-located demand, so that the
        window follows the clock and not its oldest attempt. Each call replaces the reader's
        pins; a pin may only move forward, like a hold.

        ``rates_from`` (a time after ``t``): the reader reads only levels before it, not the
        profiles' rates and running sums (:meth:`cum_at`, :meth:`launch_point`,
        :meth:`pressure`, :meth:`step_rates`, :meth:`end_from`), which are then kept from
        the oldest such step any reader holds (:attr:`rates_base_step`). A streamed run's
        engine reads the levels from its attempts' segments under co-located demand on, and
        the rates only now: on 33,000 nodes the rates and sums of two profiles are another
        day-block's worth of memory (1 MB a step).

        Examples
        --------
        >>> c = Cluster(3, 1, seed=2, keep_paths=False)
        >>> c.hold("me", 3 * 3600.0)
        >>> c.base_step, c.window_steps
        (0, 1440)
        >>> c.levels_at([0], [1440 * 60.0]).shape  # the paths are extended: a day more
        (4, 1)
        >>> c.base_step, c.window_steps
        (180, 2700)
        >>> c.cum_at(0, c.profile_id((1, 0, 0, 0)), 3 * 3600.0) > 0
        True
        >>> c.cum_at(0, 0, 60.0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        IndexError: contention rates: step 1 (t=60.0) was dropped (kept from step 180); ...

        A reader of the levels from time 0 that reads the rates only from 3 h on:

        >>> r = Cluster(3, 1, seed=2, keep_paths=False)
        >>> r.hold("me", 0.0, rates_from=3 * 3600.0)
        >>> _ = r.levels_at([0], [1440 * 60.0])
        >>> r.base_step, r.rates_base_step
        (0, 180)

        A reader of the levels from 3 h on, and of node 2's from 1 h on:

        >>> p = Cluster(3, 1, seed=2, keep_paths=False)
        >>> pid = p.profile_id((0.5, 0.2, 1.0, 0.3))
        >>> full = Cluster(3, 1, seed=2)
        >>> _ = full.profile_id((0.5, 0.2, 1.0, 0.3))
        >>> p.hold("me", 3 * 3600.0, nodes={2: 3600.0})
        >>> _ = p.levels_at([0], [1440 * 60.0])
        >>> p.base_step
        180
        >>> dem = (0.1, 0.0, 0.3, 0.0)
        >>> p.work_with(2, pid, 3600.0, 5 * 3600.0, dem) == full.work_with(
        ...     2, pid, 3600.0, 5 * 3600.0, dem)
        True
        >>> p.work_with(1, pid, 3600.0, 5 * 3600.0, dem)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        IndexError: contention paths: step 60 was dropped (kept from step 180); ...
        """
        if t is None:
            self._holds.pop(reader, None)
            self._rholds.pop(reader, None)
            self._pins.pop(reader, None)
        else:
            k = self._holds[reader] = int(t // self.dt)
            if rates_from is None:
                self._rholds.pop(reader, None)
            else:
                self._rholds[reader] = max(k, int(rates_from // self.dt))
            dt = self.dt
            pins = {int(n): int(tn // dt) for n, tn in (nodes or {}).items() if tn // dt < k}
            if pins:
                self._pins[reader] = pins
            else:
                self._pins.pop(reader, None)
        if self._aside:  # what no pin holds any more goes
            self._keep_aside(self._base)
        if self.keep_paths or self.ideal or not self._holds:
            return
        drop = self._release_to() - self._base
        rdrop = self._release_rates_to() - self._rbase
        trim = drop >= _TRIM_STEPS and 2 * drop >= self._horizon - self._base
        rtrim = rdrop >= min(_TRIM_STEPS, self.rate_steps) and (
            2 * rdrop >= self._rhorizon - self._rbase
        )
        if trim or rtrim:
            self._trim(drop if trim else 0, rdrop if rtrim else 0)

    @property
    def rates_base_step(self) -> int:
        """The oldest step whose rates and running sums are still kept (>= :attr:`base_step`;
        see :meth:`hold`'s ``rates_from``)."""
        return self._rbase

    def _release_to(self) -> int:
        """The first step some reader still holds (clamped to the horizon)."""
        if self.keep_paths or not self._holds:
            return self._base
        return max(self._base, min(min(self._holds.values()), self._horizon))

    def _release_rates_to(self) -> int:
        """The first step of the rates some reader still holds (clamped to the steps rated:
        the running sum at ``_rhorizon`` is the next steps' carry)."""
        if self.keep_paths or not self._holds:
            return self._rbase
        held = min(self._rholds.get(r, k) for r, k in self._holds.items())
        return max(self._rbase, self._release_to(), min(held, self._rhorizon))

    def _pinned(self) -> dict[int, int]:
        """Every reader's pins together: per node, the oldest step some reader holds of it."""
        pins = self._pins
        if not pins:
            return {}
        if len(pins) == 1:
            return next(iter(pins.values()))
        out: dict[int, int] = {}
        for by_node in pins.values():
            for node, k in by_node.items():
                if k < out.get(node, k + 1):
                    out[node] = k
        return out

    def _keep_aside(self, new_base: int) -> None:
        """Before the window's first step moves to ``new_base``: keep aside, for each pinned
        node, its levels from its pin to ``new_base`` (what it kept aside already, and the
        window's steps about to go); drop what no pin holds."""
        aside: dict[int, tuple[int, np.ndarray]] = {}
        base = self._base
        for node, p in self._pinned().items():
            if p >= new_base:
                continue
            parts = []
            first = max(p, base)
            old = self._aside.get(node)
            if old is not None and p < base:
                s0, arr = old
                first = max(p, s0)
                parts.append(arr[:, first - s0 :])
            parts.append(self._levels[:, node, max(p, base) - base : new_base - base])
            kept = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
            if kept.shape[1]:
                aside[node] = (first, np.array(kept))  # its own copy: the window goes
        self._aside = aside

    def _node_levels(self, node: int, k0: int, m: int) -> np.ndarray:
        """``node``'s levels ``(4, m)`` of the steps from ``k0`` (within the horizon): a view
        of the window, or those kept aside before it followed by the window's."""
        j = k0 - self._base
        if j >= 0:
            return self._levels[:, node, j : j + m]
        old = self._aside.get(node)
        if old is None or k0 < old[0]:
            raise self._dropped(k0)
        s0, arr = old
        head = arr[:, k0 - s0 : k0 - s0 + m]
        if head.shape[1] == m:
            return head
        return np.concatenate([head, self._levels[:, node, : m - head.shape[1]]], axis=1)

    def _dropped(self, k: int, t: float | None = None, *, rates: bool = False) -> IndexError:
        at = f" (t={t!r})" if t is not None else ""
        what, base = ("rates", self._rbase) if rates else ("paths", self._base)
        return IndexError(
            f"contention {what}: step {k}{at} was dropped (kept from step {base}); "
            "a reader that needs older steps must hold them (Cluster.hold)"
        )

    def _trim(self, drop: int, rdrop: int = 0) -> None:
        """Drop the first ``drop`` kept steps of the levels and ``rdrop`` of the rates and
        running sums (one copy of each path, one at a time)."""
        if drop <= 0 and rdrop <= 0:
            return
        self._ensure_rates(max(self._base + drop, self._rbase + rdrop) - 1)
        rdrop = max(rdrop, self._base + drop - self._rbase)  # rates stay within the levels
        if rdrop > 0:
            self._drop_rates(rdrop)
        if drop > 0:
            self._keep_aside(self._base + drop)
            self._slide(drop, self._levels.shape[2] - drop)
            self._base += drop
            if self._synth is not None:
                self._synth.set_levels(self._levels, self._base)
            if self._trates is not None:
                self._trates.set_levels(self._levels, self._base)

    def _drop_rates(self, rdrop: int) -> None:
        """Drop the first ``rdrop`` kept steps of every profile's rates and running sums
        (rated already: the running sum at the first step kept stays)."""
        for pid in range(len(self._rate)):
            self._rate[pid] = self._rate[pid][:, rdrop:].copy()
            self._cum[pid] = self._cum[pid][:, rdrop:].copy()
        self._rbase += rdrop

    def _new_block(self, out: np.ndarray | None = None) -> np.ndarray:
        """The next part's levels (:attr:`extend_steps` steps), written into ``out`` when
        given (see :meth:`_extend`)."""
        if self._persist is not None:  # drawn in place
            b, lo = divmod(self._drawn, _BLOCK)
            return self._persist.block_part(b, _BLOCK, lo, self.extend_steps, out=out)
        block = self._draw_block()
        if out is None:
            return block
        out[...] = block
        return out

    def _draw_block(self) -> np.ndarray:
        n, m = self.n_nodes, self.extend_steps
        b, lo = divmod(self._drawn, _BLOCK)
        if self.ideal:
            return np.zeros((4, n, m))
        if self._replay is not None:
            idx = self.offset[:, None] + b * _BLOCK + lo + np.arange(m)[None, :]
            idx %= self._replay.shape[2]
            return self._replay[:, self.machine[:, None], idx]
        rng = np.random.default_rng([self.seed, 202, b + 1])  # no trailing zero word
        p_switch = 1.0 / self.mean_hold
        switch = rng.random((_BLOCK, 4, n)) < p_switch
        draw = (rng.random((_BLOCK, 4, n))[..., None] > self._pi_cum[None]).sum(-1)
        jitter = rng.normal(0.0, 0.03, (_BLOCK, 4, n))
        out = np.empty((4, n, _BLOCK))
        state = self._state
        for k in range(_BLOCK):
            state = np.where(switch[k], draw[k], state)
            out[:, :, k] = _STATE_LEVELS[state]
        self._state = state
        return np.clip(out + jitter.transpose(1, 2, 0), 0.0, 1.0)

    def _next_levels(self, out: np.ndarray | None = None) -> np.ndarray:
        """The next part of levels (:attr:`extend_steps` steps; blocks are drawn in order,
        each from its own seed and the state the previous one ended in); ``out``: written
        there, degraded in place."""
        block = self._new_block(out)
        b, lo = divmod(self._drawn, _BLOCK)
        m = block.shape[2]
        if self.bad.share > 0:  # the block's degraded rows, drawn at its first part
            if lo == 0:  # each part drawn from its marks when degraded, then let go
                self._cap_rows = self.bad.capacity_marks(b, _BLOCK, self.dt, _BLOCK // m)
            assert self._cap_rows is not None
            capacity = self._cap_rows.part(lo // m)
            assert capacity.shape[1] == m
            block = degrade_levels(
                block, self.bad, capacity, inplace=out is not None, bad_rows=True
            )
            self._cap_rows.release(lo // m)
            if lo + m == _BLOCK:
                self._cap_rows = None  # the block's last part
        self._drawn += m
        return block

    def _extend(self) -> None:
        if self.ideal:
            return
        drop = self._release_to() - self._base  # released steps go in the same copy
        lazy = self._lazy()
        if not lazy and self._rhorizon < self._horizon:  # the window was given up
            self._ensure_rates(self._horizon - 1)
        if lazy:
            rdrop = self._release_rates_to() - self._rbase  # at or past the levels' release
            if rdrop > 0:
                self._ensure_rates(self._rbase + rdrop - 1)
                self._drop_rates(rdrop)
        # the kept steps, then the new block drawn in place after them, in the window's own
        # buffer (the larger of the old and the new window at the peak, not both, nor the
        # block and its degraded copy)
        keep = self._levels.shape[2] - drop
        if drop > 0:
            self._keep_aside(self._base + drop)
        self._slide(drop, keep + self.extend_steps)
        self._base += drop
        self._horizon = self._base + self._levels.shape[2]
        if self._synth is not None:  # they let go of the old levels (read after the draw)
            self._synth.set_levels(self._levels, self._base)
        if self._trates is not None:
            self._trates.set_levels(self._levels, self._base)
        k0 = self._horizon - self.extend_steps  # the part's first step
        block = self._next_levels(out=self._levels[:, :, keep:])
        if not lazy:
            self._append_rates(block, k0)  # nothing is released without a window
            self._rhorizon = self._horizon
        self.max_window_steps = max(self.max_window_steps, self._levels.shape[2])

    def _slide(self, drop: int, steps: int) -> None:
        """The window without its first ``drop`` steps, as the first of ``steps`` (the rest
        for the caller to write), in its own buffer (:func:`slide_window`); the compiled
        readers are given it by the caller before they read again."""
        f, n, s = self._levels.shape
        self._lvbuf, self._levels = slide_window(self._lvbuf, f, n, s, drop, steps)

    def _lazy(self) -> bool:
        """Rates of the steps read ahead are computed per node (a window is kept)."""
        return bool(self._holds) and not self.keep_paths

    def _ensure_rates(self, k: int) -> None:
        """``_rate``/``_cum`` of every node up to step ``k`` (levels extended as needed)."""
        while k >= self._rhorizon:
            if self._rhorizon >= self._horizon:
                self._extend()  # not lazy: the rates come with it
                continue
            j = self._rhorizon - self._base
            block = self._levels[:, :, j : j + self.rate_steps]
            self._append_rates(block, self._rhorizon)
            self._rhorizon += block.shape[2]

    def _append_rates(self, block: np.ndarray, k0: int) -> None:
        """Append every profile's rates and running sum over the levels ``block`` (steps
        ``k0`` on, within one block) to ``_rate``/``_cum``.

        The block is computed in chunks of nodes (a few MiB of responses each), written into
        the new arrays: its extra memory is one chunk's, not the block's responses, loads,
        rates and sums at once (with the old and new arrays, about six times the block's
        levels on a big cluster). Every value is the whole block's, bit for bit: the response
        is element by element, a node's load is its own row of the ``einsum`` (as
        :meth:`_node_ahead` reads one node), and the running sums go along each row. A
        profile registered with these steps (``k0`` before its ``_seq_to``) adds them one at
        a time onto its running sum; the others add to the sum at their block's start the
        block's own running sum (:meth:`_sum_part`: a block rated in parts gets the same
        sums as at once).
        """
        n, m = self.n_nodes, block.shape[2]
        carries = []
        seq = [k0 < to for to in self._seq_to]
        for pid in range(len(self._profiles)):
            rate, cum = self._rate[pid], self._cum[pid]
            carries.append(cum[:, -1:].copy())
            if k0 % _BLOCK == 0:  # a new block: its sums start from the running sum
                self._block_start[pid] = carries[pid][:, 0].copy()
                self._block_sum[pid] = np.zeros(n)
            kr, kc = rate.shape[1], cum.shape[1]
            new = np.empty((n, kr + m))
            new[:, :kr] = rate
            self._rate[pid] = new
            del rate, new  # the old rates go before the running sums are copied
            new = np.empty((n, kc + m))
            new[:, :kc] = cum
            self._cum[pid] = new
            del cum, new
        if not self._profiles or not m:
            return
        for nodes, phi in self._chunk_responses(block):  # phi shared by the profiles
            for pid, prof in enumerate(self._profiles):
                rate = self._block_rate(prof, phi=phi, nodes=nodes)
                self._rate[pid][nodes, -m:] = rate
                if seq[pid]:
                    x = np.concatenate([carries[pid][nodes], rate * self.dt], axis=1)
                    self._cum[pid][nodes, -m:] = np.cumsum(x, axis=1)[:, 1:]
                else:
                    self._cum[pid][nodes, -m:] = self._sum_part(
                        self._block_start[pid][nodes], self._block_sum[pid], nodes, rate
                    )

    def _sum_part(
        self, start: np.ndarray, block_sum: np.ndarray, nodes: slice, rate: np.ndarray
    ) -> np.ndarray:
        """The running sums ``start + s`` of a part's ``rate`` rows, ``s`` the block's own
        running sum going on from ``block_sum[nodes]`` (updated to the part's end): the
        values of ``start + cumsum(block's rate * dt)``, bit for bit (``0 + x`` is ``x``,
        and a cumulative sum adds one step at a time)."""
        x = np.concatenate([np.reshape(block_sum[nodes], (-1, 1)), rate * self.dt], axis=1)
        add = np.cumsum(x, axis=1)[:, 1:]
        block_sum[nodes] = add[:, -1]
        return np.reshape(start, (-1, 1)) + add

    def _chunk_responses(self, levels: np.ndarray):
        """``(nodes, response)`` over the levels ``(4, n_nodes, steps)`` in chunks of nodes
        (``_RATE_CHUNK_BYTES`` of responses each): :meth:`_response` is element by element,
        so the chunks hold the whole array's values."""
        step = max(1, _RATE_CHUNK_BYTES // (8 * 4 * max(levels.shape[2], 1)))
        for i in range(0, self.n_nodes, step):
            nodes = slice(i, min(i + step, self.n_nodes))
            yield nodes, self._response(np.ascontiguousarray(levels[:, nodes]))

    def _ahead_state(self, pid: int, node: int) -> tuple[float, float, float]:
        """Where :meth:`_node_ahead` starts for ``node``: ``(carry, block_start, block_sum)``
        at ``_rhorizon`` (the running sum there, at its block's start and the block's own)."""
        return (
            float(self._cum[pid][node, -1]),
            float(self._block_start[pid][node]),
            float(self._block_sum[pid][node]),
        )

    def _node_ahead(self, pid: int, node: int, r: int, state: tuple[float, float, float]):
        """Rates and running sum ``(rate, cum, state)`` of ``node`` from step ``r`` (not yet
        in ``_rate``) to the end of its part of the paths (:attr:`extend_steps`, within one
        block; ``r + len(rate)`` is the next part's first step), from ``state`` at ``r``
        (:meth:`_ahead_state`, or the previous part's): the values the whole block's
        computation gives this node, bit for bit, and the state at the part's end."""
        carry, start, block_sum = state
        if r % _BLOCK == 0:
            start, block_sum = carry, 0.0
        j = r - self._base
        end = (r // self.extend_steps + 1) * self.extend_steps  # never past the block
        lv = self._levels[:, node : node + 1, j : j + end - r]
        load = np.einsum(
            "r,nr,rnk->nk",
            self._profiles[pid],
            self.sens[node : node + 1],
            contention_response(lv, self.response_eps),
        )
        rate = 1.0 / (self.speed[node : node + 1, None] * (1.0 + self.kappa * load))
        if r < self._seq_to[pid]:
            c = np.array([[carry]])
            cum = np.cumsum(np.concatenate([c, rate * self.dt], axis=1), axis=1)[:, 1:]
        else:
            box = np.array([block_sum])
            cum = self._sum_part(np.array([start]), box, slice(0, 1), rate)
            block_sum = float(box[0])
        return rate[0], cum[0], (float(cum[0, -1]), start, block_sum)

    def cum_end(self, pid: int, node: int) -> float:
        """:meth:`cum_at` of ``node`` at the end of the paths (:attr:`horizon_steps`).

        Examples
        --------
        >>> c, w = Cluster(3, 1, seed=2), Cluster(3, 1, seed=2, keep_paths=False)
        >>> pid = c.profile_id((1, 0, 0, 0)) == w.profile_id((1, 0, 0, 0)) == 0
        >>> w.hold("me", 0.0)  # a window: rates ahead of every node's are computed per node
        >>> _ = [x.levels_at([0], [2000 * 60.0]) for x in (c, w)]  # the levels: two blocks
        >>> c.horizon_steps == w.horizon_steps == 2880, w._cum[0].shape[1] - 1
        (True, 1440)
        >>> c.cum_end(0, 1) == float(c._cum[0][1, -1]) == w.cum_end(0, 1)
        True
        """
        state = self._ahead_state(pid, node)
        cum = state[0]
        key = (pid, node, self._horizon)
        hit = self._ahead_cache.get(key)
        if hit is not None:
            return hit
        r = self._rhorizon
        while r < self._horizon:
            rate, _, state = self._node_ahead(pid, node, r, state)
            cum = state[0]
            r += len(rate)
        if self._rhorizon < self._horizon:
            if len(self._ahead_cache) > 65536:
                self._ahead_cache.clear()
            self._ahead_cache[key] = cum
        return cum

    def _response(self, block: np.ndarray) -> np.ndarray:
        """The convex response of every level of ``block`` (what every profile's rates of
        these steps are computed from): :func:`~sim_bridge.world.contention_response`, in one
        C pass when the extension is built (same values)."""
        if _compiled_response is not None:
            return _compiled_response(block, self.response_eps)
        return contention_response(block, self.response_eps)

    def _block_rate(
        self,
        prof: np.ndarray,
        block: np.ndarray | None = None,
        phi: np.ndarray | None = None,
        nodes: slice = slice(None),
    ) -> np.ndarray:
        """The rates ``(nodes, steps)`` of profile ``prof`` over the levels ``block`` of the
        nodes ``nodes`` (``phi``: their :meth:`_response`, when the caller has it)."""
        if phi is None:
            assert block is not None
            phi = self._response(block)
        load = np.einsum("r,nr,rnk->nk", prof, self.sens[nodes], phi)
        return 1.0 / (self.speed[nodes, None] * (1.0 + self.kappa * load))

    def _cum_before_window(self, prof: np.ndarray) -> np.ndarray:
        """The cumulative work ``(n_nodes,)`` of profile ``prof`` at the first kept step, as a
        profile registered before any step was dropped has it (the running sum from step 0,
        added step by step): the dropped blocks are drawn again, one at a time, by a fresh
        cluster of the same parameters (blocks are deterministic and drawn in order)."""
        fresh = Cluster(**self._init_args, keep_paths=True)
        carry = np.zeros(self.n_nodes)
        start, levels = 0, fresh._levels
        while start < self._rbase:
            m = min(levels.shape[2], self._rbase - start)
            x = self._block_rate(prof, levels[:, :, :m]) * self.dt
            carry = np.cumsum(np.concatenate([carry[:, None], x], axis=1), axis=1)[:, -1]
            start += m
            if start < self._rbase:
                levels = fresh._next_levels()
        return carry

    def profile_id(self, sensitivity) -> int:
        """Register a workload sensitivity profile (cpu, mem, disk, net) and return its id."""
        prof = np.asarray(sensitivity, dtype=float)
        if prof.shape != (4,) or not np.all(np.isfinite(prof)) or np.any(prof < 0):
            raise ValueError(f"a sensitivity profile is 4 finite values >= 0, got {sensitivity!r}")
        for pid, p in enumerate(self._profiles):
            if np.array_equal(p, prof):
                return pid
        self._profiles.append(prof)
        if self.ideal:
            return len(self._profiles) - 1
        if self._trates is not None:
            self._trates.set_profiles(np.array(self._profiles))
        # the steps to the end of the block drawn last are added one at a time (as when
        # blocks were drawn whole: the horizon was then the end of that block)
        self._seq_to.append(-(-self._horizon // _BLOCK) * _BLOCK)
        # the rates and running sums of the steps rated so far, in chunks of nodes (as
        # _append_rates: one chunk's responses at a time, not the window's, ~2x its levels
        # on a big cluster; the same values bit for bit)
        n, m = self.n_nodes, self._rhorizon - self._rbase
        rate = np.empty((n, m))
        # steps were dropped: the running sum goes on from theirs, step by step
        carry = None if self._rbase == 0 else self._cum_before_window(prof)
        cum = np.zeros((n, m + 1)) if carry is None else np.empty((n, m + 1))
        j = self._rbase - self._base
        for nodes, phi in self._chunk_responses(self._levels[:, :, j : j + m]):
            r = rate[nodes] = self._block_rate(prof, phi=phi, nodes=nodes)
            if carry is None:
                np.cumsum(r * self.dt, axis=1, out=cum[nodes, 1:])
            else:
                x = np.concatenate([carry[nodes, None], r * self.dt], axis=1)
                cum[nodes] = np.cumsum(x, axis=1)
        self._rate.append(rate)
        self._cum.append(cum)
        # set at the first block rated with the block's sum (seq_to is a block's start)
        self._block_start.append(np.zeros(n))
        self._block_sum.append(np.zeros(n))
        return len(self._profiles) - 1

    def _ensure_step(self, k: int) -> None:
        if self.ideal:
            return
        while k >= self._horizon:
            self._extend()

    # ----------------------------------------------------------------- durations / progress
    def cum_at(self, node: int, pid: int, t: float) -> float:
        """Nominal work a task of profile ``pid`` would do on ``node`` from time 0 to ``t``."""
        if self.ideal:
            return float(t)
        dt = self.dt
        k = int(t // dt)
        if k >= self._rhorizon:
            self._ensure_rates(k)
        j = k - self._rbase
        if j < 0:
            raise self._dropped(k, t, rates=True)
        return float(self._cum[pid][node, j] + (t - k * dt) * self._rate[pid][node, j])

    def cum_at_nodes(self, pid: int, t: float) -> np.ndarray:
        """:meth:`cum_at` for every node at once."""
        if self.ideal:
            return np.full(self.n_nodes, float(t))
        dt = self.dt
        k = int(t // dt)
        self._ensure_rates(k)
        j = k - self._rbase
        if j < 0:
            raise self._dropped(k, t, rates=True)
        return self._cum[pid][:, j] + (t - k * dt) * self._rate[pid][:, j]

    def pressure(self, node: int, pid: int, t: float) -> float:
        """Contention pressure in [0, 1) met by profile ``pid`` on ``node`` at ``t``:
        ``1 - 1 / (1 + kappa * load)``, 0 on an idle node."""
        if self.ideal:
            return 0.0
        k = int(t // self.dt)
        if k >= self._rhorizon:
            self._ensure_rates(k)
        if k < self._rbase:
            raise self._dropped(k, t, rates=True)
        return float(1.0 - self._rate[pid][node, k - self._rbase] * self.speed[node])

    def step_rates(self, pid: int, k: int) -> np.ndarray:
        """The rates ``(n_nodes,)`` of profile ``pid`` on every node in step ``k``.

        Examples
        --------
        >>> c = Cluster(3, 1, seed=2)
        >>> pid = c.profile_id((1, 0, 0, 0))
        >>> bool(c.step_rates(pid, 4)[1] == c.launch_point(1, pid, 4 * 60.0)[1])
        True
        """
        if k >= self._rhorizon:
            self._ensure_rates(k)
        if k < self._rbase:
            raise self._dropped(k, rates=True)
        return self._rate[pid][:, k - self._rbase]

    def work_between(self, node: int, pid: int, t0: float, t1: float) -> float:
        """Nominal work done on ``node`` between ``t0`` and ``t1``."""
        return self.cum_at(node, pid, t1) - self.cum_at(node, pid, t0)

    def end_time(self, node: int, pid: int, t0: float, work: float) -> float:
        """The time at which ``work`` nominal seconds started at ``t0`` on ``node`` are done."""
        if self.ideal:
            return float(t0 + work)
        k0, r0, c0 = self.launch_point(node, pid, t0)
        return self.end_from(node, pid, t0, k0, r0, c0, work)

    def launch_point(self, node: int, pid: int, t: float) -> tuple[int, float, float]:
        """``(k, rate, cum)`` at ``t`` on ``node`` for profile ``pid``: the step, the rate in
        it, and :meth:`cum_at` (not for an ideal cluster). :meth:`pressure` is
        ``1 - rate * speed[node]``; :meth:`end_from` solves an end time from them."""
        k = int(t // self.dt)
        if k >= self._rhorizon:
            self._ensure_rates(k)
        j = k - self._rbase
        if j < 0:
            raise self._dropped(k, t, rates=True)
        r = float(self._rate[pid][node, j])
        return k, r, float(self._cum[pid][node, j] + (t - k * self.dt) * r)

    @overload
    def end_from(
        self,
        node: int,
        pid: int,
        t0: float,
        k0: int,
        r0: float,
        c0: float,
        work: float,
        *,
        within: Literal[False] = False,
    ) -> float: ...
    @overload
    def end_from(
        self,
        node: int,
        pid: int,
        t0: float,
        k0: int,
        r0: float,
        c0: float,
        work: float,
        *,
        within: bool,
    ) -> float | PastPaths: ...
    def end_from(
        self,
        node: int,
        pid: int,
        t0: float,
        k0: int,
        r0: float,
        c0: float,
        work: float,
        *,
        within: bool = False,
    ) -> float | PastPaths:
        """:meth:`end_time` from a :meth:`launch_point` ``(k0, r0, c0)`` at ``t0``.

        ``within``: draw no block for it. When the work is not done by the end of the paths,
        a :class:`PastPaths` says so instead (go on with :meth:`end_resume` there).

        Examples
        --------
        >>> c = Cluster(3, 2, seed=1)
        >>> pid = c.profile_id((0.5, 0.2, 1.0, 0.3))
        >>> end = c.horizon_steps * c.dt
        >>> work = 5 * end  # not done by the end of the paths on any node
        >>> stop = c.end_from(0, pid, 10.0, *c.launch_point(0, pid, 10.0), work, within=True)
        >>> stop.at == end, c.horizon_steps * c.dt == end  # no block drawn for it
        (True, True)
        >>> ref = Cluster(3, 2, seed=1)
        >>> _ = ref.profile_id((0.5, 0.2, 1.0, 0.3))
        >>> stop = c.end_resume(0, pid, stop)  # a block more: still not done
        >>> while not isinstance(stop, float):
        ...     stop = c.end_resume(0, pid, stop)
        >>> stop == ref.end_time(0, pid, 10.0, work)
        True
        """
        dt = self.dt
        t_fast = t0 + work / r0
        if t_fast <= (k0 + 1) * dt:
            return t_fast
        target = c0 + work
        cum = self._cum[pid]
        if target >= cum[node, -1] and self._lazy():  # ahead: this node's rates only
            r, state = self._rhorizon, self._ahead_state(pid, node)
            while True:
                while r >= self._horizon:
                    if within:
                        return PastPaths(self._horizon * dt, (t0, k0, r0, c0, work))
                    self._extend()
                rate, row, after = self._node_ahead(pid, node, r, state)
                if target < row[-1]:
                    seg = np.concatenate([[state[0]], row])
                    j = int(seg.searchsorted(target, side="right")) - 1
                    return float((r + j) * dt + (target - seg[j]) / rate[j])
                r, state = r + len(rate), after
        while target >= cum[node, -1]:
            if within and self._rhorizon >= self._horizon:
                return PastPaths(self._horizon * dt, (t0, k0, r0, c0, work))
            self._ensure_rates(self._rhorizon)
            cum = self._cum[pid]
        row = cum[node]
        j = int(row.searchsorted(target, side="right")) - 1
        if j < 0:  # the end lies before the rates kept
            raise self._dropped(self._rbase - 1, rates=True)
        return float((j + self._rbase) * dt + (target - row[j]) / self._rate[pid][node, j])

    # ----------------------------------------------------------------- co-located tenants
    def rate_with(self, node: int, pid: int, k: int, demand) -> float:
        """The rate of profile ``pid`` on ``node`` in step ``k`` when co-located tasks add
        ``demand`` (cpu, mem, disk, net) to the node's levels (capped at 1).

        The same formula as the precomputed rates (``demand`` zero gives them exactly, up to
        rounding), evaluated for one step.

        Examples
        --------
        >>> c = Cluster(3, 2, seed=1)
        >>> pid = c.profile_id((0.5, 0.2, 1.0, 0.3))
        >>> abs(c.rate_with(1, pid, 4, (0, 0, 0, 0)) - float(c._rate[pid][1, 4])) < 1e-12
        True
        >>> c.rate_with(1, pid, 4, (0, 0, 0.4, 0)) < c.rate_with(1, pid, 4, (0, 0, 0.1, 0))
        True
        """
        if self.ideal:
            return 1.0
        trates = self._trates
        if trates is not None:
            rate = trates.rate(node, pid, k, demand)
            if rate is not None:
                return rate
        return self._rate_with_py(node, pid, k, demand)

    def _rate_with_py(self, node: int, pid: int, k: int, demand) -> float:
        """:meth:`rate_with` in Python, the reference of the compiled
        ``sim_bridge._tenants_core.TenantRates`` (and what reads the last step of the paths,
        extending them, or a dropped step, raising)."""
        if k >= self._horizon - 1:  # the last step: the next block too (see the module doc)
            self._ensure_step(k + 1)
        if k < self._base:  # a pinned node's step kept aside, or dropped (raises)
            lv = self._node_levels(node, k, 1)[:, 0].tolist()
        else:
            lv = self._levels[:, node, k - self._base].tolist()
        lists = self._lists
        if lists is None or len(lists[0]) != len(self._profiles):
            lists = self._lists = (
                [p.tolist() for p in self._profiles],
                self.sens.tolist(),
                self.speed.tolist(),
            )
        prof = lists[0][pid]
        sens = lists[1][node]
        eps = self.response_eps
        load = 0.0
        for r in range(4):
            x = lv[r] + demand[r]
            if x > 1.0:
                x = 1.0
            elif x < 0.0:
                x = 0.0
            load += prof[r] * sens[r] * (x / (1.0 - x + eps))
        return 1.0 / (lists[2][node] * (1.0 + self.kappa * load))

    def rates_with(self, node: int, pid: int, k0: int, m: int, demand) -> np.ndarray:
        """:meth:`rate_with` for the ``m`` steps from ``k0`` at once (vectorised, through
        :func:`~sim_bridge.world.contention_response`), the same values bit for bit: the load
        is summed in resource order as :meth:`rate_with` sums it
        (:func:`~sim_bridge.world.contention_load`), not by a BLAS product whose
        rounding depends on the CPU."""
        if k0 + m > self._horizon:
            self._ensure_step(k0 + m - 1)
        trates = self._trates
        if trates is not None and CHUNKS_IN_C:  # in C, when the steps lie in the window
            rates = trates.rates(node, pid, k0, m, demand)
            if rates is not None:
                return rates
        return self._rates_with_py(node, pid, k0, m, demand)

    def _rates_with_py(self, node: int, pid: int, k0: int, m: int, demand) -> np.ndarray:
        """:meth:`rates_with` in NumPy (the paths already reach ``k0 + m``): the reference of
        ``TenantRates.rates``, and what reads steps kept aside before the window."""
        lv = self._node_levels(node, k0, m) + np.asarray(demand, dtype=float)[:, None]
        phi = contention_response(np.minimum(lv, 1.0), self.response_eps)
        load = contention_load(self._profiles[pid] * self.sens[node], phi)
        return 1.0 / (self.speed[node] * (1.0 + self.kappa * load))

    def work_with(
        self, node: int, pid: int, t0: float, t1: float, demand, memo: list | None = None
    ) -> float:
        """Nominal work done on ``node`` between ``t0`` and ``t1`` under a constant ``demand``
        of co-located tasks (:meth:`work_between` when there is none). A short read walks
        its steps in C when the extension ``sim_bridge._tenants_core`` is built (the same
        values: the Python walk is its reference).

        ``memo``, a caller's ``[step, demand, rate]`` list, keeps the rate of the last step a
        short read ended in: successive reads of one attempt (a speculation scan every few
        seconds, steps of a minute) mostly fall in the same step and skip its
        :meth:`rate_with`. The result is the same with or without it.

        ``t1``'s step is read (the paths are extended to it) even when ``t1`` is its start, as
        :meth:`work_between` reads it: an attempt re-solved at the end of the paths (the
        engine's checkpoint) finds them extended past it.

        Examples
        --------
        >>> c = Cluster(3, 2, seed=1)
        >>> pid = c.profile_id((0.5, 0.2, 1.0, 0.3))
        >>> end = c.horizon_steps * c.dt
        >>> c.work_with(0, pid, end - 90.0, end, (0.1, 0, 0.3, 0)) > 0, c.horizon_steps
        (True, 2880)
        """
        if self.ideal or not any(demand):
            return self.work_between(node, pid, t0, t1) if not self.ideal else t1 - t0
        dt = self.dt
        k0, k1 = int(t0 // dt), int(t1 // dt)
        if k1 >= self._horizon:
            self._ensure_step(k1)
        if k1 - k0 > _CHUNK_MIN:  # many whole steps: one vectorised sum
            rates = self.rates_with(node, pid, k0, k1 - k0 + 1, demand)
            total = rates[0] * ((k0 + 1) * dt - t0) + rates[-1] * (t1 - k1 * dt)
            return float(total + rates[1:-1].sum() * dt)
        total, t = 0.0, t0
        trates = self._trates
        while t < t1:
            if trates is not None:  # the compiled walk, up to a step it leaves to Python
                total, t = trates.work_steps(node, pid, t, t1, total, demand, memo)
                if not t < t1:
                    break
            k = int(t // dt)
            step_end = min((k + 1) * dt, t1)
            if memo is None:
                rate = self._rate_with_py(node, pid, k, demand)
            elif memo[0] == k and memo[1] is demand:
                rate = memo[2]
            else:
                rate = self._rate_with_py(node, pid, k, demand)
                memo[:] = (k, demand, rate)
            total += rate * (step_end - t)
            t = step_end
        return total

    @overload
    def end_with(
        self,
        node: int,
        pid: int,
        t0: float,
        work: float,
        demand,
        *,
        within: Literal[False] = False,
    ) -> float: ...
    @overload
    def end_with(
        self,
        node: int,
        pid: int,
        t0: float,
        work: float,
        demand,
        *,
        within: bool,
    ) -> float | PastPaths: ...
    def end_with(
        self,
        node: int,
        pid: int,
        t0: float,
        work: float,
        demand,
        *,
        within: bool = False,
    ) -> float | PastPaths:
        """The time at which ``work`` nominal seconds started at ``t0`` are done on ``node``
        under a constant ``demand`` of co-located tasks (:meth:`end_time` when there is none).
        The first steps are walked one at a time (in C with ``sim_bridge._tenants_core``, the
        same values as the Python walk), then whole chunks of steps at once.

        Examples
        --------
        >>> c = Cluster(3, 2, seed=1)
        >>> pid = c.profile_id((0.5, 0.2, 1.0, 0.3))
        >>> alone = c.end_with(0, pid, 10.0, 300.0, (0, 0, 0, 0))
        >>> shared = c.end_with(0, pid, 10.0, 300.0, (0.1, 0, 0.3, 0))
        >>> alone == c.end_time(0, pid, 10.0, 300.0) and shared > alone
        True
        >>> abs(c.work_with(0, pid, 10.0, shared, (0.1, 0, 0.3, 0)) - 300.0) < 1e-9
        True

        ``within``: draw no block for the work's end (a streaming run's paths follow its
        clock, not the farthest end it solved). When the work is not done by the end of the
        paths, a :class:`PastPaths` says where the walk stopped; :meth:`end_resume` goes on
        from there, once the clock gets there, to the same float. Only the first steps,
        walked one at a time, may read past the paths (and draw the next block): a solve
        from within a few steps of their end.

        >>> end = c.horizon_steps * c.dt
        >>> stop = c.end_with(2, pid, 10.0, 3 * end, (0.1, 0, 0.3, 0), within=True)
        >>> stop.at == end == c.horizon_steps * c.dt
        True
        >>> ref = Cluster(3, 2, seed=1)
        >>> _ = ref.profile_id((0.5, 0.2, 1.0, 0.3))
        >>> while not isinstance(stop, float):
        ...     stop = c.end_resume(2, pid, stop, (0.1, 0, 0.3, 0))
        >>> stop == ref.end_with(2, pid, 10.0, 3 * end, (0.1, 0, 0.3, 0))
        True
        """
        if self.ideal:
            return t0 + work
        if not any(demand):  # end_time, bounded as asked
            return self.end_from(
                node, pid, t0, *self.launch_point(node, pid, t0), work, within=within
            )
        dt = self.dt
        t, left = t0, work
        trates = self._trates
        steps = 0
        while steps < _CHUNK_MIN:  # step by step first: most attempts end within a few
            if trates is not None:  # the compiled walk, up to a step it leaves to Python
                end, t, left, n = trates.end_steps(node, pid, t, left, demand, _CHUNK_MIN - steps)
                if end == end:
                    return end
                steps += n
                if steps == _CHUNK_MIN:
                    break
            k = int(t // dt)
            rate = self._rate_with_py(node, pid, k, demand)
            step_end = (k + 1) * dt
            cap = rate * (step_end - t)
            if cap >= left:
                return t + left / rate
            left -= cap
            t = step_end
            steps += 1
        # t is on a step boundary now: whole steps, a chunk at a time
        return self._end_chunks(node, pid, int(t // dt), 64, left, demand, within)

    def end_resume(self, node: int, pid: int, stop: PastPaths, demand=None) -> float | PastPaths:
        """Go on with a solve that stopped at the end of the paths (``stop``, returned by
        :meth:`end_with` or :meth:`end_from` with ``within=True``; ``demand`` the same as
        then): the next block is drawn, and the end is the unbounded solve's, bit for bit,
        or a new :class:`PastPaths` at the end of that block."""
        if len(stop.state) == 5:  # end_from: solved again from its launch point
            self._ensure_step(int(stop.at // self.dt))
            return self.end_from(node, pid, *stop.state, within=True)
        k, m, left = stop.state
        # a part more (not the whole chunk: the chunk's steps within the paths give the
        # same values as all of them, and a new PastPaths says when they are not enough)
        self._ensure_step(int(stop.at // self.dt))
        return self._end_chunks(node, pid, k, m, left, demand, True)

    def _end_chunks(
        self,
        node: int,
        pid: int,
        k: int,
        m: int,
        left: float,
        demand,
        within: bool,
    ) -> float | PastPaths:
        """:meth:`end_with`'s walk a chunk of steps at a time, from step ``k`` with ``left``
        work to do and a first chunk of ``m`` steps (see :meth:`end_with`)."""
        dt = self.dt
        trates = self._trates if CHUNKS_IN_C else None
        while True:
            if trates is not None:  # the chunks within the window in C (the same floats)
                end, k, m, left = trates.end_chunks(node, pid, k, m, left, demand, _BLOCK)
                if end == end:
                    return end
            if within and k >= self._horizon:
                return PastPaths(self._horizon * dt, (k, m, left))
            # the chunk's steps within the paths first: the paths are extended only when the
            # work is not done by their end (a chunk reaching past them does not draw more)
            rates = self._rates_within(node, pid, k, m, demand)
            done = np.cumsum(rates) * dt
            if done[-1] < left and rates.size < m:  # the whole chunk
                if within:
                    return PastPaths(self._horizon * dt, (k, m, left))
                rates = self.rates_with(node, pid, k, m, demand)
                done = np.cumsum(rates) * dt
            if done[-1] >= left:
                j = int(np.searchsorted(done, left))
                before = float(done[j - 1]) if j else 0.0
                return (k + j) * dt + (left - before) / float(rates[j])
            left -= float(done[-1])
            k += m
            m = min(4 * m, _BLOCK)

    def _rates_within(self, node: int, pid: int, k0: int, m: int, demand) -> np.ndarray:
        """:meth:`rates_with` of the ``m`` steps from ``k0`` that lie within the paths (at
        least one: the paths are extended to ``k0``); each step's rate is its own, whatever
        the steps beside it (the load is summed per step, :meth:`rates_with`)."""
        if k0 >= self._horizon:
            self._ensure_step(k0)
        return self.rates_with(node, pid, k0, min(m, self._horizon - k0), demand)

    def levels_at(self, nodes: np.ndarray, times: np.ndarray) -> np.ndarray:
        """Background levels ``(4, len(nodes))`` at the given nodes and times."""
        if self.ideal:
            return np.zeros((4, np.size(nodes)))
        k = (np.asarray(times, dtype=float) // self.dt).astype(np.int64)
        if k.size:
            self._ensure_step(int(k.max()))
            if int(k.min()) < self._base:
                raise self._dropped(int(k.min()))
        return self._levels[:, np.asarray(nodes, dtype=np.int64), k - self._base]

    def levels_now(self, node: int, t: float) -> list[float]:
        """One node's background levels at ``t`` as four floats: ``levels_at([node], [t])``
        bit for bit, without the arrays (read at every launch of a streamed run).

        Examples
        --------
        >>> c = Cluster(3, 1, seed=2)
        >>> c.levels_now(1, 90.0) == c.levels_at([1], [90.0])[:, 0].tolist()
        True
        """
        if self.ideal:
            return [0.0, 0.0, 0.0, 0.0]
        k = int(t // self.dt)
        self._ensure_step(k)
        if k < self._base:
            raise self._dropped(k, t)
        return self._levels[:, node, k - self._base].tolist()

    # ----------------------------------------------------------------- counters
    def counters_now(
        self,
        node: int,
        time: float,
        running: int,
        load1: float,
        load5: float,
        load15: float,
        demand: Sequence[float] | None = None,
    ) -> dict[str, float]:
        """One node's :meth:`counters` as floats (what a policy reads now).

        ``demand`` is the co-located tasks' (cpu, mem, disk, net) demand (None: none). Values
        equal ``counters([node], [time], [running], [load1], [load5], [load15])`` bit for bit:
        with the compiled extension (``sim_bridge._counters_core``) the row is computed
        directly, in about a microsecond, by the same code as :meth:`counters`; without it,
        by the NumPy reference :func:`_reference_counters` on one row.

        Examples
        --------
        >>> c = Cluster(3, 2, seed=4)
        >>> now = c.counters_now(1, 125.0, 1, 0.5, 0.4, 0.3)
        >>> now["running_tasks"], now["free_slots"], list(now) == list(COUNTER_NAMES)
        (1.0, 1.0, True)
        """
        values = self.counter_values_now(node, time, running, load1, load5, load15, demand)
        return dict(zip(COUNTER_NAMES, values, strict=True))

    def counter_values_now(
        self,
        node: int,
        time: float,
        running: int,
        load1: float,
        load5: float,
        load15: float,
        demand: Sequence[float] | None = None,
    ) -> list[float]:
        """:meth:`counters_now` as a list in :data:`COUNTER_NAMES` order (no mapping built).

        Examples
        --------
        >>> c = Cluster(3, 2, seed=4)
        >>> row = c.counter_values_now(1, 125.0, 1, 0.5, 0.4, 0.3)
        >>> row == [c.counters_now(1, 125.0, 1, 0.5, 0.4, 0.3)[k] for k in COUNTER_NAMES]
        True
        """
        synth = self._synth
        if synth is None:
            arrays = self.counters(
                np.array([node]), np.array([time]), np.array([running]),
                np.array([load1]), np.array([load5]), np.array([load15]),
                None if demand is None else np.asarray(demand, dtype=float)[:, None],
            )  # fmt: skip
            return [float(arrays[k][0]) for k in COUNTER_NAMES]
        k = int(time // self.dt)
        if k >= self._horizon:
            self._ensure_step(k)
        if demand is None:
            return synth.row(node, time, running, load1, load5, load15)
        return synth.row(node, time, running, load1, load5, load15, *demand)

    def counters(
        self,
        nodes: np.ndarray,
        times: np.ndarray,
        running: np.ndarray,
        load1: np.ndarray,
        load5: np.ndarray,
        load15: np.ndarray,
        demand: np.ndarray | None = None,
        levels: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        """Sysstat-like counters on ``nodes`` at ``times`` (vectorised).

        ``running`` is the number of attempts running on the node at that instant and
        ``load*`` the exponentially averaged running counts (1, 5, 15 min); ``demand``
        ``(4, len(nodes))`` is what the co-located tasks add to the node's (cpu, mem, disk,
        net) levels (:mod:`sim_bridge.world._interference`; None: nothing), so the counters
        show the tenants' load as the tasks' rates feel it. ``levels`` ``(4, len(nodes))``:
        the background levels each node had at its time (:meth:`levels_at`, read then), for
        readings whose steps the paths may no longer hold (a streamed run records them at
        each launch); None: read from the paths. Readings are noisy, partly
        redundant functions of the node's hidden state; the noise is a pure function of
        (seed, node, 10-second sample, counter), so the same instant reads the same values.
        The model is written once in Python, :func:`_reference_counters`; the compiled
        extension computes the same rows in C (``tests/test_counters_core.py`` compares them).

        Examples
        --------
        >>> c = Cluster(3, 2, seed=4)
        >>> out = c.counters(np.array([0, 2]), np.array([5.0, 7200.0]), np.array([0, 2]),
        ...                  np.zeros(2), np.zeros(2), np.zeros(2))
        >>> out["free_slots"].tolist(), bool(np.all(out["cpu_idle"] <= 100.0))
        ([2.0, 0.0], True)
        """
        nodes = np.asarray(nodes, dtype=np.int64)
        times = np.asarray(times, dtype=float)
        if times.size and levels is None:
            self._ensure_step(int((times // self.dt).max()))
        if self._synth is not None:  # the compiled rows (same model, see _counters_core)
            rows = self._synth.rows(
                nodes, times, running, load1, load5, load15, demand, levels=levels
            )
            return dict(zip(COUNTER_NAMES, rows, strict=True))
        if levels is None:
            levels = self.levels_at(nodes, times)
        else:
            levels = np.asarray(levels, dtype=float)
            if levels.shape != (4, nodes.size):
                raise ValueError(
                    f"parameter levels must have shape (4, {nodes.size}), got {levels.shape}"
                )
        if demand is not None:
            levels = levels + np.asarray(demand, dtype=float)
        noise = _CounterNoise(self.seed, nodes, (times // 10.0).astype(np.int64))
        return _reference_counters(
            levels, running, load1, load5, load15,
            self.cores[nodes], self.speed[nodes], self.slots, noise,
        )  # fmt: skip


class _CounterNoise:
    """The counters' standard normal noise of some readings: ``noise(i)`` is counter ``i``'s
    for every reading (:func:`_hash_normal`); a few readings are hashed once for all counters,
    many counter by counter (the values are the same either way)."""

    def __init__(self, seed: int, nodes: np.ndarray, samples: np.ndarray):
        self.seed, self.nodes, self.samples = seed, nodes, samples
        self._stacked: np.ndarray | None = None
        if nodes.size <= 256:
            counters = np.arange(len(COUNTER_NAMES))[:, None]
            self._stacked = _hash_normal(seed, nodes[None, :], samples[None, :], counters)

    def __call__(self, i: int) -> np.ndarray:
        if self._stacked is not None:
            return self._stacked[i]
        return _hash_normal(self.seed, self.nodes, self.samples, i)


def _reference_counters(
    levels: np.ndarray,
    running: ArrayLike,
    load1: ArrayLike,
    load5: ArrayLike,
    load15: ArrayLike,
    cores: np.ndarray,
    speed: np.ndarray,
    slots: int,
    eps: Callable[[int], np.ndarray],
) -> dict[str, np.ndarray]:
    """The counter model, written once: the sysstat-like readings of some nodes from their
    (cpu, mem, disk, net) ``levels`` ``(4, m)`` (background plus co-located demand; capped to
    [0, 1] here), the running count and load averages, the nodes' ``cores`` and ``speed``
    factors and the noise ``eps(i)`` (counter ``i``'s standard normal noise of every reading).

    The compiled ``sim_bridge._counters_core.CounterSynth`` computes the same rows in C, in
    the same operation order, to the same bits: both take log, cos, exp and pow from the C
    library (here through :mod:`sim_bridge._portable_math`, not NumPy's SIMD versions).

    Examples
    --------
    >>> quiet = _reference_counters(
    ...     np.array([[0.5], [0.2], [0.0], [0.1]]), [1.0], [0.0], [0.0], [0.0],
    ...     np.array([16.0]), np.array([1.0]), 2, lambda i: np.zeros(1))
    >>> float(quiet["cpu_user"][0]), float(quiet["run_queue"][0]), float(quiet["cpu_mhz"][0])
    (47.5, 6.4, 2600.0)
    """
    cpu, mem, disk, net = np.clip(np.asarray(levels, dtype=float), 0.0, 1.0)
    running = np.asarray(running, dtype=float)
    occ = running / slots
    c: dict[str, np.ndarray] = {}
    user = np.clip(100 * (0.7 * cpu + 0.25 * occ) + 3 * eps(0), 0, 100)
    sys_ = np.clip(100 * (0.06 * cpu + 0.04 * occ + 0.04 * net) + 1 * eps(1), 0, 100)
    iow = np.clip(100 * 0.35 * disk**2 + 2 * eps(2), 0, 100)
    c["cpu_user"], c["cpu_sys"], c["cpu_iowait"] = user, sys_, iow
    c["cpu_idle"] = np.clip(100 - user - sys_ - iow, 0, 100)
    # background processes occupy a share of the cores; a task runs ~4 busy threads
    bg_run = cores * cpu * 0.3
    thr = 4.0
    c["run_queue"] = np.clip(bg_run + thr * running + 1.5 * eps(4), 0, None)
    c["load1"] = np.clip(thr * np.asarray(load1) + bg_run + 0.8 * eps(5), 0, None)
    c["load5"] = np.clip(thr * np.asarray(load5) + bg_run + 0.4 * eps(6), 0, None)
    c["load15"] = np.clip(thr * np.asarray(load15) + bg_run + 0.2 * eps(7), 0, None)
    c["running_tasks"] = running.copy()
    c["free_slots"] = slots - running
    c["mem_used_pct"] = np.clip(100 * (0.25 + 0.65 * mem + 0.05 * occ) + 2 * eps(10), 0, 100)
    c["mem_cached_pct"] = np.clip(100 * 0.3 * (1 - mem) + 2 * eps(11), 0, 100)
    c["swap_used_pct"] = np.clip(150 * np.maximum(mem - 0.7, 0) + eps(12), 0, 100)
    c["page_faults"] = 800 * (1 + 3 * mem + occ) * portable_math.exp(0.2 * eps(13))
    c["major_faults"] = np.clip(40 * np.maximum(mem - 0.5, 0) + 2 * eps(14), 0, None)
    c["mem_bw"] = np.clip(0.05 + 0.8 * mem * cpu + 0.05 * eps(15), 0, None)
    c["cache_miss_pki"] = np.clip(1 + 4 * cpu * mem + 0.3 * eps(16), 0, None)
    c["disk_util_pct"] = np.clip(100 * disk + 5 * eps(17), 0, 100)
    c["disk_queue"] = np.clip(4 * disk**2 / (1.05 - disk) + 0.3 * eps(18), 0, None)
    c["disk_read_kbs"] = 40000 * (disk + 0.1 * occ) * portable_math.exp(0.25 * eps(19))
    c["disk_write_kbs"] = 25000 * (disk + 0.1 * occ) * portable_math.exp(0.25 * eps(20))
    c["disk_await_ms"] = np.clip(2 + 30 * disk**2 + 1.5 * eps(21), 0, None)
    c["net_rx_kbs"] = 60000 * (net + 0.05 * occ) * portable_math.exp(0.25 * eps(22))
    c["net_tx_kbs"] = 50000 * (net + 0.05 * occ) * portable_math.exp(0.25 * eps(23))
    c["net_retrans"] = np.clip(8 * portable_math.power(net, 3.0) + 0.3 * eps(24), 0, None)
    c["ctx_switches"] = 4000 * (1 + 2 * cpu + occ) * portable_math.exp(0.15 * eps(25))
    c["interrupts"] = 3000 * (1 + net + disk) * portable_math.exp(0.15 * eps(26))
    c["cpu_cores"] = np.asarray(cores, dtype=float).copy()
    c["cpu_mhz"] = 2600.0 / speed * portable_math.exp(0.01 * eps(28))
    return c
