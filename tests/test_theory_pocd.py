"""Seed 003 (Shed/Shed+) PoCD, Algorithm 1 and Dolly's clone count: Monte Carlo and brute
force oracles."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sim_bridge.theory import (
    ShedJob,
    dolly_clone_count,
    dolly_job_miss_probability,
    pareto_shape_from_remaining,
    pocd_new_job,
    pocd_running_job,
    shed_plus_allocation,
    task_pocd,
)


def pareto(rng, shape, scale, size):
    return scale * (1 - rng.random(size)) ** (-1 / np.asarray(shape))


@pytest.mark.parametrize(
    ("n", "r", "beta", "deadline"), [(5, 0, 1.5, 300.0), (10, 1, 2.0, 250.0), (20, 2, 1.2, 400.0)]
)
def test_new_job_pocd_matches_monte_carlo(n, r, beta, deadline):
    rng = np.random.default_rng(1)
    reps, t_min = 100_000, 120.0
    finish = pareto(rng, beta, t_min, (reps, n, r + 1)).min(axis=2).max(axis=1)
    hit = finish <= deadline
    se = math.sqrt(max(hit.mean() * (1 - hit.mean()), 1 / reps) / reps)
    assert abs(hit.mean() - pocd_new_job(n, deadline, t_min, beta, r)) < 4.5 * se


def test_running_job_pocd_matches_monte_carlo():
    rng = np.random.default_rng(2)
    reps, t_min, deadline, elapsed = 100_000, 120.0, 400.0, 220.0
    phi = np.array([0.2, 0.5, 0.9])
    beta = np.array([1.3, 1.8, 2.5])
    r = np.array([2, 1, 0])
    hit = np.ones(reps, dtype=bool)
    for i in range(3):  # the fastest attempt and r new ones share the remaining work
        rem = pareto(rng, beta[i], (1 - phi[i]) * t_min, (reps, r[i] + 1)).min(axis=1)
        hit &= rem <= deadline - elapsed
    se = math.sqrt(hit.mean() * (1 - hit.mean()) / reps)
    got = pocd_running_job(phi, beta, r, deadline, elapsed, t_min)
    assert abs(hit.mean() - got) < 4.5 * se
    assert got == pytest.approx(np.prod(task_pocd(phi, beta, r, deadline, elapsed, t_min)))
    # a job past its deadline, or whose remaining work cannot fit, has PoCD 0
    assert pocd_running_job(phi, beta, r, deadline, deadline + 1, t_min) == 0.0
    assert task_pocd([0.0], [2.0], [3], 100.0, 0.0, 120.0)[0] == 0.0


def test_new_job_is_a_running_job_with_no_progress():
    assert pocd_new_job(4, 300.0, 120.0, 1.7, 2) == pytest.approx(
        pocd_running_job([0.0] * 4, [1.7] * 4, [2] * 4, 300.0, 0.0, 120.0)
    )


@pytest.mark.parametrize(("t_rem", "phi"), [(120.0, 0.5), (300.0, 0.1), (50.0, 0.8)])
def test_eq14_shape_matches_the_pareto_mean(t_rem, phi):
    beta = pareto_shape_from_remaining(t_rem, phi, 120.0)
    assert beta > 1
    assert stats.pareto(b=beta, scale=(1 - phi) * 120.0).mean() == pytest.approx(t_rem)
    with pytest.raises(ValueError, match="t_rem"):
        pareto_shape_from_remaining(10.0, 0.5, 120.0)


job_strategy = st.builds(
    lambda d, e, phi, shape, strag: ShedJob(d, e, 120.0, phi, shape, strag),
    st.floats(200.0, 500.0),
    st.floats(0.0, 150.0),
    st.lists(st.floats(0.0, 0.9), min_size=1, max_size=2),
    st.lists(st.floats(1.1, 2.5), min_size=2, max_size=2),
    st.lists(st.booleans(), min_size=2, max_size=2),
).map(
    lambda j: j._replace(shape=j.shape[: len(j.progress)], straggler=j.straggler[: len(j.progress)])
)


def job_pocds(jobs, alloc):
    return [
        pocd_running_job(j.progress, j.shape, a, j.deadline, j.elapsed, j.t_min)
        for j, a in zip(jobs, alloc, strict=True)
    ]


def all_allocations(jobs, kappa, max_extra):
    slots = [(j, i) for j, job in enumerate(jobs) for i, s in enumerate(job.straggler) if s]
    for rs in itertools.product(range(max_extra + 1), repeat=len(slots)):
        if sum(rs) <= kappa:
            alloc = [np.zeros(len(job.progress), dtype=int) for job in jobs]
            for (j, i), r in zip(slots, rs, strict=True):
                alloc[j][i] = r
            yield alloc


def check_feasible(jobs, alloc, capacity, max_extra):
    n_tasks = sum(len(j.progress) for j in jobs)
    kappa = math.floor(capacity - n_tasks - len(jobs))
    n_strag = sum(int(np.sum(j.straggler)) for j in jobs)
    used = sum(int(a.sum()) for a in alloc)
    assert used == max(0, min(kappa, n_strag * max_extra))
    for job, a in zip(jobs, alloc, strict=True):
        assert np.all((a >= 0) & (a <= max_extra))
        assert np.all(a[~np.asarray(job.straggler, dtype=bool)] == 0)
    return kappa


@settings(max_examples=60, deadline=None)
@given(st.lists(job_strategy, min_size=1, max_size=3), st.integers(0, 6), st.integers(1, 3))
def test_log_gain_rule_is_proportionally_fair_optimum(jobs, spare, max_extra):
    capacity = sum(len(j.progress) for j in jobs) + len(jobs) + spare
    alloc = shed_plus_allocation(jobs, capacity, max_extra, rule="log_gain")
    kappa = check_feasible(jobs, alloc, capacity, max_extra)

    def score(a):
        with np.errstate(divide="ignore"):
            return float(np.sum(np.log(job_pocds(jobs, a))))

    best = max(score(a) for a in all_allocations(jobs, kappa, max_extra))
    got = score(alloc)
    assert got == pytest.approx(best, rel=1e-9, abs=1e-12) or got == best


@settings(max_examples=60, deadline=None)
@given(st.lists(job_strategy, min_size=1, max_size=3), st.integers(0, 6), st.integers(1, 3))
def test_paper_rule_is_feasible_and_max_min_optimal_for_single_straggler_jobs(
    jobs, spare, max_extra
):
    capacity = sum(len(j.progress) for j in jobs) + len(jobs) + spare
    alloc = shed_plus_allocation(jobs, capacity, max_extra)
    kappa = check_feasible(jobs, alloc, capacity, max_extra)
    if all(int(np.sum(j.straggler)) <= 1 for j in jobs):
        best = max(min(job_pocds(jobs, a)) for a in all_allocations(jobs, kappa, max_extra))
        assert min(job_pocds(jobs, alloc)) >= best - 1e-12


def test_paper_rule_is_not_optimal_for_the_product_within_a_job():
    # a hopeless and a half-way straggler in one job: the rule keeps feeding the hopeless one
    base = np.array([0.9, 0.5])  # per-attempt miss probabilities (beta = 1)
    job = ShedJob(300.0, 180.0, 120.0, (1 - base).tolist(), [1.0, 1.0], [True, True])
    capacity = 2 + 1 + 6
    paper = shed_plus_allocation([job], capacity, max_extra=6)
    best = shed_plus_allocation([job], capacity, max_extra=6, rule="log_gain")
    assert job_pocds([job], best)[0] > job_pocds([job], paper)[0]


def test_allocation_validates_shapes():
    bad = ShedJob(300.0, 0.0, 120.0, [0.1, 0.2], [2.0], [True, True])
    with pytest.raises(ValueError, match=r"jobs\[0\]"):
        shed_plus_allocation([bad], 10)
    with pytest.raises(ValueError, match="rule"):
        shed_plus_allocation([], 10, rule="random")


@settings(max_examples=100, deadline=None)
@given(st.floats(0.01, 0.9), st.integers(1, 200), st.floats(0.001, 0.3))
def test_dolly_count_is_the_smallest_meeting_the_risk(p, n, eps):
    c = dolly_clone_count(p, n, eps)
    assert dolly_job_miss_probability(p, c, n) <= eps * (1 + 1e-9)
    if c > 1:
        assert dolly_job_miss_probability(p, c - 1, n) > eps


@pytest.mark.parametrize(("p_job", "n"), [(0.3, 5), (0.6, 20)])
def test_dolly_job_level_probability_conversion(p_job, n):
    p_task = 1 - (1 - p_job) ** (1 / n)
    assert dolly_job_miss_probability(p_task, 1, n) == pytest.approx(p_job)
    c_job = dolly_clone_count(p_job, n, p_is="job")
    assert c_job == dolly_clone_count(p_task, n)
    assert dolly_clone_count(p_job, n) <= c_job or p_job >= p_task
    with pytest.raises(ValueError, match="p_is"):
        dolly_clone_count(0.3, 5, p_is="cluster")
