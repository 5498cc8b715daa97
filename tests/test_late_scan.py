"""LATE's fast scan equals the obvious one: the percentile helper against ``np.quantile`` bit
for bit, the compiled scan's order statistic against ``sorted``, and whole simulations
against a reference LATE that scans with NumPy per job."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from sim_bridge import JobSpec, Workload
from sim_bridge.policies import LATE
from sim_bridge.policies._speculation import _Durations, _quantile_linear

try:
    from sim_bridge._progress_core import kth_of_two as _kth_of_two
except ImportError:  # pragma: no cover - an install without a C compiler
    _kth_of_two = None

_value = st.one_of(
    st.floats(min_value=-1.0, max_value=1e3, allow_nan=False),
    st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, 1e-300, 5e-324, math.inf]),
)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@settings(max_examples=400, deadline=None)
@given(
    rates=st.lists(_value, min_size=0, max_size=12),
    done=st.lists(st.floats(min_value=1e-3, max_value=1e4), max_size=40),
    q=st.one_of(st.floats(min_value=0.0, max_value=1.0), st.sampled_from([0, 1, 0.25, 0.5])),
)
def test_quantile_linear_equals_numpy(rates, done, q):
    inv = sorted((1.0 / np.asarray(done)).tolist())
    if not rates and not inv:
        return
    with np.errstate(invalid="ignore"):  # inf - inf in both
        got = _quantile_linear(rates, inv, q)
        want = float(np.quantile(np.concatenate([np.asarray(rates, dtype=float), inv]), q))
    assert _same(got, want), (got, want)
    assert math.copysign(1.0, got) == math.copysign(1.0, want) or got == 0.0


@pytest.mark.parametrize("bad", [math.nan, -math.inf])
def test_quantile_linear_non_finite_rates_fall_back_to_numpy(bad):
    rates, inv = [0.1, bad, 0.3, math.inf], [0.01, 0.02]
    with np.errstate(invalid="ignore"):
        got = _quantile_linear(rates, inv, 0.25)
        want = float(np.quantile(np.asarray(rates + inv), 0.25))
    assert _same(got, want)


def test_quantile_linear_does_not_modify_inputs():
    rates, inv = [0.3, 0.1, 0.2], [0.05, 0.4]
    _quantile_linear(rates, inv, 0.25)
    assert rates == [0.3, 0.1, 0.2] and inv == [0.05, 0.4]


def _reference_ranked(pol: LATE, view) -> list:
    """LATE's ranking, scanned the obvious way: per job, NumPy progress and ``np.quantile``."""
    now = view.now
    ranked = []
    for job in view.active_jobs():
        live = [a for a in job.running.values() if a.task.stage == job.stage]
        if not any(now - a.launch_time >= pol.min_elapsed for a in live):
            continue
        durs = pol._stage_durations(job)
        if len(live) + len(durs) < 2:
            continue
        prog = view.progress_many(live)
        rates = [
            (p - a.start_fraction) / (now - a.launch_time) if now > a.launch_time else 0.0
            for a, p in zip(live, prog, strict=True)
        ]
        done = durs.sorted()
        pool = np.concatenate([rates, 1.0 / done[done > 0]])
        cut = float(np.quantile(pool, pol.slow_task_threshold))
        for a, p, r in zip(live, prog, rates, strict=True):
            if (
                len(a.task.live) != 1
                or now - a.launch_time < pol.min_elapsed
                or r >= cut
                or r <= 0.0
            ):
                continue
            ranked.append(((1.0 - p) / r, a.uid, a))
    ranked.sort(key=lambda x: (-x[0], x[1]))
    return ranked


class _CheckedLATE(LATE):
    """LATE that checks, at every scan, its ranking against the reference scan."""

    name = "_checked_late"

    def reset(self) -> None:
        super().reset()
        self.scans_ = self.ranked_ = 0

    def _ranked(self, view):
        fast = super()._ranked(view)
        ref = _reference_ranked(self, view)
        assert [(float(e), u) for e, u, _a in ref] == [(e, u) for e, u, _a in fast]
        assert all(type(e) is float for e, _u, _a in fast)
        self.scans_ += 1
        self.ranked_ += len(fast)
        return fast


def _mixed(seed: int) -> Workload:
    """40 jobs of 2-60 maps and 0-4 reduces of uneven work, heavy-tailed noise."""
    rng = np.random.default_rng(seed)
    jobs, t = [], 0.0
    for i in range(40):
        t += float(rng.exponential(15.0))
        maps = rng.uniform(5.0, 40.0, int(rng.integers(2, 60)))
        reds = rng.uniform(5.0, 30.0, int(rng.integers(0, 5)))
        jobs.append(JobSpec(f"m{i}", t, maps, reds, workload="MIX"))
    return Workload("MIX", jobs, tail_alpha=1.8)


@pytest.mark.parametrize(
    ("seed", "params"),
    [
        (0, {}),
        (1, {"slow_task_threshold": 0.5, "speculative_cap": 0.3, "min_elapsed": 0.0}),
        (2, {"slow_task_threshold": 0.1, "interval": 2.0}),
        (3, {"slow_task_threshold": 1.0, "slow_node_threshold": 0.5}),
    ],
)
def test_late_ranking_equals_reference_at_every_scan(seed, params):
    w = _mixed(seed)
    kw = dict(nodes=12, slots=2, seed=seed, progress=False, record_counters=False)
    pol = _CheckedLATE(**params)
    r = sim_bridge.simulate(w, pol, **kw)
    assert pol.scans_ >= 10 and pol.ranked_ > 0  # the comparison saw real rankings
    plain = sim_bridge.simulate(w, LATE(**params), **kw)
    assert plain.summary["attempts"] == r.summary["attempts"] > r.summary["tasks"]
    for table in ("tasks", "jobs"):
        a, b = getattr(plain, table), getattr(r, table)
        assert a.shape == b.shape
        for col in a.columns:
            x, y = a[col].to_numpy(), b[col].to_numpy()
            if x.dtype.kind == "f":
                assert np.array_equal(x.view(np.int64), y.view(np.int64)), (table, col)
            else:
                assert x.tolist() == y.tolist(), (table, col)


@pytest.mark.skipif(_kth_of_two is None, reason="not built")
@settings(max_examples=400, deadline=None)
@given(
    rates=st.one_of(
        st.lists(_value.filter(lambda x: not math.isinf(x)), min_size=1, max_size=12),
        # past the insertion sort's 16 values, with many ties (unstarted attempts' 0.0)
        st.lists(st.sampled_from([0.0, -0.0, 0.5, 0.25, 1e-3, 7.0]), min_size=17, max_size=300),
        st.lists(st.floats(0.0, 1.0), min_size=17, max_size=300),
    ),
    done=st.lists(st.floats(min_value=0.0, max_value=1e4), max_size=40),
    data=st.data(),
)
def test_the_order_statistic_of_two_sorted_runs_is_sorteds(rates, done, data):
    """``late_scan``'s cut sorts a job's rates and picks ``sorted(rates + done)[k]`` by
    bisection over the two sorted runs (ties and signed zeros included: equal values compare
    equal either way)."""
    done = sorted(done)
    k = data.draw(st.integers(0, len(rates) + len(done) - 1))
    assert _kth_of_two(rates, done, k) == sorted(rates + done)[k]
    with pytest.raises(IndexError, match="out of range"):
        _kth_of_two(rates, done, len(rates) + len(done))


@pytest.mark.skipif(_kth_of_two is None, reason="not built")
@settings(max_examples=400, deadline=None)
@given(
    rates=st.lists(_value.filter(lambda x: not math.isinf(x)), min_size=1, max_size=40),
    done=st.lists(
        st.one_of(st.floats(min_value=1e-300, max_value=1e6), st.sampled_from([0.5, 2.0, 3.0])),
        max_size=60,
    ),
    data=st.data(),
)
def test_the_order_statistic_with_inverses_read_as_needed_is_sorteds(rates, done, data):
    """The scan reads a stage's inverse rates from its ascending positive run times, dividing
    as it reads: the same floats as ``_Durations.inverse_array``'s NumPy division, so the same
    order statistic as ``sorted`` over the rates and those inverses."""
    done = sorted(done)
    inv = (1.0 / np.asarray(done, dtype=float))[::-1].tolist()
    k = data.draw(st.integers(0, len(rates) + len(done) - 1))
    assert _kth_of_two(rates, done, k, inverse=True) == sorted(rates + inv)[k]


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.one_of(st.just(0.0), st.floats(1e-300, 1e5)), max_size=400),
    data=st.data(),
)
def test_durations_keep_what_a_record_of_every_value_gives(values, data):
    """``_Durations`` keeps a snapshot and the values since, not every value: each snapshot
    equals the sort of every value added by then, taken where the 2% rule takes it; the
    count, mean and sd are the running ones; the inverse rates are NumPy's."""
    d = _Durations()
    seen: list[float] = []
    n_snap = 0
    total = total_sq = 0.0
    for v in values:
        d.add(v)
        seen.append(v)
        total += v
        total_sq += v * v
        if data.draw(st.booleans()):  # read now or not: reads drive the refresh
            n = len(seen)
            if n != n_snap and (n < 50 or n - n_snap >= 0.02 * n_snap):
                n_snap = n
            want = np.sort(np.asarray(seen[:n_snap]))
            got = d.sorted()
            assert got.tobytes() == want.tobytes()
            inv = d.inverse_array()
            assert inv.tobytes() == np.ascontiguousarray((1.0 / want[want > 0])[::-1]).tobytes()
            assert d.inverse_rates() == inv.tolist() and d.sorted_view().tolist() == want.tolist()
    assert len(d) == len(values)
    if values:
        assert d.mean() == total / len(values)
        m = total / len(values)
        assert d.std() == math.sqrt(max(total_sq / len(values) - m * m, 0.0))


class _StageCheckedLATE(LATE):
    """LATE that checks, at every scan, what ``late_scan`` relies on to not filter a job's
    running attempts by stage: they are all of the job's stage."""

    checked_ = 0

    def on_tick(self, view):
        for job in view.active_jobs():
            for a in job.running.values():
                assert a.task.stage == job.stage, (job.job_id, a.task.task_id, job.stage)
                self.checked_ += 1
        return super().on_tick(view)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_jobs_running_attempts_are_all_of_its_stage(seed):
    pol = _StageCheckedLATE(speculative_cap=0.3, min_elapsed=0.0)
    kw = dict(nodes=12, slots=2, seed=seed, progress=False, record_counters=False)
    r = sim_bridge.simulate(_mixed(seed), pol, **kw)
    assert pol.checked_ > 1_000 and r.summary["copies"] > 0
    # and a second stage ran beside copies of the first: the check saw both stages
    assert (r.tasks["phase"] == "reduce").any()
