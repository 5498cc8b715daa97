"""The bridge: any straggler predictor as a placement policy (Wrangler's scheduler, seed 004).

Before a waiting task goes to a free slot, :class:`PredictorPlacement` asks the predictor for
the probability that a task of that workload launched on that node *now* straggles, from the
node's counters (the readings a launch records in the trace's ``c_*`` columns, sampled once
per ``refresh`` seconds as a monitoring daemon would; ``refresh=0`` reads them at the very
instant). Above the threshold it does not launch there and tries the next free node; a task
refused on every free node waits, but at most ``max_wait`` seconds (a per-task deadline,
enforced with a :class:`~sim_bridge.policies.base.Wake`), after which it launches anyway on
the free node with the lowest probability. No task starves. Placement composes with any
speculation policy of the simulator (the paper measures the gain over speculation).

Two modes (``mode=``): ``"threshold"`` (the rule above, the default) takes the first free
node, in least-recently-freed order, at or below the threshold; ``"rank"`` scores every free
node and takes the one with the lowest probability, with the same bounded wait when even that
node is above the threshold. After a run, ``refusal_rate_`` is the share of the (task, free
node) pairs looked at that were refused: run the control
:class:`~sim_bridge.policies.RandomRefusalPlacement` (``"random-refusal"``) at that rate to
tell the value of the prediction from the value of merely spreading load.

The simulator never imports a model: a predictor is any object with the protocol of
DESIGN.md §6 (``mtl.Predictor`` has it)::

    threshold: float
    feature_names: Sequence[str]                       # optional (None: every counter)
    straggler_probability(node, workload, counters: Mapping[str, float]) -> float
    predict_proba(frame: pandas.DataFrame) -> ndarray  # optional, used for batches
    straggler_probability_values(node, workload, values) -> float  # optional, fast path:
        # the counter values in feature_names order (no mapping); mtl.Predictor has it

Node ids are passed as the trace names them (``n0000``, ``n0001``, ...; ``node_format``) and
counters under the trace's column names (``c_cpu_user``, ...; ``counter_prefix``), so a model
trained on a collected trace scores the same features at decision time.

Also here: :class:`ConstantPredictor` (the registry default and the "always a straggler"
extreme) and :class:`SlowdownOracle`, a predictor that knows the node model's true expected
slowdown (hardware speed, contention met by the workload's profile, slot interference and
the contention-dependent noise tail) -- the upper bound a learned predictor can approach.

Examples
--------
>>> import sim_bridge
>>> job = sim_bridge.JobSpec("j", 0.0, [20.0] * 4)
>>> r = sim_bridge.simulate([job], "none", PredictorPlacement(ConstantPredictor(1.0),
...                         max_wait=5.0), nodes=4, seed=1)
>>> r.tasks["launch_time"].tolist()  # "always a straggler": every task waits 5 s, then runs
[5.0, 5.0, 5.0, 5.0]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from sim_bridge.policies._placement import ORDERS, TaskQueue
from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import Launch, PlacementPolicy, Wake, check_positive
from sim_bridge.trace import COUNTER_PREFIX, DEFAULT_BETA, NODE_FORMAT, check_beta, node_name
from sim_bridge.trace import node_index as _node_index
from sim_bridge.world._interference import TENANT_LOAD, tenant_demand
from sim_bridge.world._noise import noise_sf, residual_noise

__all__ = [
    "MODES",
    "ConstantPredictor",
    "PredictorPlacement",
    "SlowdownOracle",
    "node_name",
]

#: The modes of :class:`PredictorPlacement`.
MODES = ("threshold", "rank")

_WAKE_TAG = "predictor-placement"


def _same(values):
    return values


def refusal_rate(stats: Mapping[str, int]) -> float:
    """Refused over looked-at (task, free node) pairs from a placement's ``stats_`` (NaN when
    no node was looked at).

    Examples
    --------
    >>> refusal_rate({"node_checks": 8, "node_refusals": 2})
    0.25
    >>> refusal_rate({"node_checks": 0, "node_refusals": 0})
    nan
    """
    checks = stats["node_checks"]
    return stats["node_refusals"] / checks if checks else math.nan


class ConstantPredictor:
    """A predictor that gives every (node, workload, counters) the same probability.

    ``ConstantPredictor(0.0)`` never refuses a node (placement then behaves as FIFO);
    ``ConstantPredictor(1.0)`` always says "straggler" (every launch waits ``max_wait``).

    Parameters
    ----------
    p : float in [0, 1]
    threshold : float in (0, 1)

    Examples
    --------
    >>> ConstantPredictor(1.0).straggler_probability("n0000", "SYN", {})
    1.0
    """

    def __init__(self, p: float = 0.0, threshold: float = 0.5):
        if not (isinstance(p, (int, float)) and 0.0 <= p <= 1.0):
            raise ValueError(f"parameter p must be in [0, 1], got {p!r}")
        if not (isinstance(threshold, (int, float)) and 0.0 < threshold < 1.0):
            raise ValueError(f"parameter threshold must be in (0, 1), got {threshold!r}")
        self.p = float(p)
        self.threshold = float(threshold)
        self.feature_names: list[str] = []

    def straggler_probability(self, node, workload, counters) -> float:
        return self.p

    def predict_proba(self, frame) -> np.ndarray:
        return np.full(len(frame), self.p)

    def __repr__(self) -> str:
        return f"ConstantPredictor(p={self.p}, threshold={self.threshold})"


class SlowdownOracle:
    """Straggler probability from the node model's true state (an oracle for tests/benches).

    It reads the *hidden* state a learned predictor only sees through noisy counters: for
    a task of workload ``w`` launched now on node ``n``, the deterministic slowdown is

        d_n = 1 / rate_n(w, t, D_n)

    the inverse of the node's rate for the workload's profile (hardware speed, background
    contention and degradation through the convex response), with ``D_n`` the demand of the
    tasks running on the node now (self-inflicted contention, ``interference``),

    and the duration multiplier is ``d_n * X`` with ``X`` the residual noise of
    :func:`sim_bridge.world.residual_noise` (tail exponent ``alpha_n = alpha_w * tail_n * (1 -
    tail_pressure * pressure_n)``, the engine's model). With the stage's median approximated
    by ``m = median_k(d_k) * median(X)`` (the cluster-wide median node, median noise), the
    probability of straggling is ``P(d_n X > beta m) = noise_sf(beta m / d_n)``, averaged over
    the workload's phase profiles. The contention is read at launch (it may change while the
    task runs) and the task's input skew is unknown to it, so even the oracle is not perfect.

    Parameters
    ----------
    cluster : sim_bridge.Cluster
        A twin of the simulated cluster: ``Cluster(nodes, slots, seed, ...)`` with the
        arguments :func:`sim_bridge.simulate` gets (its paths are a pure function of them).
    workloads : mapping or sequence
        Workload name -> :class:`~sim_bridge.Workload` (or a list of them): the phase
        profiles and the noise tail exponent of each.
    beta : float
        Straggler threshold factor (:data:`sim_bridge.trace.DEFAULT_BETA`, > 1).
    interference, tail_pressure : float
        The simulation's values (defaults of :func:`sim_bridge.simulate`); the co-located
        tasks are read from the running simulation's view.
    threshold : float in (0, 1)

    Examples
    --------
    >>> import sim_bridge
    >>> jobs = [sim_bridge.JobSpec(f"j{i}", 30.0 * i, [20.0] * 6) for i in range(4)]
    >>> w = sim_bridge.Workload("SYN", jobs)
    >>> oracle = SlowdownOracle.for_simulation([w], nodes=6, slots=2, seed=1, kappa=3.0)
    >>> r = sim_bridge.simulate(w, "late", PredictorPlacement(oracle), nodes=6, seed=1,
    ...                         kappa=3.0)
    >>> r.summary["placement"], len(r.jobs)
    ('predictor', 4)
    """

    feature_names: Sequence[str] = ("c_running_tasks",)

    def __init__(
        self,
        cluster,
        workloads,
        *,
        beta: float = DEFAULT_BETA,
        interference: float = TENANT_LOAD,
        tail_pressure: float = 0.0,
        threshold: float = 0.5,
    ):
        if not (isinstance(threshold, (int, float)) and 0.0 < threshold < 1.0):
            raise ValueError(f"parameter threshold must be in (0, 1), got {threshold!r}")
        check_beta(beta, for_training=True)
        self.cluster = cluster
        wl = workloads.values() if isinstance(workloads, Mapping) else workloads
        self._wl = {}
        for w in wl:
            phases = list(w.profiles) or ["map"]
            pids = [cluster.profile_id(w.profile(ph)) for ph in phases]
            self._wl[w.name] = (pids, float(w.tail_alpha))
        self._workloads = {w.name: w for w in wl}
        self._own: dict[tuple[str, str], tuple[float, ...]] = {}
        self.beta = float(beta)
        self.interference = float(interference)
        self.tail_pressure = float(tail_pressure)
        self.threshold = float(threshold)
        self._view = None
        self._ref: dict[tuple[int, int], float] = {}

    @classmethod
    def for_simulation(
        cls,
        workloads,
        *,
        nodes: int = 50,
        slots: int = 2,
        seed: int = 0,
        kappa: float = 1.0,
        counters: str = "synthetic",
        data_dir=None,
        hours: float | None = None,
        bad_node_share: float | None = None,
        **kw: Any,
    ) -> SlowdownOracle:
        """The oracle of the run ``simulate(workloads, nodes=, slots=, seed=, kappa=, ...)``.

        ``workloads`` are :class:`~sim_bridge.Workload` objects or names (loaded as
        :func:`sim_bridge.simulate` would, for their profiles). Give the run's
        ``bad_node_share`` (None: the default) so the twin cluster is the run's, and its
        ``interference`` (passed on to the oracle) so it reads the co-tenants as the run does.
        """
        from sim_bridge._cluster import Cluster
        from sim_bridge._workloads import Workload, load_workload

        items = workloads if isinstance(workloads, (list, tuple)) else [workloads]
        wls = [
            w if isinstance(w, Workload) else load_workload(w, data_dir, hours=hours, seed=seed)
            for w in items
        ]
        world = {} if bad_node_share is None else {"bad_node_share": bad_node_share}
        cluster = Cluster(
            nodes, slots, seed, source=counters, data_dir=data_dir, kappa=kappa, **world
        )
        return cls(cluster, wls, **kw)

    def bind_view(self, view) -> None:
        """Called by :class:`PredictorPlacement` once per run: the oracle reads the clock."""
        self._view = view
        self._ref = {}

    def _node_demand(self, node: int):
        """The demand of the attempts running on ``node`` now (None: none)."""
        view = self._view
        if view is None or not self.interference:
            return None
        total = None
        for a in view.node_attempts(node):
            key = (a.task.job.workload, a.task.phase)
            own = self._own.get(key)
            if own is None:
                w = self._workloads.get(key[0])
                own = self._own[key] = (
                    (0.0,) * 4
                    if w is None
                    else tenant_demand(w.profile(key[1]), self.cluster.slots, self.interference)
                )
            total = own if total is None else tuple(x + y for x, y in zip(total, own, strict=True))
        return total if total is not None and any(total) else None

    def _slowdowns(self, pid: int, t: float, nodes: np.ndarray, running: np.ndarray):
        cl = self.cluster
        press = np.array([cl.pressure(int(n), pid, t) for n in nodes])
        d = cl.speed[nodes] / (1.0 - press)
        if running.any():
            k = int(t // cl.dt)
            for i, n in enumerate(nodes):
                dem = self._node_demand(int(n)) if running[i] else None
                if dem is not None:
                    d[i] = 1.0 / cl.rate_with(int(n), pid, k, dem)
        return d, press

    def _reference(self, pid: int, t: float) -> float:
        key = (pid, int(t // self.cluster.dt))
        ref = self._ref.get(key)
        if ref is None:
            if len(self._ref) > 4096:
                self._ref.clear()
            n = self.cluster.n_nodes
            d, _ = self._slowdowns(pid, t, np.arange(n), np.zeros(n))
            ref = self._ref[key] = float(np.median(d))
        return ref

    def probabilities(self, nodes, workload: Hashable, running) -> np.ndarray:
        """Straggler probability of ``workload`` on each of ``nodes`` (ids or indices) now."""
        if self._view is None:
            raise RuntimeError("SlowdownOracle needs the simulation clock: use it in a run")
        t = self._view.now
        idx = np.array([_node_index(n) for n in nodes], dtype=np.int64)
        running = np.asarray(running, dtype=float)
        pids, alpha_w = self._wl.get(workload, (None, None))
        if pids is None:
            raise ValueError(f"SlowdownOracle knows no workload {workload!r}")
        out = np.zeros(len(idx))
        for pid in pids:
            d, press = self._slowdowns(pid, t, idx, running)
            alpha = alpha_w * self.cluster.tail[idx] * (1.0 - self.tail_pressure * press)
            m = self._reference(pid, t) * float(residual_noise(0.5, alpha_w))
            out += noise_sf(self.beta * m / d, alpha)
        return out / len(pids)

    def straggler_probability(self, node, workload, counters) -> float:
        run = float(counters.get("c_running_tasks", counters.get("running_tasks", 0.0)))
        return float(self.probabilities([node], workload, [run])[0])

    def predict_proba(self, frame) -> np.ndarray:
        out = np.empty(len(frame))
        wl = frame["workload"].to_numpy(dtype=object)
        for w in dict.fromkeys(wl):
            rows = np.flatnonzero(wl == w)
            sub = frame.iloc[rows]
            out[rows] = self.probabilities(sub["node"].tolist(), w, sub["c_running_tasks"])
        return out

    def __repr__(self) -> str:
        return f"SlowdownOracle(nodes={self.cluster.n_nodes}, workloads={sorted(self._wl)})"


@register_policy
class PredictorPlacement(PlacementPolicy):
    """Predictor-informed (Wrangler): skip free nodes where a straggler is predicted; launch
    anyway after max_wait seconds.

    Parameters
    ----------
    predictor : object with ``straggler_probability`` (and optionally ``predict_proba``,
        ``feature_names``, ``threshold``, ``bind_view``), optional
        E.g. ``mtl.load_predictor(path_or_uri)``. Default: ``ConstantPredictor(0.0)``, which
        never refuses (the policy then equals FIFO).
    threshold : float in (0, 1), optional
        Refuse a node when the probability exceeds it (default: the predictor's).
    max_wait : float
        Seconds a task may be held back after its first refusal; then it launches on the
        free node with the lowest probability.
    refresh : float
        Counter sampling period (s): a node's counters are read at most once per period
        (``running_tasks`` and ``free_slots`` are always exact); 0 reads at every decision.
    node_format, counter_prefix : str
        How the trace names nodes (``n0000``) and counters (``c_<name>``).
    batch_min : int
        Score at least this many nodes in one ``predict_proba`` call (fewer: one
        ``straggler_probability`` call each, cheaper than building a frame).
    mode : {"threshold", "rank"}
        ``"threshold"`` (default, Wrangler's rule): the first free node, in
        least-recently-freed order, whose probability is at most the threshold. ``"rank"``:
        every free node is scored and the task goes to the one with the lowest probability
        (ties: the least recently freed); if even that one is above the threshold the task
        waits as in threshold mode, then takes it.

    Attributes
    ----------
    stats_ : dict of str to int
        Counts of the last run: ``launches``; ``refused`` (task-passes in which a task was
        held back: it found no acceptable free node); ``forced`` (launches at a deadline);
        ``node_checks`` and ``node_refusals`` (the (task, free node) pairs looked at, and
        those above the threshold); ``scored``, ``calls``, ``batches`` (predictor work) and
        ``reads`` (counter readings).
    refusal_rate_ : float
        ``node_refusals / node_checks`` of the last run (NaN if no node was looked at): the
        rate at which to run the control :class:`RandomRefusalPlacement` for a matched
        comparison.

    Notes
    -----
    Waiting tasks are taken in ``order``: ``"fair"`` (the default, as :class:`FairPlacement`
    and the Fair Scheduler of the replayed Facebook clusters: the job with the fewest running
    attempts first) or ``"fifo"`` (job arrival order), so that a comparison with the plain
    placement of the same order isolates what the predictor adds. In threshold mode, for each task
    free nodes are tried in least-recently-freed order and scored lazily: a node's counters
    are read only when a task would go there, and a node found full or refused is skipped for
    the rest of the pass for that workload. In rank mode a workload's free nodes are all
    scored (from the same per-sample cache) and sorted once per pass. Several slots of one
    node can be filled in one pass on the same reading (as a scheduler assigns several slots
    of one heartbeat). A predictor with a ``bind_view(view)`` method (the oracle) gets the
    simulator's read-only view once per run.

    What ``node_checks`` counts: in threshold mode, the free nodes a task looks at in
    least-recently-freed order up to the first acceptable one (nodes already refused for its
    workload in the same pass count again, as refused, for each later task); in rank mode,
    every node with a free slot, for every task decided or held. Either way a node is counted
    only while it has a free slot, which is what the random control draws on.
    """

    name = "predictor"

    def __init__(
        self,
        predictor: Any = None,
        threshold: float | None = None,
        max_wait: float = 20.0,
        refresh: float = 10.0,
        node_format: str = NODE_FORMAT,
        counter_prefix: str = COUNTER_PREFIX,
        batch_min: int = 8,
        mode: str = "threshold",
        order: str = "fair",
    ):
        self.predictor = predictor
        self.threshold = threshold
        self.max_wait = max_wait
        self.refresh = refresh
        self.node_format = node_format
        self.counter_prefix = counter_prefix
        self.batch_min = batch_min
        self.mode = mode
        self.order = order

    # ------------------------------------------------------------------ set-up
    def validate(self) -> None:
        pred = self.predictor
        if pred is not None and not callable(getattr(pred, "straggler_probability", None)):
            raise ValueError(
                f"{self.name}: parameter predictor needs a straggler_probability(node, "
                f"workload, counters) method, got {type(pred).__name__}"
            )
        thr = self._threshold()
        if not (isinstance(thr, (int, float)) and 0.0 < thr < 1.0):
            raise ValueError(f"{self.name}: parameter threshold must be in (0, 1), got {thr!r}")
        check_positive(self, "max_wait", self.max_wait, allow_zero=True)
        check_positive(self, "refresh", self.refresh, allow_zero=True)
        check_positive(self, "batch_min", self.batch_min)
        if not (isinstance(self.order, str) and self.order in ORDERS):
            raise ValueError(
                f"{self.name}: parameter order must be one of {list(ORDERS)}, got {self.order!r}"
            )
        if not (isinstance(self.mode, str) and self.mode in MODES):
            raise ValueError(
                f"{self.name}: parameter mode must be one of {list(MODES)}, got {self.mode!r}"
            )
        try:
            node_name(0, self.node_format)
        except (IndexError, KeyError, ValueError) as exc:
            raise ValueError(
                f"{self.name}: parameter node_format {self.node_format!r} cannot format a node "
                f"index ({exc})"
            ) from None

    def _threshold(self) -> float:
        if self.threshold is not None:
            return self.threshold
        return float(getattr(self._pred(), "threshold", 0.5))

    def _pred(self):
        return ConstantPredictor(0.0) if self.predictor is None else self.predictor

    def reset(self) -> None:
        self._view = None
        self._p = self._pred()
        self._thr = float(self._threshold())
        self._deadline: dict[int, tuple[Any, float]] = {}
        self._wake_at = math.inf
        self._snap: float | None = None
        self._rows: dict[Any, tuple] = {}  # node (or (node, running)) -> reading
        self._exact: list[tuple[str, str]] = []
        self._probs: dict[tuple[int, int, str], float] = {}
        self._names: list[tuple[str, str]] = []
        self._node_ids: list[str] = []
        self._batch = callable(getattr(self._p, "predict_proba", None))
        self._rank = self.mode == "rank"
        #: counts of the last run: decisions, refusals, forced launches, predictor calls
        self.stats_: dict[str, int] = dict.fromkeys(
            (
                "launches",
                "refused",
                "forced",
                "node_checks",
                "node_refusals",
                "scored",
                "calls",
                "batches",
                "reads",
            ),
            0,
        )

    @property
    def refusal_rate_(self) -> float:
        """Share of the (task, free node) pairs looked at in the last run that were refused
        (``stats_["node_refusals"] / stats_["node_checks"]``; NaN if none was looked at).

        Run :class:`RandomRefusalPlacement` with ``refusal_rate=`` this value for a control
        that refuses as often without knowing anything.
        """
        stats = getattr(self, "stats_", None)
        if stats is None:
            raise AttributeError(
                f"{type(self).__name__} has no refusal_rate_ before a run (simulate first)"
            )
        return refusal_rate(stats)

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("stats_", None)
        params["predictor"] = repr(self.predictor)  # summaries stay JSON-serialisable
        return params

    def _bind(self, view) -> None:
        self._view = view
        names = list(view.counter_names)
        have = set(names)
        pref = self.counter_prefix
        features = getattr(self._p, "feature_names", None)
        features = [pref + n for n in names] if features is None else list(features)
        pairs = []
        for f in features:
            if f in have:
                pairs.append((f, f))
            elif f.startswith(pref) and f[len(pref) :] in have:
                pairs.append((f, f[len(pref) :]))
            else:
                raise ValueError(
                    f"{self.name}: the predictor's feature {f!r} is not a node counter of the "
                    f"simulator (counters are {pref}<name> for <name> in {names[:6]}...)"
                )
        self._names = pairs
        self._exact = [(f, c) for f, c in pairs if c in ("running_tasks", "free_slots")]
        # a reading is kept as the features' values, picked from view.node_counter_values
        # (counter_names order) by a C-level itemgetter, or the list itself when they match
        self._feats = [f for f, _c in pairs]
        keys = [names.index(c) for _f, c in pairs]
        self._key0 = keys[0] if keys else None
        self._getter = operator.itemgetter(*keys) if len(keys) > 1 else None
        if keys == list(range(len(names))):
            self._getter = _same
        self._exact_run = [(f, c == "running_tasks") for f, c in self._exact]
        self._exact_pos = [
            (i, c == "running_tasks")
            for i, (_f, c) in enumerate(pairs)
            if c in ("running_tasks", "free_slots")
        ]
        # the optional fast path of the protocol: values in the predictor's feature order
        fast = getattr(self._p, "straggler_probability_values", None)
        declared = getattr(self._p, "feature_names", None)
        ok = callable(fast) and declared is not None and list(declared) == self._feats
        self._fast = fast if ok and self._feats else None
        self._slots = view.slots_per_node
        self._node_ids = [node_name(i, self.node_format) for i in range(view.n_nodes)]
        # one node at a time, unless single nodes go to predict_proba (batch_min=1)
        self._one = self._score_one if not (self._batch and self.batch_min <= 1) else None
        bind = getattr(self._p, "bind_view", None)
        if callable(bind):
            bind(view)

    # ------------------------------------------------------------------ scoring
    def _counters(self, view, node: int, running: int) -> dict[str, float]:
        """The node's counters under the predictor's feature names: read once per node and
        ``refresh``-second sample (a monitoring daemon's reading), with the exactly known
        ``running_tasks`` / ``free_slots`` set to their values now."""
        values = self._reading(view, node, running)
        row = dict(zip(self._feats, values, strict=True)) if values else {}
        for f, is_running in self._exact_run:
            row[f] = float(running) if is_running else float(self._slots - running)
        return row

    def _reading(self, view, node: int, running: int) -> tuple:
        """The node's cached reading (feature order; exact counters not yet set)."""
        key = node if self.refresh > 0 else (node, running)  # refresh=0: exact readings
        values = self._rows.get(key)
        if values is None and len(self._exact) == len(self._names):  # nothing else to read
            values = self._rows[key] = ()
        elif values is None:
            raw = view.node_counter_values(node)
            values = (raw[self._key0],) if self._getter is None else self._getter(raw)
            self._rows[key] = values
            self.stats_["reads"] += 1
        return values

    def _roll(self, now: float) -> None:
        """Forget the readings and scores of an earlier ``refresh`` sample."""
        snap = math.floor(now / self.refresh) if self.refresh > 0 else now
        if snap != self._snap:
            self._snap = snap
            self._rows.clear()
            self._probs.clear()

    def _score_one(self, view, workload: str, node: int, running: int) -> float:
        """:meth:`_scores` of one uncached ``(node, running, workload)``, one predictor call."""
        st = self.stats_
        st["scored"] += 1
        st["calls"] += 1
        fast = self._fast
        if fast is not None:  # values in feature order: no mapping built
            values = self._reading(view, node, running)
            if self._exact_pos:
                values = list(values)
                for i, is_running in self._exact_pos:
                    values[i] = float(running) if is_running else float(self._slots - running)
            v = float(fast(self._node_ids[node], workload, values))
        else:
            row = self._counters(view, node, running)
            v = float(self._p.straggler_probability(self._node_ids[node], workload, row))
        if not (0.0 <= v <= 1.0):
            raise ValueError(
                f"{self.name}: predictor returned {v!r} (not a probability) for node "
                f"{self._node_ids[node]}, workload {workload!r}"
            )
        self._probs[(node, running, workload)] = v
        return v

    def _scores(self, view, workload: str, nodes: list[int]) -> list[float]:
        """Probabilities for ``workload`` on ``nodes``, cached per (node, sample, running).

        Uncached nodes are scored in one ``predict_proba`` batch when there are at least
        ``batch_min`` of them (and the predictor has the method), else one call each.
        """
        self._roll(view.now)
        probs = self._probs
        keys = [(n, view.node_running(n), workload) for n in nodes]
        todo = [k for k in keys if k not in probs]
        if todo:
            st = self.stats_
            st["scored"] += len(todo)
            rows = [self._counters(view, n, r) for n, r, _w in todo]
            ids = [self._node_ids[n] for n, _r, _w in todo]
            if self._batch and len(todo) >= self.batch_min:
                import pandas as pd

                frame = pd.DataFrame(rows)
                frame.insert(0, "workload", workload)
                frame.insert(0, "node", ids)
                values = np.asarray(self._p.predict_proba(frame), dtype=float).reshape(-1)
                st["calls"] += 1
                st["batches"] += 1
            else:
                f = self._p.straggler_probability
                values = [float(f(i, workload, row)) for i, row in zip(ids, rows, strict=True)]
                st["calls"] += len(todo)
            for k, v in zip(todo, values, strict=True):
                if not (0.0 <= v <= 1.0):
                    raise ValueError(
                        f"{self.name}: predictor returned {v!r} (not a probability) for node "
                        f"{self._node_ids[k[0]]}, workload {workload!r}"
                    )
                probs[k] = float(v)
        return [probs[k] for k in keys]

    # ------------------------------------------------------------------ decisions
    def assign(self, view, free):
        """Launch waiting tasks (job arrival order) on the first free node, in
        least-recently-freed order, whose probability is at most the threshold (rank mode:
        on the free node with the lowest probability, if it is at most the threshold); a task
        refused everywhere waits until its deadline, then takes the least risky free node.

        Nodes are scored lazily (a node is read only when a task would go there), and a
        workload's refused or full nodes are skipped for the rest of the pass.
        """
        if self._view is not view:
            self._bind(view)
        if self._rank:
            return self._assign_rank(view, free)
        now = view.now
        self._roll(now)
        probs = self._probs  # (node, running, workload) -> probability, this sample
        node_running = view.node_running
        thr, max_wait = self._thr, self.max_wait
        slots = dict(free)
        nodes = list(slots)
        n_nodes = len(nodes)
        n_free = sum(slots.values())
        one = self._one
        # per workload: index of the first node not yet known to be full or refused
        ptr: dict[str, int] = {}
        # per workload: nodes refused in this pass that still have a free slot; per node:
        # the workloads that refused it (to keep those counts when the node fills up)
        n_ref: dict[str, int] = {}
        ref_by: dict[Any, list[str]] = {}
        deadlines = self._deadline
        out: list = []
        earliest = math.inf
        st = self.stats_
        n_refused = n_checks = n_refusals = 0
        queue = TaskQueue(view, self.order)
        while n_free:
            item = queue.next_runnable(n_free)
            if item is None:
                break
            job, task = item
            w = job.workload
            node = None
            i = ptr.get(w, 0)
            k = n_ref.get(w, 0)
            while i < n_nodes:
                n = nodes[i]
                if slots[n]:
                    r = node_running(n)
                    p = probs.get((n, r, w))
                    if p is None:
                        p = one(view, w, n, r) if one else self._scores(view, w, [n])[0]
                    if p <= thr:
                        node = n
                        break
                    k += 1
                    by = ref_by.get(n)
                    if by is None:
                        ref_by[n] = [w]
                    else:
                        by.append(w)
                i += 1
            ptr[w] = i
            n_ref[w] = k
            n_refusals += k
            n_checks += k
            if node is None:
                hit = deadlines.get(task.uid)
                due = now + max_wait if hit is None else hit[1]
                if due > now:
                    if hit is None:
                        deadlines[task.uid] = (task, due)
                    if due < earliest:
                        earliest = due
                    queue.hold()
                    n_refused += 1
                    continue
                left = [n for n in nodes if slots[n]]
                node = left[int(np.argmin(self._scores(view, w, left)))]
                st["forced"] += 1
            else:
                n_checks += 1
            deadlines.pop(task.uid, None)
            out.append(Launch(task, node))
            queue.launched()
            st["launches"] += 1
            slots[node] -= 1
            n_free -= 1
            if not slots[node] and node in ref_by:
                for w2 in ref_by.pop(node):
                    n_ref[w2] -= 1
        st["refused"] += n_refused
        st["node_checks"] += n_checks
        st["node_refusals"] += n_refusals
        self._finish(view, now, earliest, n_free, out)
        return out

    def _assign_rank(self, view, free):
        """:meth:`assign` in rank mode: each task goes to the free node with the lowest
        probability (ties: least recently freed), or waits if even that one is above the
        threshold. A workload's free nodes are scored and sorted once per pass."""
        now = view.now
        self._roll(now)
        thr, max_wait = self._thr, self.max_wait
        slots = dict(free)
        nodes = [n for n in slots if slots[n]]
        n_alive = len(nodes)  # nodes with a free slot
        n_free = sum(slots.values())
        # per workload: its (probability, node) pairs sorted, index of the best with a slot
        ranked: dict[str, list[tuple[float, Any]]] = {}
        ptr: dict[str, int] = {}
        n_above: dict[str, int] = {}  # per workload: free nodes above the threshold
        above_for: dict[Any, list[str]] = {}
        deadlines = self._deadline
        out: list = []
        earliest = math.inf
        st = self.stats_
        n_refused = n_checks = n_refusals = 0
        queue = TaskQueue(view, self.order)
        while n_free:
            item = queue.next_runnable(n_free)
            if item is None:
                break
            job, task = item
            w = job.workload
            order = ranked.get(w)
            if order is None:
                alive = [n for n in nodes if slots[n]]
                ps = self._score_all(view, w, alive)
                pos = sorted(range(len(alive)), key=ps.__getitem__)  # stable: ties in LRF order
                order = ranked[w] = [(ps[j], alive[j]) for j in pos]
                ptr[w] = 0
                hi = 0
                for p, n in order:
                    if p > thr:
                        hi += 1
                        by = above_for.get(n)
                        if by is None:
                            above_for[n] = [w]
                        else:
                            by.append(w)
                n_above[w] = hi
            i = ptr[w]
            while not slots[order[i][1]]:  # a node with a free slot was free when ranked
                i += 1
            ptr[w] = i
            p, node = order[i]
            n_checks += n_alive
            n_refusals += n_above[w]
            if p > thr:
                hit = deadlines.get(task.uid)
                due = now + max_wait if hit is None else hit[1]
                if due > now:
                    if hit is None:
                        deadlines[task.uid] = (task, due)
                    if due < earliest:
                        earliest = due
                    queue.hold()
                    n_refused += 1
                    continue
                st["forced"] += 1
            deadlines.pop(task.uid, None)
            out.append(Launch(task, node))
            queue.launched()
            st["launches"] += 1
            slots[node] -= 1
            n_free -= 1
            if not slots[node]:
                n_alive -= 1
                for w2 in above_for.pop(node, ()):
                    n_above[w2] -= 1
        st["refused"] += n_refused
        st["node_checks"] += n_checks
        st["node_refusals"] += n_refusals
        self._finish(view, now, earliest, n_free, out)
        return out

    def _score_all(self, view, workload: str, nodes: list) -> list[float]:
        """Probabilities of ``workload`` on every one of ``nodes``: cached scores, then the
        rest in one ``predict_proba`` batch (at least ``batch_min`` of them) or one call
        each (the predictor's fast values path when it has one)."""
        probs = self._probs
        node_running = view.node_running
        keys = [(n, node_running(n), workload) for n in nodes]
        out = [probs.get(k) for k in keys]
        todo = [j for j, p in enumerate(out) if p is None]
        if todo:
            one = self._one
            if one is None or (self._batch and len(todo) >= self.batch_min):
                values = self._scores(view, workload, [nodes[j] for j in todo])
                for j, v in zip(todo, values, strict=True):
                    out[j] = v
            else:
                for j in todo:
                    n, r, _w = keys[j]
                    out[j] = one(view, workload, n, r)
        return out

    def _finish(self, view, now: float, earliest: float, n_free: int, out: list) -> None:
        """End of a pass: forget stale deadlines; ask to be woken at the earliest deadline
        (or the next counter sample, if sooner) while a task is held and slots are free."""
        deadlines = self._deadline
        if len(deadlines) > 64 and len(deadlines) > 4 * (view.waiting_count() + 16):
            self._prune()
        if earliest < math.inf and n_free:
            at = earliest
            if self.refresh > 0:  # the counters (and maybe the decision) change then
                at = min(at, (math.floor(now / self.refresh) + 1) * self.refresh)
            if not (now < self._wake_at <= at):
                self._wake_at = at
                out.append(Wake(at, _WAKE_TAG))

    def _prune(self) -> None:
        """Forget deadlines of tasks that are no longer waiting (launched by a speculator)."""
        self._deadline = {
            uid: (task, due)
            for uid, (task, due) in self._deadline.items()
            if not task.done and not task.live
        }

    def on_wake(self, view, tag):
        if tag == _WAKE_TAG and view.now >= self._wake_at:
            self._wake_at = math.inf
        return []
