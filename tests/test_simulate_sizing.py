"""``straggler simulate --load``: the cluster's load measures against slow oracles, the sizing
against its closed form in a world without stretch, and the command's choices and errors."""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from pipelines._cluster_load import (
    BIN_SECONDS,
    busy_before,
    hourly_occupancy,
    offered_load_profile,
    realised_by_arrival,
    trace_loads,
)
from pipelines._simulate_config import SimulateConfig
from pipelines._simulate_run import choose_nodes
from pipelines._simulate_sizing import nodes_needed, sample_jobs, size_cluster
from pipelines.cli import main
from sim_bridge import JobSpec, Workload

IDEAL = dict(ideal=True, noise=False, skew=(0.0, 0.0))

intervals = st.lists(
    st.tuples(st.floats(0, 20_000, allow_nan=False), st.floats(0, 9_000, allow_nan=False)),
    min_size=1,
    max_size=40,
)


def _overlap(a0, a1, b0, b1):
    return max(0.0, min(a1, b1) - max(a0, b0))


@settings(max_examples=60, deadline=None)
@given(intervals, st.integers(1, 3), st.integers(1, 4))
def test_hourly_occupancy_equals_the_overlaps_hour_by_hour(spans, nodes, parts):
    launch = np.array([s for s, _ in spans])
    end = launch + np.array([d for _, d in spans])
    cut = np.array_split(np.arange(launch.size), parts)  # any split into parts: the same
    occ = hourly_occupancy(((launch[i], end[i]) for i in cut), nodes, 2)
    n_bins = max(1, math.ceil(end.max() / BIN_SECONDS))
    oracle = [
        sum(
            _overlap(a, b, h * BIN_SECONDS, (h + 1) * BIN_SECONDS)
            for a, b in zip(launch, end, strict=True)
        )
        / (BIN_SECONDS * nodes * 2)
        for h in range(n_bins)
    ]
    assert occ.hourly == pytest.approx(oracle, abs=1e-9)
    top = int(np.argmax(oracle))
    assert occ.busiest == pytest.approx(oracle[top], abs=1e-9)


def test_busy_before_is_the_integral_of_the_running_count():
    launch, end = np.array([0.0, 2.0, 2.0]), np.array([4.0, 3.0, 9.0])
    t = np.linspace(-1, 10, 23)
    oracle = [sum(_overlap(a, b, -np.inf, x) for a, b in zip(launch, end, strict=True)) for x in t]
    np.testing.assert_allclose(busy_before(launch, end, t), oracle, atol=1e-12)
    with pytest.raises(ValueError, match="differ in length: 2 and 1"):
        busy_before(launch[:2], end[:1], t)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 3 * 3600, allow_nan=False), st.floats(1, 5_000)),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from([0.25, 1.0, 2.5, 3.0]),
)
def test_offered_and_realised_load_count_each_job_in_its_arrival_hour(jobs, hours):
    span = hours * 3600
    # the bins from their edges: each whole hour, the last one running to the window's end
    # (a window under an hour is one bin)
    edges = [float(e) for e in range(0, int(span), 3600)] + [span]
    if len(edges) > 2 and edges[-1] - edges[-2] < 3600:
        del edges[-2]
    bins = [0.0] * (len(edges) - 1)
    for s, x in jobs:  # a slow oracle: arrivals past the window count in its last bin
        i = next((i for i in range(len(bins)) if edges[i] <= s < edges[i + 1]), len(bins) - 1)
        bins[i] += x * 1.5
    per = [b / ((edges[i + 1] - edges[i]) * 6) for i, b in enumerate(bins)]
    w = Workload("X", [JobSpec(f"j{i}", s, [x, x / 2]) for i, (s, x) in enumerate(jobs)])
    got = offered_load_profile([w], 2, 3, hours)
    assert got.busiest == pytest.approx(max(per))
    assert got.window == pytest.approx(sum(bins) / (span * 6))
    real = realised_by_arrival(
        [(np.array([s for s, _ in jobs]), np.array([x * 1.5 for _, x in jobs]))], 2, 3, hours
    )
    assert (real.busiest, real.window) == pytest.approx((got.busiest, got.window))


def test_a_few_minutes_at_the_windows_end_join_the_hour_before():
    # 1.02 h: the last 72 s are not a bin of their own (one job there would be 50x the rate)
    w = Workload("X", [JobSpec("a", 100.0, [3600.0]), JobSpec("b", 3650.0, [3600.0])])
    got = offered_load_profile([w], 1, 1, 1.02)
    assert got.busiest_bin == (0.0, 1.02 * 3600)
    assert got.busiest == pytest.approx(7200.0 / (1.02 * 3600))


def test_sizing_in_a_world_without_stretch_is_the_closed_form():
    # 40 jobs of 6 x 300 s each arrive in the second hour, 10 in the first: with no
    # contention, noise or skew an attempt runs its base work, so the stretch is 1 and the
    # nodes are the busiest hour's base work over slots x 3,600 s x load
    jobs = [JobSpec(f"a{i}", 90.0 * i, [300.0] * 6) for i in range(10)]
    jobs += [JobSpec(f"b{i}", 3600.0 + 80.0 * i, [300.0] * 6) for i in range(40)]
    w = Workload("X", jobs)
    size = size_cluster([w], load=0.6, slots=4, hours=2.0, simulate_kwargs=IDEAL, sample=10)
    assert size.stretch == pytest.approx(1.0, rel=1e-12)
    assert size.nodes == math.ceil(40 * 1800.0 / (4 * 3600 * 0.6))
    assert size.offered.busiest_bin == (3600.0, 7200.0)
    assert size.rounds[0].step == 5 and size.rounds[0].jobs == 10  # 1 job in 5
    assert size.expected_busiest_load == pytest.approx(size.offered.busiest)
    assert size.offered.busiest <= 0.6


def test_sizing_settles_on_the_size_its_last_stretch_needs_and_is_deterministic():
    w = sim_bridge.load_workload("SYN", hours=0.3, seed=2)
    a = size_cluster([w], load=0.8, slots=2, hours=0.3, simulate_kwargs={"seed": 2}, sample=40)
    b = size_cluster([w], load=0.8, slots=2, hours=0.3, simulate_kwargs={"seed": 2}, sample=40)
    assert a == b
    per_node = offered_load_profile([w], 1, 2, 0.3).busiest
    assert a.nodes == nodes_needed(per_node, a.stretch, 0.8)
    assert a.stretch > 1  # the default world's attempts run longer than their base work
    # the sample (every step-th job) holds its own share of the base work, not 1 / step
    step = a.rounds[0].step
    total = sum(sum(j.map_work) + sum(j.reduce_work) for j in w.jobs)
    mine = sum(sum(j.map_work) + sum(j.reduce_work) for j in w.jobs[::step])
    assert step == len(w.jobs) // 40 and a.rounds[0].share == pytest.approx(mine / total)
    for r in a.rounds:
        # the replay carries its sample's share of the base work on that share of the nodes
        assert r.nodes == max(1, round(r.candidate_nodes * r.share))
        assert 0 < r.busiest_occupancy <= 1 + 1e-9  # a share of the replay's slots
    last = a.rounds[-1]
    # it stops when the size the last stretch needs is within 5% of the size replayed, or
    # after three replays, saying which
    if a.settled:
        assert abs(a.nodes - last.candidate_nodes) <= 0.05 * last.candidate_nodes
        assert all(
            abs(nodes_needed(per_node, r.stretch, 0.8) - r.candidate_nodes)
            > 0.05 * r.candidate_nodes
            for r in a.rounds[:-1]
        )
    else:
        assert len(a.rounds) == 3
    assert json.loads(json.dumps(a.as_dict()))["nodes"] == a.nodes


def test_a_sample_keeps_every_kth_job_and_the_workloads_settings():
    w = Workload("X", [JobSpec(f"j{i}", float(i), [1.0]) for i in range(10)], tail_alpha=1.7)
    (s,) = sample_jobs([w], 4)
    assert [j.job_id for j in s.jobs] == ["j0", "j4", "j8"]
    assert (s.name, s.tail_alpha, s.profiles, s.source) == (w.name, 1.7, w.profiles, w.source)
    with pytest.raises(ValueError, match="step must be an integer >= 1, got 0"):
        sample_jobs([w], 0)


@pytest.mark.parametrize("load", [0, -0.5, 1.5, float("nan"), True])
def test_a_bad_load_is_refused_by_name(load):
    w = Workload("X", [JobSpec("a", 0.0, [60.0])])
    with pytest.raises(ValueError, match=r"parameter load \(--load\) must be in \(0, 1\]"):
        size_cluster([w], load=load, slots=2, hours=1.0)
    with pytest.raises(ValueError, match="holds no job"):
        size_cluster([], load=0.5, slots=2, hours=1.0)


def test_too_small_a_cluster_is_warned_about(caplog):
    w = Workload("X", [JobSpec("a", 0.0, [3600.0] * 30)])
    with caplog.at_level(logging.WARNING, logger="pipelines.simulate"):
        assert choose_nodes(SimulateConfig(out="o", nodes=2, slots=3), [w], 1.0) == (2, None)
    (rec,) = caplog.records
    assert "5.0x the base work 2 nodes x 3 slots can run" in rec.getMessage()
    assert "--nodes 10 is the least" in rec.getMessage()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pipelines.simulate"):
        choose_nodes(SimulateConfig(out="o", nodes=10, slots=3), [w], 1.0)
    assert not caplog.records


def test_the_command_sizes_the_cluster_and_says_so(tmp_path, shared_data_dir, capsys):
    out = tmp_path / "sized"
    base = ["simulate", "--workload", "FB2009", "--hours", "0.5", "--seed", "3", "--slots", "2"]
    base += ["--data-dir", str(shared_data_dir)]
    assert main([*base, "--load", "0.7", "--out", str(out)]) == 0
    got = capsys.readouterr()
    assert "sized the cluster at" in got.err and "calibration 1:" in got.err
    s = json.loads((out / "summary.json").read_text())
    assert s["nodes"] == s["sizing"]["nodes"] and s["sizing"]["load"] == 0.7
    assert f"cluster {s['nodes']:,} x 2" in got.out
    # the replays took the whole window (under 500 jobs) and settled: the run realises the
    # load asked for, up to the 5% the size may move and the stretch's change with it
    assert s["sizing"]["settled"] and s["sizing"]["rounds"][-1]["step"] == 1
    assert s["realised_load"]["busiest_hour"] == pytest.approx(0.7, rel=0.1)
    # the realised load by arrival hour and the occupancy, again from the written trace
    tasks = pd.read_parquet(out / "tasks.parquet")
    occ, real = trace_loads(tasks, s["nodes"], 2, 0.5)
    assert s["realised_load"]["busiest_hour"] == pytest.approx(real.busiest)
    assert s["occupancy"]["hourly"] == pytest.approx(occ.hourly)
    assert real.window == pytest.approx(tasks["duration"].sum() / (s["nodes"] * 2 * 1800))
    # --nodes and --load together: an error naming both, and nothing written
    bad = tmp_path / "both"
    assert main([*base, "--nodes", "4", "--load", "0.7", "--out", str(bad)]) == 2
    assert "give --nodes or --load, not both (got --nodes 4 and --load 0.7)" in (
        capsys.readouterr().err
    )
    assert not (bad / "summary.json").exists()


def test_loading_the_workloads_first_runs_what_the_names_run(tmp_path):
    from pipelines import simulate

    cfg = SimulateConfig(
        out=str(tmp_path / "o"),
        workloads=["SYN", "FB2010"],
        nodes=6,
        hours=0.1,
        seed=5,
        data_dir=str(tmp_path),
        progress=False,
    )
    simulate(cfg)
    direct = sim_bridge.simulate(
        ["SYN", "FB2010"],
        nodes=6,
        hours=0.1,
        seed=5,
        data_dir=str(tmp_path),
        progress=False,
    )
    got = pd.read_parquet(tmp_path / "o" / "tasks.parquet")
    pd.testing.assert_frame_equal(got, direct.tasks.reset_index(drop=True), check_dtype=False)


def test_a_streamed_trace_gives_the_loads_of_the_table(tmp_path):
    kw = dict(nodes=5, slots=2, hours=0.2, seed=1, progress=False)
    mem = sim_bridge.simulate("SYN", **kw)
    sim_bridge.simulate("SYN", **kw, trace_sink=tmp_path / "t.parquet", row_group_rows=64)
    a_occ, a_real = trace_loads(mem.tasks, 5, 2, 0.2)
    b_occ, b_real = trace_loads(tmp_path / "t.parquet", 5, 2, 0.2)
    # the same busy time, summed in another order (cancellation: absolute, on shares)
    assert b_occ.hourly == pytest.approx(a_occ.hourly, abs=1e-9)
    assert (b_real.window, b_real.busiest) == pytest.approx((a_real.window, a_real.busiest))
