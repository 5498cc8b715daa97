"""The world model's causes (sim_bridge.world): closed forms, oracles, and each cause switched
off giving the old special case."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from sim_bridge import Cluster, JobSpec, Workload
from sim_bridge.world import (
    NOISE_TAIL_SHARE,
    BadNodes,
    contention_response,
    degrade_levels,
    input_skew,
    noise_sf,
    residual_noise,
    residual_noise_one,
)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_response_is_increasing_and_convex(a, b):
    lo, hi = sorted((a, b))
    assert contention_response(lo) <= contention_response(hi)
    mid = contention_response((lo + hi) / 2)
    assert mid <= (contention_response(lo) + contention_response(hi)) / 2 + 1e-12


def test_response_bites_only_near_saturation():
    # light load barely matters, a saturated resource slows a sensitive task several-fold
    assert contention_response(0.2) < 0.3
    assert 1 + contention_response(0.9) > 5


@given(st.floats(1.0, 40.0), st.floats(0.8, 3.0))
@settings(max_examples=40)
def test_noise_survival_is_the_inverse_cdf(x, alpha):
    # P(residual_noise(U) > x) = noise_sf(x): residual_noise inverts the CDF, so the
    # uniform that maps to x has 1 - u = noise_sf(x)
    u = np.linspace(0.0, 1.0, 200001, endpoint=False)
    emp = float((residual_noise(u, alpha) > x).mean())
    assert abs(emp - float(noise_sf(x, alpha))) < 2e-5


@given(
    st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.8, 0.8 - 1e-16, 1.0, float("nan")])),
    st.floats(0.3, 5.0),
    st.sampled_from([(0.2, 0.15, 80.0), (0.05, 0.4, 20.0), (0.5, 0.0, 1e300)]),
)
@settings(max_examples=200)
def test_one_noise_draw_is_the_vectorised_one_bit_for_bit(u, alpha, shape):
    """The engine's scalar draw (a copy's noise at its launch) is the array formula's value,
    at the seam, at u = 1 (a zero to a negative power: the cap) and for NaN."""
    p, body, cap = shape
    one = residual_noise_one(u, alpha, p, body, cap)
    want = float(residual_noise(u, alpha, p, body, cap))
    assert type(one) is float
    assert one == want or (np.isnan(one) and np.isnan(want))


def test_noise_is_continuous_and_increasing():
    u = np.linspace(0.0, 0.999999, 100001)
    m = residual_noise(u)
    assert m[0] == 1.0 and np.all(np.diff(m) >= 0)
    seam = 1.0 - NOISE_TAIL_SHARE
    left, right = residual_noise([seam - 1e-12, seam + 1e-12])
    assert right - left < 1e-9  # no jump where the body meets the tail


def test_most_residual_stragglers_are_far_slower_than_threshold():
    m = residual_noise(np.random.default_rng(0).random(200000))
    strag = m[m > 1.3 * np.median(m)] / np.median(m)
    assert np.percentile(strag, 90) >= 3.0


def test_input_skew_mean_one_and_off():
    f = input_skew(np.random.default_rng(1), np.repeat([0, 1], 50000))
    assert abs(f[:50000].mean() - 1) < 0.01 and abs(f[50000:].mean() - 1) < 0.02
    assert np.std(np.log(f[50000:])) == pytest.approx(0.5, rel=0.02)
    assert np.all(input_skew(np.random.default_rng(1), np.ones(5, int), (0.0, 0.0)) == 1.0)


def test_degrade_levels_against_loop():
    bad = BadNodes(30, (3,), share=0.5)
    rng = np.random.default_rng(2)
    lv = rng.random((4, 30, 7))
    cap = bad.capacity_block(0, 7, 60.0)
    out = degrade_levels(lv, bad, cap)
    for n in range(30):
        for r in range(4):
            for k in range(7):
                want = lv[r, n, k]
                if bad.resource[n] == r:
                    want = 1.0 - cap[n, k] * (1.0 - lv[r, n, k])
                assert out[r, n, k] == pytest.approx(want)


def test_bad_node_capacity_drifts_and_continues():
    bad = BadNodes(400, (5,), share=1.0)
    a = bad.capacity_block(0, 1440, 60.0)
    b = bad.capacity_block(1, 1440, 60.0)
    # drift: the capacity moves over a day, but slowly (time constant hours)
    assert np.mean(np.abs(a[:, -1] - a[:, 0])) > 0.01
    assert np.mean(np.abs(b[:, 0] - a[:, -1])) < 0.02
    again = BadNodes(400, (5,), share=1.0)
    assert np.array_equal(again.capacity_block(0, 1440, 60.0), a)


def test_bad_nodes_are_slower_and_show_in_counters():
    c = Cluster(200, 2, seed=4)
    pid = c.profile_id((1.0, 1.0, 1.0, 1.0))
    c.cum_at(0, pid, 0.0)
    bad = c.bad.resource >= 0
    assert 0 < bad.sum() < 60
    rate = c._rate[pid][:, :1440].mean(axis=1)
    assert rate[bad].mean() < rate[~bad].mean()
    healthy = Cluster(200, 2, seed=4, bad_node_share=0.0)
    diff = np.abs(c._levels - healthy._levels).max(axis=(0, 2))
    assert np.all(diff[~bad] == 0) and np.all(diff[bad] > 0)


def test_end_time_matches_step_integration():
    """Cluster.end_time against a step-by-step integration of the rate, computed from the
    levels with the convex response directly (slow, obvious)."""
    c = Cluster(5, 2, seed=7, kappa=1.5)
    prof = np.array([0.7, 0.2, 1.1, 0.4])
    pid = c.profile_id(prof)
    for node, t0, work in [(0, 13.0, 40.0), (3, 500.0, 900.0), (4, 59.0, 7000.0)]:
        end = c.end_time(node, pid, t0, work)

        def rate(k, node=node):
            load = float(np.sum(prof * c.sens[node] * contention_response(c._levels[:, node, k])))
            return 1.0 / (c.speed[node] * (1.0 + c.kappa * load))

        assert end == pytest.approx(_step_end(rate, t0, work, c.dt), rel=1e-9)


def _step_end(rate, t0: float, work: float, dt: float) -> float:
    """When ``work`` started at ``t0`` is done, one step of a piecewise-constant ``rate(k)``
    at a time (slow, obvious)."""
    t, left = t0, work
    while True:
        k = int(t // dt)
        r = rate(k)
        step_end = (k + 1) * dt
        if r * (step_end - t) >= left:
            return t + left / r
        left -= r * (step_end - t)
        t = step_end


def _jobs():
    return [JobSpec(f"j{i}", 20.0 * i, [30.0] * 6, [50.0] * 3) for i in range(12)]


def test_causes_off_give_the_old_special_case():
    w = Workload("SYN", _jobs())
    r = sim_bridge.simulate(w, nodes=4, seed=1, skew=(0.0, 0.0), noise=False, record_truth=True)
    base = np.concatenate([np.r_[[30.0] * 6, [50.0] * 3] for _ in range(12)])
    assert np.array_equal(np.sort(r.tasks["input_work"].to_numpy()), np.sort(base))
    assert np.all(r.tasks["truth_noise"] == 1.0)
    assert np.allclose(r.tasks["truth_work"], r.tasks["input_work"])


def test_truth_explains_the_duration_on_a_steady_node():
    # ideal cluster: rate 1 everywhere, so duration = work x noise x interference exactly
    w = Workload("SYN", _jobs())
    r = sim_bridge.simulate(w, nodes=3, seed=2, ideal=True, record_truth=True)
    t = r.tasks
    assert np.allclose(t["duration"], t["truth_work"] * t["truth_slowdown_launch"])
    assert np.all(t["truth_slowdown_median"] == 1.0)


def test_record_truth_does_not_change_the_run():
    w = Workload("SYN", _jobs())
    a = sim_bridge.simulate(w, "late", nodes=4, seed=3)
    b = sim_bridge.simulate(w, "late", nodes=4, seed=3, record_truth=True)
    cols = [c for c in a.tasks if not c.startswith("truth_")]
    assert a.tasks[cols].equals(b.tasks[cols])


def _tenant_oracle(cluster, workload, tasks, interference):
    """End times of the attempts on one node, by stepping time in small increments (and
    exactly to each launch and each 60-s boundary): every running attempt progresses at the
    rate its profile gets from the background levels plus the demand of its co-tenants,
    computed here from the formulas (contention_response, tenant_demand) directly."""
    from sim_bridge.world import contention_response
    from sim_bridge.world._interference import tenant_demand

    rows = tasks.sort_values("launch_time")
    todo = list(rows.itertuples())
    prof = {ph: np.asarray(workload.profile(ph)) for ph in rows["phase"].unique()}
    own = {ph: np.asarray(tenant_demand(p, cluster.slots, interference)) for ph, p in prof.items()}
    running: dict[int, list] = {}  # row index -> [phase, work left]
    ends: dict[int, float] = {}
    t = todo[0].launch_time
    h = 0.25
    while todo or running:
        while todo and todo[0].launch_time <= t + 1e-12:
            r = todo.pop(0)
            running[r.Index] = [r.phase, r.truth_work]
        nxt = t + h
        if todo:
            nxt = min(nxt, todo[0].launch_time)
        k = int(t // cluster.dt)
        nxt = min(nxt, (k + 1) * cluster.dt)
        lv = cluster._levels[:, 0, k]
        rates = {}
        for i, (ph, _left) in running.items():
            dem = sum((own[p] for j, (p, _) in running.items() if j != i), np.zeros(4))
            phi = contention_response(np.minimum(lv + dem, 1.0), cluster.response_eps)
            load = float(np.sum(prof[ph] * cluster.sens[0] * phi))
            rates[i] = 1.0 / (cluster.speed[0] * (1.0 + cluster.kappa * load))
        # an attempt ending inside the step ends the step there (its co-tenants speed up)
        first = min((left / rates[i] for i, (_, left) in running.items()), default=np.inf)
        span = min(nxt - t, first)
        for i in list(running):
            running[i][1] -= rates[i] * span
            if running[i][1] <= 1e-9 * max(1.0, span):
                ends[i] = t + span
                del running[i]
        t += span
    return ends


def test_tenant_resolve_matches_step_integration():
    jobs = [JobSpec(f"j{i}", 7.0 * i, [25.0 + i] * 3, [40.0]) for i in range(8)]
    # long attempts sharing the node with short ones: the chunked (vectorised) solve
    jobs.append(JobSpec("long", 3.0, [900.0, 1300.0]))
    w = Workload("FB2009", jobs)
    r = sim_bridge.simulate(
        w, nodes=1, slots=3, seed=5, record_truth=True, record_counters=False, progress=False
    )
    assert r.summary["engine"] == "python"
    cluster = Cluster(1, 3, seed=5)
    ends = _tenant_oracle(cluster, w, r.tasks, 0.5)
    got = r.tasks["end_time"]
    assert len(ends) == len(r.tasks)
    for i, want in ends.items():
        assert got[i] == pytest.approx(want, rel=1e-9, abs=1e-6)
    # and co-location mattered: the same launches without interference end earlier
    alone = sim_bridge.simulate(w, nodes=1, slots=3, seed=5, interference=0.0, progress=False)
    assert alone.summary["mean_jct"] < r.summary["mean_jct"]


@given(
    st.floats(0.0, 5000.0),
    st.floats(1.0, 50000.0),
    st.tuples(*[st.floats(0.0, 0.6)] * 4),
)
@settings(max_examples=40, deadline=None)
def test_long_solves_match_step_by_step(t0, work, demand):
    """end_with / work_with (vectorised past a few steps) against rate_with one step at a
    time, under a constant co-located demand."""
    c = Cluster(3, 2, seed=9)
    pid = c.profile_id((0.4, 0.9, 0.3, 0.6))
    end = c.end_with(1, pid, t0, work, demand)
    want = _step_end(lambda k: c.rate_with(1, pid, k, demand), t0, work, c.dt)
    assert end == pytest.approx(want, rel=1e-9)
    if any(demand):
        assert c.work_with(1, pid, t0, end, demand) == pytest.approx(work, rel=1e-9)


def test_oracle_twin_follows_the_runs_world():
    """SlowdownOracle.for_simulation builds the run's cluster: with the run's bad-node share
    its twin degrades the same nodes, the same way."""
    from sim_bridge import SlowdownOracle

    w = Workload("SYN", _jobs())
    for share in (0.0, 0.3):
        oracle = SlowdownOracle.for_simulation([w], nodes=12, slots=2, seed=5, bad_node_share=share)
        run = Cluster(12, 2, 5, bad_node_share=share)
        assert np.array_equal(oracle.cluster.bad.resource, run.bad.resource)
        assert np.array_equal(oracle.cluster._levels, run._levels)


def test_noise_is_capped_and_its_survival_says_so():
    from sim_bridge.world import NOISE_CAP

    u = 1.0 - np.logspace(-12, -1, 200)
    m = residual_noise(u)
    assert m.max() == NOISE_CAP and np.all(np.diff(m[::-1]) >= 0)
    assert float(noise_sf(NOISE_CAP)) == 0.0 and float(noise_sf(NOISE_CAP * 0.99)) > 0.0
    # below the cap the closed form is the uncapped tail's
    x = 50.0
    assert float(noise_sf(x)) == pytest.approx(float(noise_sf(x, cap=np.inf)))
