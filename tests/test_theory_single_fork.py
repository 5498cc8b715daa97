"""Seed 002 (single-fork replication): closed forms vs quadrature vs Monte Carlo, Lemma 1,
the bootstrap estimator and the policy chooser."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from sim_bridge.theory import (
    bootstrap_single_fork,
    choose_single_fork_policy,
    keep_or_kill,
    pareto_single_fork,
    shifted_exp_single_fork,
    single_fork_analytic,
)

SHIFTED_EXP = stats.expon(loc=1.0, scale=1.0)  # ShiftedExp(1, 1)
PARETO = stats.pareto(b=2.0, scale=2.0)  # Pareto(2, 2)


def monte_carlo(dist, p, r, keep, n, reps, seed):
    """Obvious vectorised simulation of Definition 1; returns means and standard errors."""
    rng = np.random.default_rng(seed)
    m = round(p * n)
    k = n - m
    x = np.sort(dist.ppf(rng.random((reps, n))), axis=1)
    t1 = x[:, k - 1]
    n_new = r if keep else r + 1
    y = dist.ppf(rng.random((reps, m, n_new))).min(axis=2) if n_new else np.inf
    if keep:
        y = np.minimum(y, x[:, k:] - t1[:, None])  # the original keeps running
    latency = t1 + y.max(axis=1)
    cost = (x[:, :k].sum(axis=1) + m * t1 + (r + 1) * y.sum(axis=1)) / n
    se = lambda v: v.std(ddof=1) / math.sqrt(reps)  # noqa: E731
    return latency.mean(), se(latency), cost.mean(), se(cost)


CASES = [
    (d, p, r, keep)
    for d in (SHIFTED_EXP, PARETO)
    for p, r, keep in [
        (0.1, 1, True),
        (0.3, 2, True),
        (0.1, 0, False),
        (0.3, 1, False),
        (0.1, 2, False),
    ]
]


@pytest.mark.parametrize(("dist", "p", "r", "keep"), CASES)
def test_exact_matches_monte_carlo(dist, p, r, keep):
    n, reps = 200, 1500
    lat, lat_se, cost, cost_se = monte_carlo(dist, p, r, keep, n, reps, seed=7)
    e_lat, e_cost = single_fork_analytic(dist, p, r, keep, n, method="exact")
    # 10 cases x 2 metrics; 4.5 standard errors keeps the family-wise false alarm < 1e-4
    assert abs(lat - e_lat) < 4.5 * lat_se
    assert abs(cost - e_cost) < 4.5 * cost_se


@pytest.mark.parametrize(("dist", "p", "r", "keep"), CASES)
def test_theorem1_is_the_large_n_limit_of_the_exact_value(dist, p, r, keep):
    gaps = []
    for n in (100, 1000, 10000):
        a = single_fork_analytic(dist, p, r, keep, n, method="exact")
        b = single_fork_analytic(dist, p, r, keep, n, method="integral")
        gaps.append(abs(a[0] - b[0]) / b[0] + abs(a[1] - b[1]) / b[1])
    assert gaps[2] < gaps[0]
    assert gaps[2] < 1e-2


def test_quadrature_matches_known_order_statistics():
    # exponential maximum: E[max of n Exp(mu)] = H_n / mu; Pareto: Gamma-function ratio
    n = 321
    lat, cost = single_fork_analytic(stats.expon(scale=0.5), 0.0, 0, True, n, method="integral")
    assert lat == pytest.approx(0.5 * np.sum(1.0 / np.arange(1, n + 1)), rel=1e-10)
    assert cost == pytest.approx(0.5, rel=1e-10)
    a, xm = 2.5, 1.5
    lat, _ = single_fork_analytic(stats.pareto(b=a, scale=xm), 0.0, 0, True, n, method="integral")
    exact = xm * math.exp(
        special.gammaln(n + 1) + special.gammaln(1 - 1 / a) - special.gammaln(n + 1 - 1 / a)
    )
    assert lat == pytest.approx(exact, rel=1e-8)
    # a distribution without closed form: scipy.integrate.quad as the slow oracle
    d = stats.lognorm(s=0.8, scale=2.0)
    lat, cost = single_fork_analytic(d, 0.0, 0, True, 50, method="integral")
    oracle, _ = integrate.quad(lambda y: 1 - d.cdf(y) ** 50, 0, np.inf, limit=500)
    assert lat == pytest.approx(oracle, rel=1e-7)
    assert cost == pytest.approx(d.mean(), rel=1e-8)


@pytest.mark.parametrize(
    ("p", "r", "keep"), list(itertools.product([0.05, 0.1, 0.3, 0.6], [0, 1, 3], [True, False]))
)
def test_theorem2_closed_form_vs_theorem1_integral(p, r, keep):
    delta, mu, n = 1.0, 1.0, 400
    d = stats.expon(loc=delta, scale=1 / mu)
    c_lat, c_cost = single_fork_analytic(d, p, r, keep, n, method="closed")
    i_lat, i_cost = single_fork_analytic(d, p, r, keep, n, method="integral")
    assert (c_lat, c_cost) == shifted_exp_single_fork(delta, mu, p, r, keep, n)
    # the cost of Theorem 1 has no extreme-value step: closed form is exact
    assert c_cost == pytest.approx(i_cost, rel=1e-9)
    # Gumbel step: H_N - ln N - gamma <= 1/(2N) for the exponential part of Y, plus the
    # mass of max Y below delta (keep only), bounded by delta (1 - e^{-mu delta})^N
    big_n, a = p * n, (r + 1) * mu
    bound = 1 / (2 * big_n * a) + (delta * (1 - math.exp(-mu * delta)) ** big_n if keep else 0)
    assert abs(c_lat - i_lat) <= bound + 1e-9


@pytest.mark.parametrize(("p", "r"), [(0.1, 1), (0.3, 2), (0.6, 0)])
def test_paper_eq11_cost_is_off_by_p_delta(p, r):
    # eq. 11 as printed adds p * delta (eq. 51 integrates delta over [0, 1-p] as delta(1+p))
    delta, mu, n = 1.0, 1.0, 400
    d = stats.expon(loc=delta, scale=1 / mu)
    for keep in (True, False):
        paper = (
            delta
            + 1 / mu
            + (p * (delta + r * (1 - math.exp(-mu * delta)) / mu) if keep else p * (r + 2) * delta)
        )
        mc = monte_carlo(d, p, r, keep, n, 600, seed=3)
        assert abs(paper - mc[2]) > 10 * mc[3]
        assert paper - shifted_exp_single_fork(delta, mu, p, r, keep, n)[1] == pytest.approx(
            p * delta
        )


@pytest.mark.parametrize(
    ("p", "r", "keep"), list(itertools.product([0.05, 0.2, 0.5], [0, 1, 2], [True, False]))
)
def test_theorem3_closed_form_vs_theorem1_integral(p, r, keep):
    n = 400
    c_lat, c_cost = single_fork_analytic(PARETO, p, r, keep, n, method="closed")
    i_lat, i_cost = single_fork_analytic(PARETO, p, r, keep, n, method="integral")
    assert (c_lat, c_cost) == pareto_single_fork(2.0, 2.0, p, r, keep, n)
    assert c_cost == pytest.approx(i_cost, rel=1e-7)
    if not keep:
        # kill: Y ~ Pareto((r+1) alpha, xm); Frechet step error is the Gamma-ratio error
        big_n, beta = p * n, (r + 1) * 2.0
        exact_max = 2.0 * math.exp(
            special.gammaln(big_n + 1)
            + special.gammaln(1 - 1 / beta)
            - special.gammaln(big_n + 1 - 1 / beta)
        )
        assert i_lat == pytest.approx(2.0 * p**-0.5 + exact_max, rel=1e-8)


def test_theorem3_keep_latency_converges_to_integral():
    # the Frechet limit ignores the location of the kept original's residual: slow in n
    errs = []
    for n in (400, 10**4, 10**6):
        c = single_fork_analytic(PARETO, 0.1, 1, True, n, method="closed")[0]
        i = single_fork_analytic(PARETO, 0.1, 1, True, n, method="integral")[0]
        errs.append(abs(c / i - 1))
    assert errs[0] > errs[1] > errs[2]


def test_auto_method_dispatch():
    d = stats.lognorm(s=0.5)
    assert single_fork_analytic(d, 0.1, 1, True, 100) == single_fork_analytic(
        d, 0.1, 1, True, 100, method="integral"
    )
    assert single_fork_analytic(PARETO, 0.1, 1, True, 100) == pareto_single_fork(
        2, 2, 0.1, 1, True, 100
    )
    # positional args and a loc keyword both detected
    assert single_fork_analytic(stats.expon(2.0, 0.5), 0.1, 1, False, 100) == (
        shifted_exp_single_fork(2.0, 2.0, 0.1, 1, False, 100)
    )
    with pytest.raises(ValueError, match="method='closed'"):
        single_fork_analytic(d, 0.1, 1, True, 100, method="closed")


@pytest.mark.parametrize("p", [0.05, 0.2, 0.5])
def test_lemma1_against_the_closed_forms_and_integrals(p):
    assert keep_or_kill(SHIFTED_EXP, p) == "keep"
    for r in (0, 1, 3):
        keep = shifted_exp_single_fork(1.0, 1.0, p, r, True, 400)
        kill = shifted_exp_single_fork(1.0, 1.0, p, r, False, 400)
        assert keep[0] < kill[0] and keep[1] < kill[1]
    # Lomax (decreasing hazard): the kept original's residual is longer -> kill is better
    lomax = stats.lomax(c=3.0, scale=2.0)
    assert keep_or_kill(lomax, p) == "kill"
    for r in (0, 1, 3):
        keep = single_fork_analytic(lomax, p, r, True, 400)
        kill = single_fork_analytic(lomax, p, r, False, 400)
        assert kill[0] < keep[0] and kill[1] < keep[1]
    # memoryless: both residuals have the same law
    exp = stats.expon(scale=2.0)
    assert keep_or_kill(exp, p) == "equal"
    a = single_fork_analytic(exp, p, 2, True, 400, method="integral")
    b = single_fork_analytic(exp, p, 2, False, 400, method="integral")
    assert a == pytest.approx(b, rel=1e-9)
    assert keep_or_kill(PARETO, p) == "neither"


def test_bootstrap_agrees_with_exact_value():
    # independent sample sets; their spread covers both the plug-in and resampling error
    n, p, r = 200, 0.1, 1
    for keep in (True, False):
        est = np.array(
            [
                bootstrap_single_fork(
                    SHIFTED_EXP.rvs(40_000, random_state=s), p, r, keep, n, n_boot=400, seed=s
                )
                for s in range(8)
            ]
        )
        truth = np.array(single_fork_analytic(SHIFTED_EXP, p, r, keep, n, method="exact"))
        se = est.std(axis=0, ddof=1) / math.sqrt(len(est))
        # t distribution with 7 d.o.f.: 5.4 = two-sided 0.999 quantile
        assert np.all(np.abs(est.mean(axis=0) - truth) < 5.4 * se)


def test_bootstrap_is_deterministic_and_validates():
    x = PARETO.rvs(3000, random_state=1)
    a = bootstrap_single_fork(x, 0.1, 2, True, 100, n_boot=50, seed=5, with_se=True)
    b = bootstrap_single_fork(x, 0.1, 2, True, 100, n_boot=50, seed=5, with_se=True)
    c = bootstrap_single_fork(x, 0.1, 2, True, 100, n_boot=50, seed=6, with_se=True)
    assert a == b and a != c
    assert a.latency_se > 0 and a.cost_se > 0
    bad = x.copy()
    bad[17] = np.nan
    with pytest.raises(ValueError, match=r"samples\[17\]"):
        bootstrap_single_fork(bad, 0.1, 1, True, 100)
    with pytest.raises(ValueError, match="p \\* n"):
        bootstrap_single_fork(x, 0.123, 1, True, 100)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"p": 1.0}, "p must lie"),
        ({"p": -0.1}, "p must lie"),
        ({"r": -1}, "r must be"),
        ({"r": 1.5}, "r must be"),
        ({"n": 0}, "n must be"),
        ({"keep": "yes"}, "keep must be"),
        ({"method": "fast"}, "method must be"),
    ],
)
def test_analytic_rejects_bad_parameters(kwargs, match):
    args = {"dist": SHIFTED_EXP, "p": 0.1, "r": 1, "keep": True, "n": 100} | kwargs
    with pytest.raises(ValueError, match=match):
        single_fork_analytic(**args)


def test_analytic_rejects_negative_support_and_infinite_mean():
    with pytest.raises(ValueError, match="lower support"):
        single_fork_analytic(stats.norm(), 0.1, 1, True, 100)
    with pytest.raises(ValueError, match="finite mean"):
        single_fork_analytic(stats.pareto(b=0.9), 0.1, 1, True, 100)


def brute_force_choice(table, objective, r_max, lam, n):
    base_lat, base_cost = table[(0.0, 0, True)]
    best = None
    for (p, r, keep), (lat, cost) in table.items():
        if r > r_max or (p > 0 and r == 0 and keep):
            continue
        if objective == "latency" and cost > base_cost:
            continue
        val = lat if objective == "latency" else lat + lam * n * cost
        if best is None or val < best[0]:
            best = (val, lat, cost)
    return best


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(
        st.tuples(st.floats(1, 100), st.floats(1, 10)),
        min_size=3 * 3 * 2 + 1,
        max_size=3 * 3 * 2 + 1,
    ),
    objective=st.sampled_from(["latency", "cost"]),
    r_max=st.integers(0, 2),
    lam=st.floats(0, 1),
)
def test_chooser_matches_brute_force(values, objective, r_max, lam):
    ps = [0.1, 0.2, 0.3]
    keys = [(0.0, 0, True)] + list(itertools.product(ps, range(3), [True, False]))
    table = dict(zip(keys, values, strict=True))
    choice, grid = choose_single_fork_policy(
        lambda p, r, k: table[(p, r, k)], objective, p_grid=ps, r_max=r_max, lam=lam, n=50
    )
    best = brute_force_choice(table, objective, r_max, lam, 50)
    assert choice.objective == pytest.approx(best[0])
    assert table[(choice.p, choice.r, choice.keep)] == (choice.latency, choice.cost)
    assert choice.r <= r_max
    if objective == "latency":
        assert choice.cost <= table[(0.0, 0, True)][1]
    assert len(grid) == 1 + len(ps) * (2 * r_max + 1)


def test_chooser_on_closed_forms_beats_baseline_and_rejects_bad_input():
    est = lambda p, r, k: single_fork_analytic(PARETO, p, r, k, 400)  # noqa: E731
    choice, grid = choose_single_fork_policy(est, "latency", r_max=2)
    base = grid.iloc[0]
    assert choice.latency < base.latency and choice.cost <= base.cost
    cheap, _ = choose_single_fork_policy(est, "cost", r_max=2, lam=1.0, n=400)
    assert cheap.cost <= choice.cost
    with pytest.raises(ValueError, match="lam"):
        choose_single_fork_policy(est, "cost")
    with pytest.raises(ValueError, match="objective"):
        choose_single_fork_policy(est, "speed")
