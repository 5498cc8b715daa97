"""Persistent background contention (sim_bridge.world._persistence): the statistics against
loops and closed forms, the generator's continuity and determinism, the forward model against
simulation, and the fit on the real Alibaba 2018 machine series (skipped without the data)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge._alibaba2018 import MACHINE_USAGE_FILE, load_machine_levels
from sim_bridge.world._persistence import (
    DEFAULT_PERSISTENCE,
    PersistenceParams,
    PersistentLevels,
    autocorrelation,
    between_machine_share,
    expected_statistics,
    fit_persistence,
    observed_statistics,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LAGS_MIN = (5, 20, 60)  # the lags of the reported fidelity facts (dt = 60 s: steps = minutes)
FIDELITY_BAND = 0.1  # the band the project reports for ACF and between-machine share


def _params(**per_resource) -> PersistenceParams:
    base = dict(
        logit_mean=0.0, between_sd=0.5, within_sd=0.5, slow_weight=0.6, t_slow=6000.0,
        t_fast=120.0,
    )  # fmt: skip
    base.update(per_resource)
    return PersistenceParams(**{k: (v,) * 4 if np.isscalar(v) else v for k, v in base.items()})


def _run(params: PersistenceParams, n_nodes: int, n_steps: int, seed=(0,), block=1440):
    g = PersistentLevels(params, n_nodes, seed)
    n_blocks = -(-n_steps // block)
    return np.concatenate([g.block(b, block) for b in range(n_blocks)], axis=2)[:, :, :n_steps]


# ------------------------------------------------------------------------------ statistics
def _acf_loops(x: np.ndarray, lags, center: str) -> list[float]:
    m, n = x.shape
    grand = sum(x[i, t] for i in range(m) for t in range(n)) / (m * n)
    mu = [sum(x[i]) / n if center == "machine" else grand for i in range(m)]
    var = sum((x[i, t] - mu[i]) ** 2 for i in range(m) for t in range(n)) / (m * n)
    out = []
    for k in lags:
        s = sum((x[i, t] - mu[i]) * (x[i, t + k] - mu[i]) for i in range(m) for t in range(n - k))
        out.append(s / (m * (n - k)) / var)
    return out


@pytest.mark.parametrize("center", ["machine", "grand"])
def test_autocorrelation_matches_loops(center):
    rng = np.random.default_rng(3)
    x = rng.random((5, 40)) + rng.random((5, 1))  # machines with different means
    lags = [0, 1, 3, 7, 39]
    got = autocorrelation(x, lags, center=center)
    np.testing.assert_allclose(got, _acf_loops(x, lags, center), rtol=1e-12, atol=1e-12)


def test_between_share_matches_loops():
    x = np.random.default_rng(4).random((6, 30)) * np.arange(1, 7)[:, None]
    m, n = x.shape
    grand = x.sum() / (m * n)
    means = [sum(x[i]) / n for i in range(m)]
    between = sum((mu - grand) ** 2 for mu in means) / m
    total = sum((x[i, t] - grand) ** 2 for i in range(m) for t in range(n)) / (m * n)
    assert between_machine_share(x) == pytest.approx(between / total, rel=1e-12)
    within = sum((x[i, t] - means[i]) ** 2 for i in range(m) for t in range(n)) / (m * n)
    assert between + within == pytest.approx(total, rel=1e-12)  # the share's decomposition


def test_statistics_reject_bad_input():
    with pytest.raises(ValueError, match="lags"):
        autocorrelation(np.zeros((2, 5)), [5])
    with pytest.raises(ValueError, match="center"):
        autocorrelation(np.ones((2, 5)), [1], center="node")
    assert math.isnan(between_machine_share(np.ones((2, 4))))


def test_ar1_acf_is_phi_to_the_lag():
    # a Gaussian AR(1) with known phi, written as its recursion: acf(k) = phi ** k
    phi, n_machines, n_steps = 0.9, 40, 20000
    rng = np.random.default_rng(5)
    eps = rng.standard_normal((n_steps, n_machines)) * math.sqrt(1 - phi**2)
    x = np.empty((n_steps, n_machines))
    x[0] = rng.standard_normal(n_machines)
    for t in range(1, n_steps):
        x[t] = phi * x[t - 1] + eps[t]
    lags = np.array([1, 2, 5, 10, 20])
    # own-mean centring biases by about -(1 + phi) / (1 - phi) / n_steps = -0.001; sampling
    # sd of the pooled estimate is ~0.005 at these lags
    np.testing.assert_allclose(autocorrelation(x.T, lags), phi**lags, atol=0.02)


def test_generator_single_component_is_ou():
    # one OU component (w = 1) of small latent sd: expit is nearly linear there, so the level
    # ACF is the OU's exp(-lag dt / T) = phi ** lag with phi = exp(-dt / T)
    t_slow = 600.0
    p = _params(logit_mean=0.0, between_sd=0.3, within_sd=0.05, slow_weight=1.0, t_slow=t_slow)
    x = _run(p, 64, 4 * 1440)
    lags = np.array([1, 5, 10, 20])
    phi = math.exp(-60.0 / t_slow)
    for r in range(4):
        np.testing.assert_allclose(autocorrelation(x[r], lags), phi**lags, atol=0.03)


# ------------------------------------------------------------------------------ generator
def test_generator_is_deterministic_and_pure():
    p = DEFAULT_PERSISTENCE
    g = PersistentLevels(p, 5, (11, 505))
    b0, b1 = g.block(0, 300), g.block(1, 300)
    h = PersistentLevels(p, 5, (11, 505))
    assert np.array_equal(h.block(0, 300), b0) and np.array_equal(h.block(1, 300), b1)
    assert np.array_equal(g.block(0, 300), b0)  # an earlier block asked again
    assert not np.array_equal(PersistentLevels(p, 5, (12, 505)).block(0, 300), b0)
    with pytest.raises(ValueError, match="in order"):
        PersistentLevels(p, 5, (11, 505)).block(2, 300)


def test_blocks_continue_the_path():
    # a slow component: the first step of block 1 is next to the last one of block 0
    slow = _params(between_sd=1.0, within_sd=1.0, slow_weight=1.0, t_slow=1e6)
    g = PersistentLevels(slow, 200, (1,))
    b0, b1 = g.block(0, 1440), g.block(1, 1440)
    jump = np.abs(b1[:, :, 0] - b0[:, :, -1])
    assert jump.max() < 0.05
    # an independent restart would jump by the within-node spread
    restart = np.abs(PersistentLevels(slow, 200, (2,)).block(0, 1)[:, :, 0] - b0[:, :, -1])
    assert restart.mean() > 5 * jump.mean()


def test_block_boundaries_are_ordinary_steps():
    # with the defaults, the step across a block boundary has the distribution of any other
    # step, and short blocks give the statistics of one long block
    p, n_nodes = DEFAULT_PERSISTENCE, 256
    x = _run(p, n_nodes, 8 * 240, block=240)
    steps = np.abs(np.diff(x, axis=2))
    at_boundary = steps[:, :, 239::240].mean(axis=(1, 2))
    inside = steps.mean(axis=(1, 2))
    np.testing.assert_allclose(at_boundary, inside, rtol=0.12)
    one = PersistentLevels(p, n_nodes, (0,)).block(0, 8 * 240)
    lags = [1, 5, 20, 60]
    for r in range(4):
        np.testing.assert_allclose(
            autocorrelation(x[r], lags), autocorrelation(one[r], lags), atol=0.06
        )


@given(
    mean=st.floats(-12.0, 12.0),
    between=st.floats(0.0, 8.0),
    within=st.floats(0.0, 8.0),
    w=st.floats(0.0, 1.0),
    t_slow=st.floats(1.0, 1e7),
    t_fast=st.floats(1.0, 1e7),
    n_nodes=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=60, deadline=None)
def test_levels_stay_in_unit_interval(mean, between, within, w, t_slow, t_fast, n_nodes, seed):
    p = _params(logit_mean=mean, between_sd=between, within_sd=within, slow_weight=w,
                t_slow=t_slow, t_fast=t_fast)  # fmt: skip
    g = PersistentLevels(p, n_nodes, (seed, 7))
    for b in range(2):
        x = g.block(b, 50)
        assert x.shape == (4, n_nodes, 50)
        assert np.all(np.isfinite(x)) and x.min() >= 0.0 and x.max() <= 1.0


def test_params_are_validated():
    with pytest.raises(ValueError, match="slow_weight"):
        _params(slow_weight=1.5)
    with pytest.raises(ValueError, match="t_fast"):
        _params(t_fast=0.0)
    with pytest.raises(ValueError, match="4 finite"):
        PersistenceParams(*[(1.0, 1.0, 1.0)] * 6)


# ------------------------------------------------------------------------------ model and fit
def test_expected_statistics_match_a_long_simulation():
    # the quadrature and the finite-length formulas against the generator itself
    p, n_steps = DEFAULT_PERSISTENCE, 4 * 1440
    x = _run(p, 512, n_steps, seed=(9,))
    lags = [1, 5, 20, 60, 240]
    sim = observed_statistics(x, lags)
    model = expected_statistics(p, lags, n_steps, 512)
    np.testing.assert_allclose(sim.acf, model.acf, atol=0.03)
    total_sd = model.within_sd / np.sqrt(1.0 - model.between_share)  # node means dominate
    assert np.all(np.abs(sim.mean - model.mean) < 4.0 * total_sd / math.sqrt(512))
    np.testing.assert_allclose(sim.within_sd, model.within_sd, rtol=0.06)
    np.testing.assert_allclose(sim.between_share, model.between_share, atol=0.05)


TRUTH = PersistenceParams(
    logit_mean=(-0.7, 2.0, -3.0, -0.5),
    between_sd=(0.6, 0.4, 0.4, 0.3),
    within_sd=(0.6, 0.5, 0.8, 0.3),
    slow_weight=(0.7, 0.8, 0.5, 0.6),
    t_slow=(12000.0, 24000.0, 9000.0, 30000.0),
    t_fast=(180.0, 450.0, 160.0, 600.0),
)


@pytest.fixture(scope="module")
def synthetic_fit() -> tuple[np.ndarray, PersistenceParams]:
    x = _run(TRUTH, 96, 8 * 1440, seed=(21,))
    return x, fit_persistence(x)


def test_fit_recovers_known_parameters(synthetic_fit):
    x, fit = synthetic_fit
    for r in range(4):
        assert fit.slow_weight[r] == pytest.approx(TRUTH.slow_weight[r], abs=0.1)
        assert fit.t_fast[r] == pytest.approx(TRUTH.t_fast[r], rel=0.3)
        assert fit.t_slow[r] == pytest.approx(TRUTH.t_slow[r], rel=0.5)
        assert fit.within_sd[r] == pytest.approx(TRUTH.within_sd[r], rel=0.15)
        assert fit.logit_mean[r] == pytest.approx(TRUTH.logit_mean[r], abs=0.2)
    # and its expected statistics are those observed
    lags = list(LAGS_MIN)
    obs, exp = observed_statistics(x, lags), expected_statistics(fit, lags, x.shape[2], 96)
    np.testing.assert_allclose(exp.acf, obs.acf, atol=0.02)
    np.testing.assert_allclose(exp.between_share, obs.between_share, atol=0.02)


def test_fit_is_deterministic(synthetic_fit):
    x, fit = synthetic_fit
    assert fit_persistence(x.copy()) == fit


def test_fit_drops_a_component_it_cannot_see():
    # one OU component: the fit returns w = 1 and t_fast = t_slow, not an arbitrary t_fast
    p = _params(slow_weight=1.0, t_slow=3000.0, t_fast=3000.0, within_sd=0.4)
    fit = fit_persistence(_run(p, 64, 4 * 1440, seed=(8,)))
    assert fit.slow_weight == (1.0,) * 4 and fit.t_fast == fit.t_slow
    assert all(abs(t / 3000.0 - 1) < 0.3 for t in fit.t_slow)


# ------------------------------------------------------------------------------ real data
@pytest.fixture(scope="module")
def real_levels() -> np.ndarray:
    path = DATA / MACHINE_USAGE_FILE
    if not path.is_file():
        pytest.skip(f"no Alibaba 2018 machine series at {path}")
    return load_machine_levels(path, 60.0)[1]


@pytest.fixture(scope="module")
def real_fit(real_levels) -> PersistenceParams:
    return fit_persistence(real_levels, dt=60.0)


def test_reported_cpu_persistence_is_within_machine(real_levels):
    # the facts 0.71, 0.60, 0.51 at 5, 20, 60 min are the within-machine ACF; centred on the
    # grand mean the between-machine variance lifts every lag well above them
    facts = [0.71, 0.60, 0.51]
    within = autocorrelation(real_levels[0], list(LAGS_MIN), center="machine")
    grand = autocorrelation(real_levels[0], list(LAGS_MIN), center="grand")
    np.testing.assert_allclose(within, facts, atol=0.02)
    assert np.all(grand > np.array(facts) + 0.1)


def test_fitted_source_reproduces_the_real_series(real_levels, real_fit):
    # simulated at the real series' length (the within-machine statistics of a slow process
    # depend on the span each machine is centred over), on many more nodes than the 16 real
    # machines so that the simulated share is not itself a 16-sample estimate
    n_steps = real_levels.shape[2]
    x = _run(real_fit, 256, n_steps, seed=(2018, 505))
    real = observed_statistics(real_levels, list(LAGS_MIN))
    sim = observed_statistics(x, list(LAGS_MIN))
    np.testing.assert_allclose(sim.acf, real.acf, atol=FIDELITY_BAND)
    np.testing.assert_allclose(sim.between_share, real.between_share, atol=FIDELITY_BAND)
    sampling = np.sqrt(real_levels.var(axis=(1, 2)) / 256 + real_levels.var(axis=(1, 2)) / 16)
    assert np.all(np.abs(sim.mean - real.mean) < 3.0 * sampling)
    np.testing.assert_allclose(sim.within_sd, real.within_sd, rtol=0.25)
    # the model's own expectation at the real length and machine count is much closer
    model = expected_statistics(real_fit, list(LAGS_MIN), n_steps, real_levels.shape[1])
    np.testing.assert_allclose(model.acf, real.acf, atol=0.03)
    np.testing.assert_allclose(model.between_share, real.between_share, atol=0.01)


def test_defaults_are_the_rounded_fit(real_fit):
    # DEFAULT_PERSISTENCE is fit_persistence on the real subset to 2 significant figures:
    # each constant is within half a unit of its 2nd significant digit of the fit (with 10%
    # slack, so that a fit sitting on a rounding boundary may round either way)
    assert real_fit.rounded(2) == DEFAULT_PERSISTENCE or _within_rounding(real_fit)


def _within_rounding(fit: PersistenceParams) -> bool:
    for name in PersistenceParams.__dataclass_fields__:
        for d, f in zip(getattr(DEFAULT_PERSISTENCE, name), getattr(fit, name), strict=True):
            unit = 10 ** (math.floor(math.log10(abs(d))) - 1) if d else 1e-12
            if abs(d - f) > 0.55 * unit:
                raise AssertionError(f"{name}: default {d} is not the fit {f} to 2 digits")
    return True
