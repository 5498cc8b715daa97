"""``sim_bridge.stationary_workload``: a trace's jobs, drawn with replacement, at one rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge import JobSpec, Workload, stationary_workload


def _trace(n: int = 30, seed: int = 0) -> Workload:
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 7200, n))
    jobs = [
        JobSpec(
            f"j{i}",
            float(t[i]),
            rng.lognormal(2, 1, 1 + i % 5),
            [3.0] * (i % 3),
            workload="FB2010",
            deadline=float(t[i]) + 100.0 * (1 + i % 4) if i % 2 else None,
            phases=("map", "reduce"),
        )
        for i in range(n)
    ]
    return Workload("FB2010", jobs, tail_alpha=1.7, source="a trace")


def test_every_job_is_one_of_the_traces_with_its_work_and_relative_deadline():
    trace = _trace()
    by_id = {j.job_id: j for j in trace.jobs}
    s = stationary_workload(trace, 6.0, seed=2)
    assert s.name == trace.name and s.tail_alpha == 1.7 and s.profiles == trace.profiles
    assert "a trace" in s.source and "seed=2" in s.source
    assert len({j.job_id for j in s.jobs}) == len(s.jobs)
    for k, job in enumerate(s.jobs):
        src_id, index = job.job_id.rsplit("#", 1)
        assert int(index) == k  # in arrival order
        src = by_id[src_id]
        assert np.array_equal(job.map_work, src.map_work)
        assert np.array_equal(job.reduce_work, src.reduce_work)
        assert job.workload == src.workload and job.phases == src.phases
        if src.deadline is None:
            assert job.deadline is None
        else:
            assert job.deadline - job.submit_time == pytest.approx(src.deadline - src.submit_time)
    times = [j.submit_time for j in s.jobs]
    assert times == sorted(times) and 0 <= times[0] and times[-1] < 6 * 3600
    # the trace's jobs are not touched
    assert [j.job_id for j in trace.jobs] == [f"j{i}" for i in range(30)]


def test_the_default_rate_is_the_traces_mean_and_the_gaps_exponential():
    trace = _trace()
    rate = (len(trace.jobs) - 1) / (trace.jobs[-1].submit_time - trace.jobs[0].submit_time)
    s = stationary_workload(trace, 200.0, seed=5)
    n = len(s.jobs)
    expected = rate * 200 * 3600
    assert abs(n - expected) < 4 * math.sqrt(expected)  # a Poisson count, four deviations
    gaps = np.diff([0.0] + [j.submit_time for j in s.jobs])
    assert abs(gaps.mean() * rate - 1) < 4 / math.sqrt(n)
    assert abs(gaps.std() * rate - 1) < 0.1  # exponential: std = mean
    # the arrival rate is the same in the first and the last quarter (stationary)
    t = np.array([j.submit_time for j in s.jobs])
    first, last = (t < 50 * 3600).sum(), (t >= 150 * 3600).sum()
    assert abs(first - last) < 4 * math.sqrt(expected / 4) * math.sqrt(2)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.floats(0.5, 12.0), st.floats(1e-3, 0.2))
def test_same_seed_same_workload_and_a_given_rate(seed, hours, rate):
    a = stationary_workload(_trace(), hours, rate=rate, seed=seed)
    b = stationary_workload(_trace(), hours, rate=rate, seed=seed)
    assert [(j.job_id, j.submit_time) for j in a.jobs] == [
        (j.job_id, j.submit_time) for j in b.jobs
    ]
    assert all(0 <= j.submit_time < hours * 3600 for j in a.jobs)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"hours": 0.0}, "parameter hours must be > 0 and finite, got 0.0"),
        ({"hours": math.inf}, "parameter hours must be > 0 and finite, got inf"),
        ({"hours": 1.0, "rate": -1.0}, "parameter rate must be > 0 and finite, got -1.0"),
        ({"hours": 1.0, "rate": math.nan}, "parameter rate must be > 0 and finite, got nan"),
    ],
)
def test_bad_parameters_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        stationary_workload(_trace(), **kw)


def test_a_trace_of_one_instant_needs_a_rate():
    one = Workload("X", [JobSpec("a", 5.0, [1.0]), JobSpec("b", 5.0, [2.0])])
    with pytest.raises(ValueError, match="arrive at one instant: no mean rate; pass rate="):
        stationary_workload(one, 1.0)
    assert len(stationary_workload(one, 1.0, rate=0.01, seed=0).jobs) > 0
    with pytest.raises(ValueError, match="workload 'X' has no job"):
        stationary_workload(Workload("X", []), 1.0)
