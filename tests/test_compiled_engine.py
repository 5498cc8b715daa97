"""The compiled FIFO / no-speculation loop against the general Python loop (the oracle).

Every case runs ``simulate`` twice, ``engine="python"`` and ``engine="compiled"``, and asks
for bit-identical tables: same rows in the same order, same floats to the last bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import sim_bridge
from sim_bridge import JobSpec, Workload
from sim_bridge._compiled import compiled_available

pytestmark = pytest.mark.skipif(
    not compiled_available(), reason="sim_bridge._fifo_core is not built"
)


def _both(workload, **kw):
    kw.setdefault("progress", False)
    # the compiled loop runs the world without co-located contention (it does not re-solve
    # end times when a node's tenants change)
    kw.setdefault("interference", 0.0)
    kw.setdefault("placement", "fifo")  # the compiled loop's only placement
    py = sim_bridge.simulate(workload, engine="python", **kw)
    co = sim_bridge.simulate(workload, engine="compiled", **kw)
    assert py.summary["engine"] == "python" and co.summary["engine"] == "compiled"
    pd.testing.assert_frame_equal(py.tasks, co.tasks, check_exact=True)
    pd.testing.assert_frame_equal(py.jobs, co.jobs, check_exact=True)
    skip = {"wall_seconds", "engine_seconds", "engine_cpu_seconds", "engine"}
    assert py.summary.keys() == co.summary.keys()
    for key in py.summary.keys() - skip:
        a, b = py.summary[key], co.summary[key]
        assert a == b or (a != a and b != b), key  # NaN (an undefined share) on both sides
    return py, co


def test_auto_picks_compiled_only_where_no_hook_acts():
    jobs = [JobSpec("a", 0.0, [1.0, 2.0], [1.0])]
    off = dict(progress=False, interference=0.0)
    assert sim_bridge.simulate(jobs, "none", "fifo", **off).summary["engine"] == "compiled"
    # co-located contention re-solves end times: the Python loop runs it
    assert sim_bridge.simulate(jobs, "none", "fifo").summary["engine"] == "python"
    with pytest.raises(ValueError, match="interference > 0"):
        sim_bridge.simulate(jobs, "none", "fifo", engine="compiled", progress=False)
    for policy, placement in (("late", "fifo"), ("none", "fair"), ("mantri", "fifo")):
        r = sim_bridge.simulate(jobs, policy, placement, **off)
        assert r.summary["engine"] == "python"
        with pytest.raises(ValueError, match="engine='compiled'"):
            sim_bridge.simulate(jobs, policy, placement, engine="compiled", **off)
    with pytest.raises(ValueError, match="parameter engine must be one of .*'turbo'"):
        sim_bridge.simulate(jobs, engine="turbo")


@pytest.mark.parametrize(
    "kw",
    [
        dict(nodes=8, hours=1.0),
        dict(nodes=8, slots=3, hours=1.0, seed=5, interference=0.0),
        dict(nodes=6, hours=1.0, tail_pressure=0.0, kappa=2.0),
        dict(nodes=4, hours=0.5, noise=False),
        dict(nodes=4, hours=0.5, ideal=True),
        dict(nodes=5, hours=0.5, duration_dist=stats.expon(scale=2.0)),
        dict(nodes=6, hours=1.0, cluster_seed=11, record_counters=False),
    ],
)
def test_synthetic_workload_identical(kw):
    _both("SYN", **kw)


def test_real_workloads_and_replayed_counters_identical(shared_data_dir):
    _both(
        ["FB2009", "ALI2017"],
        nodes=12,
        hours=0.5,
        scale=0.05,
        data_dir=shared_data_dir,
        counters="alibaba2018",
    )


def test_contention_paths_extended_past_the_first_day():
    # tasks long enough that attempts end beyond the first block of contention steps
    jobs = [JobSpec(f"j{i}", 3600.0 * i, [40_000.0, 90_000.0], [60_000.0]) for i in range(6)]
    py, _co = _both(jobs, nodes=2, slots=1, seed=2)
    assert py.tasks["end_time"].max() > 2 * 86_400


@pytest.mark.parametrize("limit", [0, 1, 7, 29, 30, 31])
def test_max_events_stops_both_loops_alike(limit):
    jobs = [JobSpec(f"j{i}", float(i), [1.0, 1.0]) for i in range(10)]  # 30 events
    outcomes = []
    for engine in ("python", "compiled"):
        try:
            r = sim_bridge.simulate(
                jobs,
                "none",
                "fifo",
                max_events=limit,
                engine=engine,
                progress=False,
                interference=0.0,
            )
            outcomes.append(r.summary["events"])
        except RuntimeError as exc:
            assert f"max_events={limit}" in str(exc)
            outcomes.append("stopped")
    assert outcomes[0] == outcomes[1]
    assert outcomes[0] == ("stopped" if limit <= 30 else 30)


_work = st.floats(0.5, 50.0, allow_nan=False, allow_infinity=False)


@st.composite
def _jobs(draw):
    n = draw(st.integers(1, 25))
    # few distinct arrival times and durations: ties in arrivals, ends and arrival-vs-end
    times = draw(st.lists(st.sampled_from([0.0, 1.0, 2.5, 4.0, 10.0]), min_size=n, max_size=n))
    out = []
    for i, t in enumerate(sorted(times)):
        maps = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]) | _work, min_size=1, max_size=6))
        reds = draw(st.lists(st.sampled_from([1.0, 2.0]) | _work, min_size=0, max_size=3))
        deadline = draw(st.none() | st.floats(1.0, 100.0))
        out.append(
            JobSpec(f"j{i}", t, maps, reds, workload="W" if i % 3 else "V", deadline=deadline)
        )
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=_jobs(),
    nodes=st.integers(1, 4),
    slots=st.integers(1, 3),
    seed=st.integers(0, 3),
    ideal=st.booleans(),
    noise=st.booleans(),
    skew=st.sampled_from([(0.0, 0.0), (0.1, 0.5)]),
)
def test_random_job_sets_identical(jobs, nodes, slots, seed, ideal, noise, skew):
    # interference 0: the compiled loop runs the world without co-located contention
    _both(jobs, nodes=nodes, slots=slots, seed=seed, ideal=ideal, noise=noise, skew=skew)


def test_two_workloads_sharing_the_cluster_identical():
    a = [JobSpec(f"a{i}", 2.0 * i, [3.0] * 4, [2.0] * 2) for i in range(30)]
    b = [JobSpec(f"b{i}", 2.0 * i + 1.0, [1.5] * 3, phases=("task", "task")) for i in range(30)]
    _both([Workload("A", a, tail_alpha=1.5), Workload("B", b, tail_alpha=2.5)], nodes=3, seed=4)


def test_compiled_is_deterministic_and_seed_sensitive():
    kw = dict(nodes=6, hours=0.5, progress=False, placement="fifo", interference=0.0)
    r1 = sim_bridge.simulate("SYN", seed=1, **kw)
    r2 = sim_bridge.simulate("SYN", seed=1, **kw)
    r3 = sim_bridge.simulate("SYN", seed=2, **kw)
    assert r1.summary["engine"] == "compiled"
    pd.testing.assert_frame_equal(r1.tasks, r2.tasks, check_exact=True)
    assert not np.array_equal(r1.tasks["duration"].to_numpy(), r3.tasks["duration"].to_numpy())
