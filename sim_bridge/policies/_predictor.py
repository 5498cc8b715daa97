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

The simulator never imports a model: a predictor is any object with
:class:`sim_bridge.trace.PredictorProtocol` (``mtl.Predictor`` has it), and
:func:`sim_bridge.trace.bind` turns it into the scorer the placement asks (node ids and counter
names as the trace writes them; readings and scores cached per counter sample).

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
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from sim_bridge.policies._placement import ORDERS, HeldDeadlines, TaskQueue
from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import Launch, PlacementPolicy, Wake, check_positive
from sim_bridge.trace import (
    COUNTER_PREFIX,
    DEFAULT_BETA,
    NODE_FORMAT,
    Scorer,
    bind,
    check_beta,
    node_name,
)
from sim_bridge.trace import node_index as _node_index
from sim_bridge.world._attempts import noise_alpha, sum_demand
from sim_bridge.world._interference import TENANT_LOAD, tenant_demand
from sim_bridge.world._noise import noise_sf, residual_noise_one

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
    tail_pressure * pressure_n)``, the engine's model:
    :func:`sim_bridge.world.noise_alpha`). With the stage's median approximated
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
        world: dict[str, Any] = {} if bad_node_share is None else {"bad_node_share": bad_node_share}
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
        owns = []
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
            owns.append(own)
        return sum_demand(owns)  # summed as the engine sums its co-tenants' demand

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
            alpha = noise_alpha(alpha_w, self.cluster.tail[idx], self.tail_pressure, press)
            m = self._reference(pid, t) * residual_noise_one(0.5, float(alpha_w))
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
    scored (from the same per-sample cache) and sorted once per pass. A task refused on every
    free node holds its job's next tasks with it in one step (the same nodes refuse them: no
    launch came in between), each until its own deadline. Several slots of one
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
        self._scorer: Scorer | None = None
        self._deadline = HeldDeadlines(self.max_wait)  # task uid -> (task, launch by)
        self._wake_at = math.inf
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
        """Once per run: tie the predictor to the simulator's counters (all scoring and its
        caches live in the :class:`~sim_bridge.trace.Scorer`)."""
        self._view = view
        try:
            scorer = bind(
                self._p,
                view.counter_names,
                prefix=self.counter_prefix,
                slots=view.slots_per_node,
                node_format=self.node_format,
                batch_min=self.batch_min,
            )
        except ValueError as exc:
            raise ValueError(f"{self.name}: {exc}") from None
        scorer.owner = self.name
        scorer.stats = self.stats_  # the scorer counts its work into stats_
        # refresh=0: a reading is taken at the very instant, so it depends on the running count
        scorer.attach(view.node_counter_values, by_running=self.refresh <= 0)
        self._scorer = scorer
        bind_view = getattr(self._p, "bind_view", None)
        if callable(bind_view):
            bind_view(view)

    def _free_nodes(self, view, free) -> _FreeNodes:
        """This pass's free nodes, scored through the run's :class:`~sim_bridge.trace.Scorer`
        (bound on the first pass) at the counter sample in force now."""
        if self._view is not view:
            self._bind(view)
        scorer = self._scorer
        assert scorer is not None  # bound above
        now = view.now
        scorer.roll(math.floor(now / self.refresh) if self.refresh > 0 else now)
        return (_Ranked if self._rank else _FirstFit)(scorer, view, free, self._thr)

    # ------------------------------------------------------------------ decisions
    def assign(self, view, free):
        """Wrangler's rule: each waiting task (in ``order``) goes to a free node whose
        straggler probability is at most the threshold -- the first in least-recently-freed
        order (threshold mode) or the lowest (rank mode). A task with no such node is held
        back, at most ``max_wait`` seconds after its first refusal; then it launches on the
        free node with the lowest probability."""
        nodes = self._free_nodes(view, free)
        queue = TaskQueue(view, self.order, nodes.n_free)
        deadlines = self._deadline
        deadlines.start(view.now)
        out: list = []
        held = forced = 0
        for job, task in queue:
            w = job.workload
            node = nodes.acceptable(w)
            if node is None:  # predicted to straggle on every free node
                # it waits, and so do its job's next tasks (the same nodes refuse them), each
                # until its deadline
                n = queue.hold_while(deadlines.may_wait)
                if n:
                    nodes.refuse_again(w, n - 1)
                    held += n
                    continue
                node = nodes.least_risky(w)  # its deadline has come: launch anyway
                forced += 1
            deadlines.pop(task.uid, None)
            out.append(Launch(task, node))
            queue.launched()
            nodes.take(node)
        self._count(len(out), held, forced, nodes)
        deadlines.prune(view.waiting_count)
        self._wake(view.now, deadlines.earliest, nodes.n_free, out)
        return out

    def _count(self, launches: int, held: int, forced: int, nodes: _FreeNodes) -> None:
        st = self.stats_
        st["launches"] += launches
        st["refused"] += held
        st["forced"] += forced
        st["node_checks"] += nodes.checks
        st["node_refusals"] += nodes.refusals

    def _wake(self, now: float, earliest: float, n_free: int, out: list) -> None:
        """Ask to be woken at the earliest deadline (or the next counter sample, if sooner)
        while a task is held and slots are free."""
        if earliest < math.inf and n_free:
            at = earliest
            if self.refresh > 0:  # the counters (and maybe the decision) change then
                at = min(at, (math.floor(now / self.refresh) + 1) * self.refresh)
            if not (now < self._wake_at <= at):
                self._wake_at = at
                out.append(Wake(at, _WAKE_TAG))

    def on_wake(self, view, tag):
        if tag == _WAKE_TAG and view.now >= self._wake_at:
            self._wake_at = math.inf
        return []


class _FreeNodes:
    """The free slots of one placement pass, least recently freed node first, and the
    (task, free node) pairs the pass looked at and refused.

    Within a pass a node's score is fixed (the counter sample and the running counts are), so
    a node a workload refused stays refused: it is not scored again, yet it counts again, as
    looked at and refused, for every later task of the workload while it has a free slot.
    Subclasses pick the node: :meth:`acceptable` (None: hold the task) and
    :meth:`least_risky` (the forced launch at a deadline); ``_memo`` is theirs (per workload).
    Most passes launch nothing: ``free`` (node -> free slots, each >= 1) is copied only at
    the first :meth:`take`.
    """

    __slots__ = (
        "score", "scores", "running", "threshold", "free", "slots", "nodes", "n_free", "n_alive",
        "checks", "refusals", "_refusing", "_n_refused", "_memo",
    )  # fmt: skip

    def __init__(self, scorer: Scorer, view, free, threshold: float):
        self.score = scorer.score
        self.scores = scorer.scores
        self.running = view.node_running
        self.threshold = threshold
        self.free = self.slots = free  # slots: a copy once a task takes one
        self.nodes = list(free)  # least recently freed first
        self.n_free = sum(free.values())
        self.n_alive = len(self.nodes)  # nodes with a free slot
        self.checks = self.refusals = 0
        self._refusing: dict[Any, list[str]] = {}  # node -> the workloads that refused it
        self._n_refused: dict[str, int] = {}  # workload -> its refused nodes with a free slot
        self._memo: dict[str, Any] = {}

    def _refuse(self, node, w: str) -> None:
        self._refusing.setdefault(node, []).append(w)

    def acceptable(self, w: str):  # pragma: no cover - each subclass has its own
        raise NotImplementedError

    def least_risky(self, w: str):  # pragma: no cover - each subclass has its own
        raise NotImplementedError

    def refuse_again(self, w: str, times: int) -> None:  # pragma: no cover - as above
        raise NotImplementedError

    def take(self, node) -> None:
        """A task launches on ``node``: one slot fewer there."""
        if self.slots is self.free:
            self.slots = dict(self.free)
        left = self.slots[node] - 1
        self.slots[node] = left
        self.n_free -= 1
        if not left:
            self.n_alive -= 1
            for w in self._refusing.pop(node, ()):
                self._n_refused[w] -= 1


class _FirstFit(_FreeNodes):
    """Threshold mode: the first acceptable free node in least-recently-freed order, scored
    lazily (a node is scored only when a task would go there); a workload's scan resumes
    where its last one stopped (``_memo[w]``: its first node not yet refused or full)."""

    __slots__ = ()

    def acceptable(self, w: str):
        """The first free node at or below the threshold for workload ``w`` (None: none)."""
        nodes, slots = self.nodes, self.slots
        i = self._memo.get(w, 0)
        if i == len(nodes):  # every free node already refused (or full) for w in this pass
            k = self._n_refused[w]
            self.refusals += k
            self.checks += k
            return None
        k = self._n_refused.get(w, 0)
        node = None
        while i < len(nodes):
            n = nodes[i]
            if slots[n]:
                if self.score(n, self.running(n), w) <= self.threshold:
                    node = n
                    break
                k += 1
                self._refuse(n, w)
            i += 1
        self._memo[w] = i
        self._n_refused[w] = k
        self.refusals += k
        self.checks += k + (node is not None)
        return node

    def refuse_again(self, w: str, times: int) -> None:
        """Count ``times`` more tasks of ``w`` refused on every free node, as
        :meth:`acceptable` would (no launch in between)."""
        k = self._n_refused[w] * times
        self.refusals += k
        self.checks += k

    def least_risky(self, w: str):
        """The free node with the lowest probability for ``w`` (ties: least recently freed)."""
        left = [n for n in self.nodes if self.slots[n]]
        return left[int(np.argmin(self.scores(left, list(map(self.running, left)), w)))]


class _Ranked(_FreeNodes):
    """Rank mode: a workload's free nodes are scored and sorted once per pass (ties: least
    recently freed); every node with a free slot counts as looked at, for every task.
    ``_memo[w]``: ``[ranked (p, node) pairs, index of the best one with a free slot]``."""

    __slots__ = ()

    def _ranked(self, w: str) -> list:
        memo = self._memo.get(w)
        if memo is None:
            alive = [n for n in self.nodes if self.slots[n]]
            ps = self.scores(alive, list(map(self.running, alive)), w)
            pos = sorted(range(len(alive)), key=ps.__getitem__)  # stable: LRF order on ties
            memo = self._memo[w] = [[(ps[j], alive[j]) for j in pos], 0]
            above = [n for p, n in memo[0] if p > self.threshold]
            for n in above:
                self._refuse(n, w)
            self._n_refused[w] = len(above)
        return memo

    def _best(self, w: str) -> tuple[float, Any]:
        """The lowest (probability, node) for ``w`` among the nodes with a free slot."""
        memo = self._ranked(w)
        order, i = memo
        while not self.slots[order[i][1]]:  # a node with a free slot was free when ranked
            i += 1
        memo[1] = i
        return order[i]

    def least_risky(self, w: str):
        """The free node with the lowest probability for ``w``."""
        return self._best(w)[1]

    def refuse_again(self, w: str, times: int) -> None:
        """Count ``times`` more tasks of ``w`` held, as :meth:`acceptable` would (no launch
        in between)."""
        self.checks += self.n_alive * times
        self.refusals += self._n_refused[w] * times

    def acceptable(self, w: str):
        """:meth:`least_risky` if it is at or below the threshold (else None)."""
        p, node = self._best(w)
        self.checks += self.n_alive
        self.refusals += self._n_refused[w]
        return node if p <= self.threshold else None
