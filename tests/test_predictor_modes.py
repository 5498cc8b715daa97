"""The predictor placement's modes, the random-refusal control and ``headroom_captured``.

Oracles: rank mode's launches equal a slow obvious greedy argmin, both on hand-built views
(hypothesis: random free maps, per-workload probability tables with ties, thresholds) and on
every placement pass of real simulations with a predictor whose probability is a known
function of the node id; threshold mode's decisions equal a run without ``mode``, and both
modes' refusal counts equal a from-scratch recount per task. The random control refuses at
its rate (a binomial interval), is FIFO at rate 0, and is deterministic under its seed. The
simulator's numbers are not pinned anywhere (the world model changes): only properties.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

import sim_bridge
from sim_bridge import ConstantPredictor, JobSpec, PredictorPlacement, Workload
from sim_bridge.policies import Launch, RandomRefusalPlacement, SlowdownOracle
from sim_bridge.policies._predictor import _node_index

SMALL = dict(nodes=10, slots=2, seed=4, progress=False)
NODES = SMALL["nodes"]


def _workload(seed: int = 4, n_jobs: int = 30, gap: float = 50.0, name: str = "SYN") -> Workload:
    """Map/reduce jobs of 4-15 maps arriving every ~``gap`` s (10 nodes x 2 slots: there are
    free nodes to choose from, and queues at bursts)."""
    rng = np.random.default_rng([seed, 99])
    jobs, t = [], 0.0
    for i in range(n_jobs):
        t += float(rng.exponential(gap))
        n_map, n_red = int(rng.integers(4, 16)), int(rng.integers(0, 3))
        jobs.append(
            JobSpec(f"{name}{i}", t, rng.uniform(10, 40, n_map), rng.uniform(5, 20, n_red), name)
        )
    return Workload(name, jobs)


def _two_workloads() -> list[Workload]:
    return [
        _workload(4, n_jobs=20, gap=70.0, name="A"),
        _workload(5, n_jobs=20, gap=70.0, name="B"),
    ]


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.tasks, b.tasks)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)


class NodeTable:
    """A predictor whose probability is a known function of (node id, workload): a fixed
    random table, with ties (values on a coarse grid). It can record each question it is
    asked, with the simulated time (through ``bind_view``) and the running count."""

    feature_names = ("c_running_tasks",)

    def __init__(self, n_nodes: int, workloads=("SYN",), seed: int = 0, threshold: float = 0.5):
        rng = np.random.default_rng(seed)
        self.table = {w: rng.integers(0, 8, n_nodes) / 8.0 for w in workloads}
        self.threshold = threshold
        self.asked: list[tuple] = []
        self._view = None

    def p(self, node, workload) -> float:
        return float(self.table[workload][_node_index(node)])

    def bind_view(self, view) -> None:
        self._view = view

    def straggler_probability(self, node, workload, counters) -> float:
        now = self._view.now if self._view is not None else None
        self.asked.append((now, node, workload, counters.get("c_running_tasks")))
        return self.p(node, workload)


# ----------------------------------------------------------------- slow obvious oracles
def _slow_pass(jobs, free: dict, p, thr: float, mode: str):
    """One placement pass recomputed from scratch for every task.

    ``jobs`` lists each waiting job as its waiting tasks' ``(workload, may_force)`` (may_force:
    a task refused everywhere launches anyway, its deadline being due). Returns the launched
    nodes in order, the held count and the (task, free node) pairs looked at / refused,
    counted as the docstring of PredictorPlacement says."""
    left = dict(free)
    order = list(free)
    launched, held, checks, refusals = [], 0, 0, 0
    for tasks in jobs:
        held_here = 0
        for w, may_force in tasks:
            n_free = sum(left.values())
            if not n_free or held_here >= n_free:
                break
            alive = [n for n in order if left[n] > 0]
            best = min(alive, key=lambda n: (p(n, w), order.index(n)))  # noqa: B023
            if mode == "rank":
                checks += len(alive)
                refusals += sum(p(n, w) > thr for n in alive)
                node = best if p(best, w) <= thr else None
            else:
                node = None
                for n in alive:
                    checks += 1
                    if p(n, w) <= thr:
                        node = n
                        break
                    refusals += 1
            if node is None and not may_force:
                held_here += 1
                held += 1
                continue
            node = best if node is None else node
            launched.append(node)
            left[node] -= 1
    return launched, held, checks, refusals


@dataclass
class _Task:
    uid: int
    done: bool = False
    live: tuple = ()


@dataclass
class _Job:
    workload: str
    pending: dict = field(default_factory=dict)


class _View:
    """The few members of ``SimView`` the predictor placement reads."""

    counter_names = ("running_tasks", "free_slots")

    def __init__(self, n_nodes: int, slots: int, running: dict, jobs: list[_Job]):
        self.now = 100.0
        self.n_nodes = n_nodes
        self.slots_per_node = slots
        self._running = running
        self._jobs = jobs

    def node_running(self, node: int) -> int:
        return self._running[node]

    def node_counter_values(self, node: int) -> list[float]:
        r = float(self._running[node])
        return [r, float(self.slots_per_node) - r]

    def waiting_jobs(self):
        return [j for j in self._jobs if j.pending]

    def waiting_count(self) -> int:
        return sum(len(j.pending) for j in self._jobs)


@st.composite
def _passes(draw):
    n_nodes = draw(st.integers(1, 12))
    slots = draw(st.integers(1, 3))
    free_nodes = draw(st.permutations(range(n_nodes)))
    free_nodes = free_nodes[: draw(st.integers(1, n_nodes))]
    free = {n: draw(st.integers(1, slots)) for n in free_nodes}
    running = {n: slots - free.get(n, 0) for n in range(n_nodes)}
    wls = ["A", "B", "C"][: draw(st.integers(1, 3))]
    grid = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])  # ties on purpose
    table = {w: draw(st.lists(grid, min_size=n_nodes, max_size=n_nodes)) for w in wls}
    runs = draw(st.lists(st.tuples(st.sampled_from(wls), st.integers(1, 6)), min_size=1))
    thr = draw(st.sampled_from([0.1, 0.3, 0.5, 0.6, 0.9]))
    max_wait = draw(st.sampled_from([0.0, 10.0]))
    mode = draw(st.sampled_from(["threshold", "rank"]))
    batch_min = draw(st.sampled_from([1, 3, 8]))
    return n_nodes, slots, free, running, table, runs, thr, max_wait, mode, batch_min


class _Table:
    feature_names = ("c_running_tasks",)
    threshold = 0.5

    def __init__(self, table):
        self.table = table

    def straggler_probability(self, node, workload, counters):
        return float(self.table[workload][_node_index(node)])

    def predict_proba(self, frame):
        return np.array(
            [
                self.table[w][_node_index(n)]
                for n, w in zip(frame["node"], frame["workload"], strict=True)
            ]
        )


@settings(max_examples=300, deadline=None)
@given(_passes())
def test_one_pass_equals_the_slow_oracle(case):
    """Both modes on one pass over a hand-built view: the launched nodes (in order), the held
    tasks and the node_checks / node_refusals counts equal a from-scratch recomputation."""
    n_nodes, slots, free, running, table, runs, thr, max_wait, mode, batch_min = case
    jobs, uid = [], 0
    for w, k in runs:
        job = _Job(w)
        for _ in range(k):
            job.pending[uid] = _Task(uid)
            uid += 1
        jobs.append(job)
    pol = PredictorPlacement(
        _Table(table),
        threshold=thr,
        max_wait=max_wait,
        mode=mode,
        batch_min=batch_min,
        order="fifo",
    )
    pol.validate()
    pol.reset()
    out = pol.assign(_View(n_nodes, slots, running, jobs), free)
    got = [a.node for a in out if isinstance(a, Launch)]
    slow_jobs = [[(w, max_wait == 0.0)] * k for w, k in runs]
    want, held, checks, refusals = _slow_pass(slow_jobs, free, lambda n, w: table[w][n], thr, mode)
    assert got == want
    assert pol.stats_["refused"] == held
    assert pol.stats_["node_checks"] == checks
    assert pol.stats_["node_refusals"] == refusals
    assert pol.stats_["launches"] == len(want)
    assert any(isinstance(a, sim_bridge.Wake) for a in out) == (
        held > 0 and len(want) < sum(free.values())
    )


# ----------------------------------------------------------------- rank mode, simulated
class _Spy(PredictorPlacement):
    """Records, for every placement pass, its free map, the waiting jobs as the oracle wants
    them (tasks as ``(workload, deadline due)``) and the nodes launched on."""

    def reset(self) -> None:
        super().reset()
        self.passes: list[tuple] = []

    def assign(self, view, free):
        before = dict(free)
        now, wait = view.now, self.max_wait
        deadlines = getattr(self, "_deadline", {})
        jobs = [
            [
                (job.workload, wait == 0.0 or (t.uid in deadlines and deadlines[t.uid][1] <= now))
                for t in job.pending.values()
            ]
            for job in view.waiting_jobs()
        ]
        out = super().assign(view, free)
        self.passes.append((before, jobs, [a.node for a in out if isinstance(a, Launch)]))
        return out


def _replay(pol: _Spy, p, thr: float, mode: str) -> None:
    """Every recorded pass launched what the slow oracle computes; the counts add up."""
    checks = refusals = held = 0
    for free, jobs, got in pol.passes:
        want, h, c, f = _slow_pass(jobs, free, p, thr, mode)
        assert got == want
        checks, refusals, held = checks + c, refusals + f, held + h
    st_ = pol.stats_
    assert (st_["node_checks"], st_["node_refusals"], st_["refused"]) == (checks, refusals, held)


@pytest.mark.parametrize(("thr", "max_wait"), [(0.99, 20.0), (0.5, 10.0), (0.3, 0.0)])
def test_rank_mode_launches_on_the_argmin_in_every_simulated_pass(thr, max_wait):
    """A real run with two workloads and a probability that is a known function of the node
    id: every pass launches exactly what the slow oracle computes from that pass's free map."""
    pred = NodeTable(NODES, workloads=("A", "B"), seed=1, threshold=thr)
    pol = _Spy(pred, max_wait=max_wait, mode="rank", order="fifo")
    r = sim_bridge.simulate(_two_workloads(), "late", pol, **SMALL)
    assert r.jobs["finish_time"].notna().all()
    assert len(pol.passes) > 50
    _replay(pol, pred.p, thr, "rank")
    if thr < 0.99:
        assert pol.stats_["forced"] > 0 and pol.refusal_rate_ > 0.0


def test_threshold_mode_refusal_counts_equal_the_slow_recount():
    pred = NodeTable(NODES, workloads=("A", "B"), seed=2, threshold=0.5)
    pol = _Spy(pred, max_wait=10.0, order="fifo")
    sim_bridge.simulate(_two_workloads(), "late", pol, **SMALL)
    _replay(pol, pred.p, 0.5, "threshold")
    assert 0.0 < pol.refusal_rate_ < 1.0


def test_rank_mode_prefers_low_probability_nodes():
    """Over a run, rank mode's launches sit on lower-probability nodes than FIFO's."""
    pred = NodeTable(NODES, seed=3, threshold=0.99)
    w = _workload(n_jobs=40, gap=300.0)  # a light load: free nodes to choose from
    # co-located tasks off: durations do not depend on the placement, so both runs face the
    # same stream of decisions
    kw = {**SMALL, "interference": 0.0}
    rank = sim_bridge.simulate(w, "none", PredictorPlacement(pred, mode="rank", order="fifo"), **kw)
    fifo = sim_bridge.simulate(w, "none", "fifo", **kw)
    p_rank = rank.tasks["node"].map(lambda n: pred.p(n, "SYN")).mean()
    p_fifo = fifo.tasks["node"].map(lambda n: pred.p(n, "SYN")).mean()
    assert p_rank < p_fifo


@pytest.mark.parametrize("mode", ["threshold", "rank"])
def test_scores_are_reused_within_a_sample(mode):
    """The predictor is asked at most once per (counter sample, node, running, workload)."""
    pred = NodeTable(NODES, workloads=("A", "B"), seed=4, threshold=0.5)
    pol = PredictorPlacement(pred, max_wait=10.0, refresh=10.0, mode=mode, order="fifo")
    sim_bridge.simulate(_two_workloads(), "late", pol, **SMALL)
    keys = [(math.floor(t / 10.0), n, w, run) for t, n, w, run in pred.asked]
    assert len(keys) == len(set(keys)) == pol.stats_["scored"] > 0


def test_rank_mode_runs_clean_with_the_slowdown_oracle():
    """Rank mode with the slowdown oracle and LATE: every job completes, no node runs more
    attempts than it has slots, and the run is deterministic."""
    w = _workload(2, n_jobs=40, gap=90.0)
    kw = dict(nodes=NODES, slots=2, seed=2, kappa=3.0, progress=False)

    def run():
        oracle = SlowdownOracle.for_simulation(
            [w], nodes=NODES, slots=2, seed=2, kappa=3.0, threshold=0.3
        )
        pol = PredictorPlacement(oracle, max_wait=10.0, mode="rank", order="fifo")
        return sim_bridge.simulate(w, "late", pol, **kw), pol

    a, pol = run()
    b, _ = run()
    _same(a, b)
    assert a.jobs["finish_time"].notna().all()
    t = a.tasks
    for _node, g in t.groupby("node"):
        ev = sorted([(e, 0) for e in g["end_time"]] + [(s, 1) for s in g["launch_time"]])
        level = np.cumsum([1 if k else -1 for _t, k in ev])
        assert level.max() <= 2
    assert pol.stats_["launches"] >= (t["attempt"] == 0).sum()
    assert a.summary["placement_params"]["mode"] == "rank"


# ----------------------------------------------------------------- threshold mode, params
@pytest.mark.parametrize("spec", ["late", "none"])
def test_threshold_mode_is_the_default_and_unchanged(spec):
    pred = NodeTable(NODES, seed=5, threshold=0.5)
    w = _workload(n_jobs=20)
    a = sim_bridge.simulate(w, spec, PredictorPlacement(pred, max_wait=10.0, order="fifo"), **SMALL)
    b_pol = PredictorPlacement(pred, max_wait=10.0, mode="threshold", order="fifo")
    b = sim_bridge.simulate(w, spec, b_pol, **SMALL)
    _same(a, b)
    assert b_pol.stats_["refused"] > 0  # the predictor did hold tasks back
    assert sim_bridge.get_policy("predictor").mode == "threshold"
    assert a.summary["placement_params"]["mode"] == "threshold"


@pytest.mark.parametrize("mode", ["argmin", "", None, 1])
def test_bad_mode_is_named(mode):
    pol = PredictorPlacement(ConstantPredictor(), mode=mode, order="fifo")
    with pytest.raises(ValueError, match="parameter mode") as exc:
        pol.validate()
    assert repr(mode) in str(exc.value)
    with pytest.raises(ValueError, match="mode"):
        sim_bridge.simulate(_workload(n_jobs=2), "none", pol, **SMALL)


def test_refusal_rate_of_the_predictor_placement():
    pol = PredictorPlacement(ConstantPredictor(0.0), order="fifo")
    with pytest.raises(AttributeError, match="refusal_rate_"):
        _ = pol.refusal_rate_
    sim_bridge.simulate(_workload(n_jobs=5), "none", pol, **SMALL)
    assert pol.refusal_rate_ == 0.0 and pol.stats_["node_checks"] == pol.stats_["launches"]
    pol = PredictorPlacement(ConstantPredictor(1.0), max_wait=5.0, mode="rank", order="fifo")
    sim_bridge.simulate(_workload(n_jobs=5), "none", pol, **SMALL)
    assert pol.refusal_rate_ == 1.0
    assert "refusal_rate_" not in pol.get_params() and "stats_" not in pol.get_params()


# ----------------------------------------------------------------- random-refusal control
def test_control_is_registered_and_default_constructible():
    pol = sim_bridge.get_policy("random-refusal")
    assert isinstance(pol, RandomRefusalPlacement) and pol.kind == "placement"
    pol.validate()
    assert "random-refusal" in sim_bridge.list_policies("placement")
    assert sim_bridge.policies.RandomRefusalPlacement is RandomRefusalPlacement


@pytest.mark.parametrize(
    "pol",
    [
        RandomRefusalPlacement(refusal_rate=0.0, order="fifo"),
        RandomRefusalPlacement(1.0, max_wait=0.0, order="fifo"),
    ],
    ids=["rate0", "rate1-nowait"],
)
def test_control_without_effective_refusals_is_exactly_fifo(pol):
    w = _workload()
    _same(
        sim_bridge.simulate(w, "late", pol, **SMALL),
        sim_bridge.simulate(w, "late", "fifo", **SMALL),
    )


@pytest.mark.parametrize("rate", [0.1, 0.4, 0.8])
def test_control_refuses_at_the_requested_rate(rate):
    """Each looked-at (task, free node) pair is a Bernoulli(rate) draw: the realised share
    lies in a 99.99% binomial interval around it."""
    pol = RandomRefusalPlacement(refusal_rate=rate, max_wait=10.0, seed=11, order="fifo")
    r = sim_bridge.simulate(_workload(n_jobs=40, gap=40.0), "late", pol, **SMALL)
    assert r.jobs["finish_time"].notna().all()
    n, k = pol.stats_["node_checks"], pol.stats_["node_refusals"]
    assert n > 300
    ci = binomtest(k, n, rate).proportion_ci(confidence_level=0.9999)
    assert ci.low <= rate <= ci.high
    assert pol.refusal_rate_ == k / n


def test_control_at_a_predictor_runs_rate():
    """The intended use: run the control at the predictor run's refusal_rate_; its realised
    rate agrees with it (binomial interval)."""
    pred = NodeTable(NODES, seed=6, threshold=0.5)
    w = _workload(n_jobs=40, gap=40.0)
    informed = PredictorPlacement(pred, max_wait=10.0, order="fifo")
    sim_bridge.simulate(w, "late", informed, **SMALL)
    q = informed.refusal_rate_
    assert 0.0 < q < 1.0
    control = RandomRefusalPlacement(refusal_rate=q, max_wait=10.0, seed=1, order="fifo")
    sim_bridge.simulate(w, "late", control, **SMALL)
    n, k = control.stats_["node_checks"], control.stats_["node_refusals"]
    ci = binomtest(k, n, q).proportion_ci(confidence_level=0.9999)
    assert ci.low <= q <= ci.high


def test_control_is_deterministic_under_its_seed():
    w = _workload(n_jobs=20)
    a = sim_bridge.simulate(w, "late", RandomRefusalPlacement(0.5, seed=3, order="fifo"), **SMALL)
    b = sim_bridge.simulate(w, "late", RandomRefusalPlacement(0.5, seed=3, order="fifo"), **SMALL)
    c = sim_bridge.simulate(w, "late", RandomRefusalPlacement(0.5, seed=4, order="fifo"), **SMALL)
    _same(a, b)
    assert not a.tasks["node"].equals(c.tasks["node"])
    # the same instance run twice makes the same draws (the generator is built in reset)
    pol = RandomRefusalPlacement(0.5, seed=3, order="fifo")
    _same(sim_bridge.simulate(w, "late", pol, **SMALL), a)
    _same(sim_bridge.simulate(w, "late", pol, **SMALL), a)


def test_control_waits_at_most_max_wait():
    """Refusing everything, every task waits exactly its bound when slots abound."""
    wait = 12.5
    pol = RandomRefusalPlacement(refusal_rate=1.0, max_wait=wait, order="fifo")
    r = sim_bridge.simulate(_workload(n_jobs=12, gap=80.0), "none", pol, **{**SMALL, "nodes": 90})
    t = r.tasks
    maps = t[t["phase"] == "map"]
    np.testing.assert_allclose(maps["launch_time"], maps["submit_time"] + wait, rtol=0, atol=1e-9)
    assert pol.stats_["forced"] == pol.stats_["launches"] == len(t)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        (dict(refusal_rate=1.5), "refusal_rate"),
        (dict(refusal_rate=-0.1), "refusal_rate"),
        (dict(max_wait=-1.0), "max_wait"),
        (dict(seed=-1), "seed"),
        (dict(seed=1.5), "seed"),
        (dict(seed=None), "seed"),
    ],
)
def test_control_bad_parameters_are_named(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        RandomRefusalPlacement(**kwargs).validate()


# ----------------------------------------------------------------- headroom_captured
_finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)


@given(_finite, _finite)
def test_headroom_ends(a, b):
    baseline, oracle = max(a, b), min(a, b)
    if baseline == oracle:
        assert math.isnan(sim_bridge.headroom_captured(baseline, baseline, oracle))
        return
    assert sim_bridge.headroom_captured(baseline, oracle, oracle) == 1.0
    assert sim_bridge.headroom_captured(baseline, baseline, oracle) == 0.0


@given(_finite, _finite, _finite)
@example(0.0, 2.0, -1.1125369292536007e-308)  # a subnormal gain: found by CI, NaN not -inf
def test_headroom_nan_when_the_oracle_gains_nothing(baseline, candidate, oracle):
    from fractions import Fraction

    h = sim_bridge.headroom_captured(baseline, candidate, oracle)
    if oracle >= baseline:
        assert math.isnan(h)
    else:
        exact = (Fraction(baseline) - Fraction(candidate)) / (Fraction(baseline) - Fraction(oracle))
        if abs(exact) > Fraction(10) ** 300:  # a subnormal gain: the share overflows, NaN
            return
        assert math.isfinite(h)
        # lower candidate, more captured; in [0, 1] between the two ends
        if oracle <= candidate <= baseline:
            assert 0.0 <= h <= 1.0
        lower = sim_bridge.headroom_captured(baseline, candidate - abs(candidate) - 1.0, oracle)
        assert lower >= h


_ints = st.integers(-(10**6), 10**6).map(float)


@given(_ints, _ints, _ints, st.integers(-10, 10), _ints)
def test_headroom_ignores_units(baseline, candidate, oracle, log2_scale, shift):
    """A change of units (a positive scale, a shift) does not change the share (exact
    arithmetic here: integers, power-of-two scales)."""
    scale = 2.0**log2_scale
    h = sim_bridge.headroom_captured(baseline, candidate, oracle)
    g = sim_bridge.headroom_captured(
        baseline * scale + shift, candidate * scale + shift, oracle * scale + shift
    )
    assert (math.isnan(h) and math.isnan(g)) or g == h


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_headroom_nan_on_non_finite_input(bad):
    assert math.isnan(sim_bridge.headroom_captured(bad, 1.0, 0.0))
    assert math.isnan(sim_bridge.headroom_captured(2.0, bad, 0.0))
    assert math.isnan(sim_bridge.headroom_captured(2.0, 1.0, bad))
    assert math.isnan(sim_bridge.headroom_captured(2.0, 1.0, 2.0))
