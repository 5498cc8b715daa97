"""Seeds 000/001 (Xu & Lau): cut-off load, SCA's P2, SDA/ESE thresholds, eq. 29 and the
deadline clone counts, against quadrature, Monte Carlo and brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from sim_bridge.theory import (
    cloned_task_delay,
    cloning_cutoff_load,
    cloning_cutoff_rate,
    deadline_clone_cost,
    deadline_clone_counts,
    deadline_miss_terms,
    ese_expected_resource,
    ese_sigma_star,
    ese_small_job_clones,
    mg1_task_delay,
    sca_clone_counts,
    sca_job_value,
    sca_relaxed_solution,
    sda_expected_resource,
    sda_optimal_copies,
    sda_sigma_star,
    sda_straggler_cost,
)


def pollaczek_khinchine(rate, service):
    """Mean M/G/1 sojourn time from numerically integrated service moments."""
    m1 = service.expect(lambda x: x)
    m2 = service.expect(lambda x: x * x)
    return rate * m2 / (2 * (1 - rate * m1)) + m1


@pytest.mark.parametrize("alpha", [2.5, 3.0, 4.0])
@pytest.mark.parametrize("omega", [0.1, 0.3])
def test_queue_delays_match_pollaczek_khinchine(alpha, omega):
    es = 2.0
    xm = es * (alpha - 1) / alpha
    rate = omega / es  # per-machine task rate
    one = stats.pareto(b=alpha, scale=xm)
    two = stats.pareto(b=2 * alpha, scale=xm)  # min of two Pareto(alpha) copies
    assert mg1_task_delay(omega, alpha, es) == pytest.approx(pollaczek_khinchine(rate, one))
    assert cloned_task_delay(omega, alpha, es) == pytest.approx(pollaczek_khinchine(2 * rate, two))


@pytest.mark.parametrize("alpha", [2.5, 3.0, 5.0])
def test_cutoff_is_the_first_crossing(alpha):
    w_u = cloning_cutoff_load(alpha)
    assert cloned_task_delay(w_u, alpha) == pytest.approx(mg1_task_delay(w_u, alpha), rel=1e-9)
    for w in np.linspace(0, w_u, 50)[:-1]:
        assert cloned_task_delay(w, alpha) < mg1_task_delay(w, alpha)
    assert cloned_task_delay(w_u * 1.01, alpha) > mg1_task_delay(w_u * 1.01, alpha)


@pytest.mark.parametrize("alpha", [1.6, 2.0])
def test_cutoff_for_infinite_variance_is_the_theorem1_stability_limit(alpha):
    limit = (2 * alpha - 1) / (4 * (alpha - 1))
    assert cloning_cutoff_load(alpha) == pytest.approx(min(1.0, limit))
    assert math.isinf(cloned_task_delay(limit, alpha))
    assert cloning_cutoff_rate(alpha, 10.0, 2.0, 100) == pytest.approx(min(1.0, limit) * 100 / 20.0)


def test_sca_job_value_matches_monte_carlo():
    rng = np.random.default_rng(11)
    m, c, xm, alpha, gamma, reps = 7, 2, 1.5, 2.0, 0.05, 40_000
    copies = xm * (1 - rng.random((reps, m, c))) ** (-1 / alpha)
    task = copies.min(axis=2)
    sample = -task.max(axis=1) - gamma * c * task.sum(axis=1)
    se = sample.std(ddof=1) / math.sqrt(reps)
    assert abs(sample.mean() - sca_job_value(c, m, xm, alpha, gamma)) < 4.5 * se


def brute_force_p2(m, mu, alpha, n_free, r_max, gamma):
    best = -math.inf
    for cs in itertools.product(range(1, r_max + 1), repeat=len(m)):
        if sum(ci * mi for ci, mi in zip(cs, m, strict=True)) <= n_free:
            v = sum(
                sca_job_value(ci, mi, s, alpha, gamma) for ci, mi, s in zip(cs, m, mu, strict=True)
            )
            best = max(best, v)
    return best


def p2_value(counts, m, mu, alpha, gamma):
    return sum(
        sca_job_value(int(c), int(k), s, alpha, gamma)
        for c, k, s in zip(counts, m, mu, strict=True)
    )


sca_instances = st.integers(1, 3).flatmap(
    lambda j: st.tuples(
        st.lists(st.integers(1, 8), min_size=j, max_size=j),
        st.lists(st.floats(0.5, 3.0), min_size=j, max_size=j),
        st.integers(0, 20),
        st.integers(1, 4),
        st.sampled_from([0.0, 0.001, 0.01, 0.1]),
    )
)


@settings(max_examples=60, deadline=None)
@given(sca_instances)
def test_sca_exact_matches_brute_force(inst):
    m, mu, extra, r_max, gamma = inst
    n_free = sum(m) + extra
    counts = sca_clone_counts(m, mu, 2.0, n_free, r_max, gamma)
    assert np.all((counts >= 1) & (counts <= r_max))
    assert int(np.dot(counts, m)) <= n_free
    assert p2_value(counts, m, mu, 2.0, gamma) == pytest.approx(
        brute_force_p2(m, mu, 2.0, n_free, r_max, gamma), rel=1e-12, abs=1e-12
    )


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 6),
    st.lists(st.floats(0.5, 3.0), min_size=1, max_size=3),
    st.integers(0, 30),
    st.integers(1, 4),
    st.sampled_from([0.0, 0.001, 0.01, 0.1]),
)
def test_sca_greedy_is_exact_with_equal_job_sizes(size, mu, extra, r_max, gamma):
    m = [size] * len(mu)
    for v in range(len(mu)):  # the greedy argument needs concave per-job values
        vals = [sca_job_value(c, size, mu[v], 2.0, gamma) for c in range(1, r_max + 1)]
        assert np.all(np.diff(vals, 2) <= 1e-12)
    n_free = sum(m) + extra
    greedy = sca_clone_counts(m, mu, 2.0, n_free, r_max, gamma, method="greedy")
    assert p2_value(greedy, m, mu, 2.0, gamma) == pytest.approx(
        brute_force_p2(m, mu, 2.0, n_free, r_max, gamma), rel=1e-12, abs=1e-12
    )


@settings(max_examples=12, deadline=None)
@given(sca_instances)
def test_sca_relaxation_bounds_the_integer_optimum(inst):
    m, mu, extra, r_max, gamma = inst
    n_free = sum(m) + extra
    c, nu, bound = sca_relaxed_solution(m, mu, 2.0, n_free, r_max, gamma)
    best = brute_force_p2(m, mu, 2.0, n_free, r_max, gamma)
    assert np.all((c >= 1 - 1e-9) & (c <= r_max + 1e-9)) and nu >= 0
    assert float(np.dot(m, c)) <= n_free + 1e-6
    assert bound >= best - 1e-9  # weak duality
    floored = sca_clone_counts(m, mu, 2.0, n_free, r_max, gamma, method="relaxed")
    assert int(np.dot(floored, m)) <= n_free
    assert p2_value(floored, m, mu, 2.0, gamma) <= best + 1e-12


def test_sca_greedy_can_lose_with_unequal_job_sizes():
    m, mu, r_max, gamma, n_free = [1, 8], [1.65, 0.66], 3, 0.01, 26
    exact = sca_clone_counts(m, mu, 2.0, n_free, r_max, gamma)
    greedy = sca_clone_counts(m, mu, 2.0, n_free, r_max, gamma, method="greedy")
    assert p2_value(greedy, m, mu, 2.0, gamma) < p2_value(exact, m, mu, 2.0, gamma) - 1e-3


def test_sca_rejects_slots_without_room():
    with pytest.raises(ValueError, match="free_machines = 10"):
        sca_clone_counts([6, 6], 1.0, 2.0, 10, 4, 0.01)
    with pytest.raises(ValueError, match="alpha"):
        sca_clone_counts([1], 1.0, 0.9, 10, 4, 0.01)


@pytest.mark.parametrize(("m", "free"), [(5, 100), (5, 12), (30, 30)])
def test_eq29_small_job_clones_is_the_argmax(m, free):
    c = ese_small_job_clones(m, 0.5, 2.0, 0.01, 8, free)
    feasible = range(1, max(1, min(8, free // m)) + 1)
    values = {k: sca_job_value(k, m, 0.5, 2.0, 0.01) for k in feasible}
    assert c in values and values[c] == max(values.values())


def sda_monte_carlo(sigma, alpha, xm, s, copies, reps, rng):
    x = xm * (1 - rng.random(reps)) ** (-1 / alpha)
    mean = xm * alpha / (alpha - 1)
    z = (1 - s) * x
    strag = z >= sigma * mean
    if copies > 1:
        y = (xm * (1 - rng.random((reps, copies - 1))) ** (-1 / alpha)).min(axis=1)
    else:
        y = np.inf
    l = np.minimum(z, y)
    resource = np.where(strag, copies * l + s * x, x)
    return resource, strag, l


@pytest.mark.parametrize(
    ("alpha", "sigma", "copies"), [(2.0, 1.7, 2), (2.0, 2.5, 3), (3.0, 1.2, 2)]
)
def test_sda_cost_and_resource_match_monte_carlo(alpha, sigma, copies):
    rng = np.random.default_rng(5)
    xm, s, reps = 1.3, 0.2, 400_000
    resource, strag, l = sda_monte_carlo(sigma, alpha, xm, s, copies, reps, rng)
    tau = copies * l[strag]
    se = tau.std(ddof=1) / math.sqrt(tau.size)
    assert abs(tau.mean() - sda_straggler_cost(copies, alpha, sigma, xm)) < 4.5 * se
    se = resource.std(ddof=1) / math.sqrt(reps)
    assert abs(resource.mean() - sda_expected_resource(sigma, alpha, xm, s, copies)) < 4.5 * se


@pytest.mark.parametrize("alpha", [2.0, 3.0, 5.0])
def test_theorem3_two_copies(alpha):
    for sigma in (1.0, 1.5, 2.0, 3.0, 6.0, 20.0):
        costs = [sda_straggler_cost(c, alpha, sigma) for c in range(2, 12)]
        assert np.all(np.diff(costs) > 0)  # tau increases on c >= 2 (Lemma 2)
        assert sda_optimal_copies(alpha, sigma) in (1, 2)
    assert sda_optimal_copies(alpha, 2.5) == 2  # "take sigma > 2" in the proof


@pytest.mark.parametrize("alpha", [1.5, 1.8])
def test_theorem3_fails_below_alpha_2(alpha):
    # as sigma -> inf, tau(c) -> mu alpha c (c-1) / (alpha c - alpha - 1); c = 3 beats c = 2
    # exactly when 6 alpha / (2 alpha - 1) < 2 alpha / (alpha - 1), i.e. alpha < 2
    sigma = 50.0
    assert sda_straggler_cost(3, alpha, sigma) < sda_straggler_cost(2, alpha, sigma)
    assert sda_optimal_copies(alpha, sigma) >= 3


def test_sda_sigma_star_closed_form_and_stationarity():
    assert sda_sigma_star(2.0) == pytest.approx(1 + math.sqrt(2) / 2, abs=1e-7)
    for alpha in (1.5, 3.0, 4.0):
        s = sda_sigma_star(alpha)
        a = (alpha - 1) / alpha
        # re-derived first-order condition (the printed eq. 17 is garbled)
        assert (alpha - 1) * s + 2 * a**alpha * s ** (1 - alpha) == pytest.approx(2 * (alpha - 1))
        for d in (-0.05, 0.05):
            assert sda_expected_resource(s + d, alpha) > sda_expected_resource(s, alpha)


@pytest.mark.parametrize(
    ("dist", "sigma"),
    [
        (stats.expon(scale=1.0), 1.6),
        (stats.expon(scale=2.0), 0.7),
        (stats.pareto(2.0), 1.7),
        (stats.pareto(3.0, scale=0.5), 2.5),
        (stats.lognorm(0.6), 1.3),
    ],
)
def test_ese_expected_resource_matches_monte_carlo(dist, sigma):
    rng = np.random.default_rng(9)
    reps = 400_000
    x = dist.ppf(rng.random(reps))
    u = rng.random(reps) * x  # asktime uniform over the task's life
    t_new = dist.ppf(rng.random(reps))
    resource = np.where(x - u > sigma * dist.mean(), u + 2 * np.minimum(x - u, t_new), x)
    se = resource.std(ddof=1) / math.sqrt(reps)
    assert abs(resource.mean() - ese_expected_resource(sigma, dist)) < 4.5 * se


@pytest.mark.parametrize("sigma", [0.5, 1.6, 3.0])
def test_ese_exponential_matches_corrected_eq25(sigma):
    def integrand(t):
        s = sigma
        return (2 - 2 * s / t + t / 2 + s * s / (2 * t) + 2 / t * (np.exp(-t) - np.exp(-s))) * (
            np.exp(-t)
        )

    tail, _ = integrate.quad(integrand, sigma, np.inf)
    corrected = tail + 1 - math.exp(-sigma) - sigma * math.exp(-sigma)
    printed = tail + 1 - sigma - sigma * math.exp(-sigma)
    assert ese_expected_resource(sigma, stats.expon()) == pytest.approx(corrected, rel=1e-9)
    assert abs(printed - corrected) > 0.1


def test_ese_generic_path_matches_closed_form():
    # gamma(a=1) is the exponential but goes through the tabulated path
    for sigma in (0.8, 1.6):
        assert ese_expected_resource(sigma, stats.gamma(a=1.0)) == pytest.approx(
            ese_expected_resource(sigma, stats.expon()), rel=1e-6
        )


def test_ese_sigma_star_is_a_minimum_and_matches_sda_for_pareto():
    for dist in (stats.expon(), stats.pareto(2.0)):
        s = ese_sigma_star(dist)
        for d in (-0.05, 0.05):
            assert ese_expected_resource(s + d, dist) > ese_expected_resource(s, dist)
    # two separate derivations (SDA eq. 28 and ESE eqs. 30-33) give the same threshold
    assert ese_sigma_star(stats.pareto(2.0)) == pytest.approx(sda_sigma_star(2.0), abs=1e-5)
    assert ese_sigma_star(stats.pareto(3.0)) == pytest.approx(sda_sigma_star(3.0), abs=1e-5)


def brute_force_deadline(mu, alpha, deadline, eps, machines, r_max):
    c = math.log(1 / (1 - eps))
    best = None
    for rs in itertools.product(range(1, r_max + 1), repeat=len(mu)):
        r = np.array(rs)
        if r.sum() <= machines and deadline_miss_terms(r, mu, alpha, deadline).sum() <= c:
            v = deadline_clone_cost(r, mu, alpha)
            if best is None or v < best:
                best = v
    return best


deadline_instances = st.integers(1, 4).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(0.5, 2.0), min_size=n, max_size=n),
        st.floats(2.5, 6.0),
        st.floats(0.01, 0.2),
        st.integers(0, 12),
        st.integers(1, 5),
    )
)


@settings(max_examples=80, deadline=None)
@given(deadline_instances)
def test_deadline_clones_match_brute_force(inst):
    mu, deadline, eps, extra, r_max = inst
    machines = len(mu) + extra
    best = brute_force_deadline(mu, 2.0, deadline, eps, machines, r_max)
    if best is None:
        for method in ("exact", "lagrangian"):
            with pytest.raises(ValueError, match="no copy counts"):
                deadline_clone_counts(mu, 2.0, deadline, eps, machines, r_max, method=method)
        return
    c = math.log(1 / (1 - eps))
    for method in ("exact", "lagrangian", "paper"):
        r = deadline_clone_counts(mu, 2.0, deadline, eps, machines, r_max, method=method)
        assert r.sum() <= machines and r.max() <= r_max and r.min() >= 1
        assert deadline_miss_terms(r, mu, 2.0, deadline).sum() <= c * (1 + 1e-12)
        assert deadline_clone_cost(r, mu, 2.0) >= best * (1 - 1e-12)
    r = deadline_clone_counts(mu, 2.0, deadline, eps, machines, r_max, method="exact")
    assert deadline_clone_cost(r, mu, 2.0) == pytest.approx(best, rel=1e-12)


def test_lagrangian_heuristic_can_miss_the_optimum():
    args = ([1.25, 0.5, 0.5], 2.0, 2.875, 0.1875, 5, 2)
    exact = deadline_clone_counts(*args, method="exact")
    heur = deadline_clone_counts(*args, method="lagrangian")
    assert deadline_clone_cost(exact, args[0], 2.0) == pytest.approx(
        brute_force_deadline(args[0], 2.0, 2.875, 0.1875, 5, 2)
    )
    assert deadline_clone_cost(heur, args[0], 2.0) > deadline_clone_cost(exact, args[0], 2.0)


@pytest.mark.parametrize(("n", "mu", "deadline", "eps"), [(4, 1.0, 4.0, 0.05), (3, 0.7, 2.5, 0.1)])
def test_theorem1_is_the_best_uniform_count_for_identical_tasks(n, mu, deadline, eps):
    scales = [mu] * n
    r = deadline_clone_counts(scales, 2.0, deadline, eps, 100, 8, method="theorem1")
    c = math.log(1 / (1 - eps))
    uniform = [
        deadline_clone_cost([k] * n, scales, 2.0)
        for k in range(1, 9)
        if deadline_miss_terms([k] * n, scales, 2.0, deadline).sum() <= c
    ]
    assert len(set(r.tolist())) == 1
    assert deadline_clone_cost(r, scales, 2.0) == pytest.approx(min(uniform))
    # the integer optimum may mix r and r - 1 copies: never worse than Theorem 1
    best = brute_force_deadline(scales, 2.0, deadline, eps, 100, 6)
    exact = deadline_clone_counts(scales, 2.0, deadline, eps, 100, 8, method="exact")
    assert deadline_clone_cost(exact, scales, 2.0) == pytest.approx(best)
    assert best <= deadline_clone_cost(r, scales, 2.0)


def test_relaxed_deadline_constraint_is_only_necessary():
    # ln(1 - x) <= -x makes (7) necessary for (1e), not sufficient: with one task and
    # g in (eps, ln(1/(1-eps))], (7) holds but the PoCD 1 - g is below 1 - eps
    eps = 0.3
    deadline = 1 / math.sqrt(0.33)  # g = (1 / D)^2 = 0.33 with one copy
    r = deadline_clone_counts([1.0], 2.0, deadline, eps, 10, 8, method="theorem1")
    g = deadline_miss_terms(r, [1.0], 2.0, deadline)
    assert r.tolist() == [1]
    assert g.sum() <= math.log(1 / (1 - eps))
    assert np.prod(1 - g) < 1 - eps


def test_deadline_clone_counts_validates():
    with pytest.raises(ValueError, match=r"scales\[1\]"):
        deadline_clone_counts([1.0, 5.0], 2.0, 4.0, 0.05, 10, 4)
    with pytest.raises(ValueError, match="epsilon"):
        deadline_clone_counts([1.0], 2.0, 4.0, 1.5, 10, 4)
    with pytest.raises(ValueError, match="method"):
        deadline_clone_counts([1.0], 2.0, 4.0, 0.05, 10, 4, method="fast")
