"""Engine oracles: slow obvious models and closed forms the simulator must reproduce."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import sim_bridge
from sim_bridge import JobSpec, Launch, PolicyError, SpeculationPolicy
from sim_bridge.policies import Kill, PlacementPolicy, Wake

EXACT = dict(ideal=True, noise=False, skew=(0.0, 0.0), interference=0.0, progress=False)

works = st.lists(st.floats(0.5, 100.0), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=st.lists(
        st.tuples(st.floats(0.0, 200.0), works, st.lists(st.floats(0.5, 50.0), max_size=4)),
        min_size=1,
        max_size=5,
    )
)
def test_unlimited_slots_no_noise_jct_is_the_longest_chain(jobs):
    specs = [JobSpec(f"j{i}", s, m, r) for i, (s, m, r) in enumerate(jobs)]
    n_tasks = sum(j.n_tasks for j in specs)
    res = sim_bridge.simulate(specs, nodes=n_tasks, slots=1, **EXACT)
    want = {j.job_id: j.critical_path for j in specs}
    got = dict(zip(res.jobs["job_id"], res.jobs["jct"], strict=True))
    for jid, cp in want.items():
        assert got[jid] == pytest.approx(cp, rel=1e-9, abs=1e-9)
    # and every attempt lasts exactly its base work
    np.testing.assert_allclose(
        res.tasks["duration"].sum(), sum(j.map_work.sum() + j.reduce_work.sum() for j in specs)
    )


def _lindley(arrivals, services):
    """Single FIFO server: C_i = max(A_i, C_{i-1}) + S_i."""
    done, out = 0.0, []
    for a, s in zip(arrivals, services, strict=True):
        done = max(a, done) + s
        out.append(done)
    return np.array(out)


@settings(max_examples=25, deadline=None)
@given(
    gaps=st.lists(st.floats(0.0, 30.0), min_size=1, max_size=30),
    data=st.data(),
)
def test_one_slot_is_a_single_server_fifo_queue(gaps, data):
    arrivals = np.cumsum(gaps)
    services = np.array(
        data.draw(st.lists(st.floats(0.1, 40.0), min_size=len(gaps), max_size=len(gaps)))
    )
    specs = [
        JobSpec(f"q{i}", float(a), [float(s)])
        for i, (a, s) in enumerate(zip(arrivals, services, strict=True))
    ]
    res = sim_bridge.simulate(specs, nodes=1, slots=1, **EXACT)
    # jobs arriving at the same instant keep their list order (stable sort)
    order = np.argsort(arrivals, kind="stable")
    want = _lindley(arrivals[order], services[order])
    got = res.jobs.set_index("job_id").loc[[f"q{i}" for i in order], "finish_time"].to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


class _CloneAtLaunch(SpeculationPolicy):
    """Test policy: k simultaneous attempts per task, recording their would-be end times."""

    name = "_clone_test"

    def __init__(self, k=3):
        self.k = k

    def reset(self):
        self.ends = {}

    def on_attempt_launched(self, view, attempt):
        self.ends.setdefault(attempt.task.task_id, []).append(attempt._end)
        if attempt.index == 0:
            return [Launch(attempt.task) for _ in range(self.k - 1)]
        return []


@pytest.mark.parametrize("k", [2, 3])
def test_k_simultaneous_copies_finish_at_the_minimum(k):
    pol = _CloneAtLaunch(k)
    n = 40
    res = sim_bridge.simulate(
        [JobSpec("j", 0.0, np.linspace(10, 50, n))],
        pol,
        nodes=n * k,
        slots=1,
        seed=4,
        progress=False,
    )
    t = res.tasks
    assert len(t) == n * k
    for tid, g in t.groupby("task_id"):
        ends = pol.ends[tid]
        assert len(ends) == k and (g["launch_time"] == 0.0).all()
        fin = g[g["outcome"] == "finished"]
        assert len(fin) == 1
        assert fin["end_time"].iloc[0] == pytest.approx(min(ends))
        assert (g["end_time"] == fin["end_time"].iloc[0]).all()  # the others killed then
    # no copies on the same node as a sibling (the engine prefers other nodes)
    assert t.groupby("task_id")["node"].nunique().eq(k).all()


@pytest.mark.parametrize("k", [1, 2, 4])
def test_min_of_k_exponential_copies_has_mean_one_over_k(k):
    n = 3000
    res = sim_bridge.simulate(
        [JobSpec("j", 0.0, np.ones(n))],
        _CloneAtLaunch(k),
        nodes=n * k,
        slots=1,
        seed=11,
        duration_dist=stats.expon(),
        progress=False,
    )
    fin = res.tasks[res.tasks["outcome"] == "finished"]["duration"].to_numpy()
    # closed form: min of k i.i.d. Exp(1) is Exp(k); 5-sigma band of the sample mean
    assert abs(fin.mean() - 1.0 / k) < 5.0 / k / np.sqrt(n)
    assert stats.kstest(fin, stats.expon(scale=1.0 / k).cdf).pvalue > 1e-4
    assert res.summary["task_seconds"] == pytest.approx(k * fin.sum())


def test_duration_dist_drives_original_attempts():
    n = 2000
    dist = stats.pareto(2.5)
    res = sim_bridge.simulate(
        [JobSpec("j", 0.0, np.ones(n))],
        nodes=n,
        slots=1,
        seed=2,
        duration_dist=dist,
        progress=False,
    )
    d = res.tasks["duration"].to_numpy()
    assert stats.kstest(d, dist.cdf).pvalue > 1e-4
    assert res.jobs["jct"].iloc[0] == pytest.approx(d.max())


class _Bad(SpeculationPolicy):
    name = "_bad_test"
    interval = 1.0

    def __init__(self, what="done"):
        self.what = what

    def reset(self):
        self.last = None

    def on_attempt_finished(self, view, attempt):
        self.last = attempt
        if self.what == "done":
            return [Launch(attempt.task)]
        if self.what == "kill_done":
            return [Kill(attempt)]
        if self.what == "past":
            return [Wake(view.now - 1.0)]
        if self.what == "node":
            return [Launch(next(view.running_attempts()).task, node=999)]
        if self.what == "junk":
            return ["launch please"]
        return []


@pytest.mark.parametrize(
    ("what", "match"),
    [
        ("done", "already done"),
        ("kill_done", "not running"),
        ("past", "not in the past"),
        ("node", "no node 999"),
        ("junk", "not a Launch, Kill or Wake"),
    ],
)
def test_invalid_actions_raise_policy_error_naming_the_policy(what, match):
    specs = [JobSpec("j", 0.0, [5.0, 6.0, 7.0, 8.0])]
    with pytest.raises(PolicyError, match=match) as exc:
        sim_bridge.simulate(specs, _Bad(what), nodes=2, slots=2, **EXACT)
    assert "_bad_test" in str(exc.value)


def test_launch_without_a_free_slot_is_rejected():
    class Greedy(SpeculationPolicy):
        name = "_greedy_test"

        def on_attempt_launched(self, view, attempt):
            return [Launch(attempt.task)] if attempt.index == 0 else []

    with pytest.raises(PolicyError, match="no free slot"):
        sim_bridge.simulate([JobSpec("j", 0.0, [5.0, 6.0])], Greedy(), nodes=1, slots=1, **EXACT)


def test_placement_that_idles_forever_is_detected_and_wake_unblocks_it():
    class Idle(PlacementPolicy):
        name = "_idle_test"

        def assign(self, view, free):
            return []

    with pytest.raises(PolicyError, match="_idle_test.*waiting"):
        sim_bridge.simulate([JobSpec("j", 0.0, [5.0])], "none", Idle(), nodes=1, slots=1, **EXACT)

    class Delay(PlacementPolicy):
        """Hold every task until t >= 10, then FIFO."""

        name = "_delay_test"

        def assign(self, view, free):
            if view.now < 10.0:
                return [Wake(10.0)]
            node = next(iter(free))
            return [Launch(t, node) for j in view.waiting_jobs() for t in j.pending.values()][:1]

    res = sim_bridge.simulate(
        [JobSpec("j", 0.0, [5.0])], "none", Delay(), nodes=1, slots=1, **EXACT
    )
    assert res.tasks["launch_time"].iloc[0] == 10.0 and res.jobs["jct"].iloc[0] == 15.0


def test_kill_and_restart_requeues_the_task_and_progress_transfer_shortens_it():
    class Restart(SpeculationPolicy):
        """At t=2 kill the attempt and restart from 50% of the input."""

        name = "_restart_test"

        def on_job_arrival(self, view, job):
            return [Wake(2.0)]

        def on_wake(self, view, tag):
            a = next(view.running_attempts())
            assert view.progress(a) == pytest.approx(0.2)
            assert view.progress_rate(a) == pytest.approx(0.1)
            return [Kill(a), Launch(a.task, start_fraction=0.5)]

    res = sim_bridge.simulate([JobSpec("j", 0.0, [10.0])], Restart(), nodes=1, slots=1, **EXACT)
    t = res.tasks
    assert list(t["outcome"]) == ["killed", "finished"]
    assert list(t["duration"]) == [2.0, 5.0]
    assert res.jobs["jct"].iloc[0] == 7.0 and res.summary["task_seconds"] == 7.0


@pytest.fixture(params=["compiled", "numpy"])
def counter_path(request, monkeypatch):
    """Both implementations of the node counters: the compiled rows and the NumPy reference
    (what an install without a C compiler runs)."""
    import sim_bridge._cluster as cluster_mod

    if request.param == "numpy":
        monkeypatch.setattr(cluster_mod, "CounterSynth", None)
    elif cluster_mod.CounterSynth is None:
        pytest.skip("the compiled counters were not built")
    return request.param


def test_node_counters_match_the_trace_row_of_a_launch_at_that_instant(counter_path):
    seen = {}

    class Peek(PlacementPolicy):
        name = "_peek_test"

        def assign(self, view, free):
            out = []
            for node, job in zip(list(free), list(view.waiting_jobs()), strict=False):
                task = next(iter(job.pending.values()))
                seen[task.task_id] = view.node_counters(node)
                out.append(Launch(task, node))
            return out

    specs = [JobSpec(f"j{i}", 37.0 * i, [20.0]) for i in range(6)]
    res = sim_bridge.simulate(specs, "none", Peek(), nodes=3, slots=2, seed=9, progress=False)
    assert len(seen) == 6
    for _, row in res.tasks.iterrows():
        for name, value in seen[row["task_id"]].items():
            assert row[f"c_{name}"] == pytest.approx(value)


@pytest.mark.parametrize("n_nodes", [5, 300])  # both paths of Cluster.counters (<= / > 256)
def test_node_counters_many_equals_one_read_per_node(n_nodes, counter_path):
    checked = []

    class Sweep(PlacementPolicy):
        name = "_sweep_test"

        def assign(self, view, free):
            nodes = list(range(view.n_nodes))[::-1]
            many = view.node_counters_many(nodes)
            for i, node in enumerate(nodes):
                one = view.node_counters(node)
                assert {k: float(v[i]) for k, v in many.items()} == one
                assert view.node_counter_values(node) == [one[k] for k in view.counter_names]
            checked.append(view.now)
            out = []
            for node, job in zip(list(free), list(view.waiting_jobs()), strict=False):
                out.append(Launch(next(iter(job.pending.values())), node))
            return out

    specs = [JobSpec(f"j{i}", 13.0 * i, [20.0, 30.0]) for i in range(4)]
    sim_bridge.simulate(specs, "none", Sweep(), nodes=n_nodes, slots=2, seed=2, progress=False)
    assert checked

    class Bad(Sweep):
        name = "_sweep_bad"

        def assign(self, view, free):
            return view.node_counters_many([0, view.n_nodes])

    with pytest.raises(ValueError, match="node must be in"):
        sim_bridge.simulate(specs, "none", Bad(), nodes=3, slots=1, seed=2, progress=False)
