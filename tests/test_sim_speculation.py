"""Speculation helps where it should, and the baselines follow their published rules."""

from __future__ import annotations

import numpy as np
import pytest

import sim_bridge
from sim_bridge import JobSpec, Workload, get_policy


def _heavy(seed: int) -> Workload:
    """60 jobs of 5-30 equal maps (+0-2 reduces) with Pareto(2) noise: stragglers dominate."""
    rng = np.random.default_rng(seed)
    jobs, t = [], 0.0
    for i in range(60):
        t += float(rng.exponential(20.0))
        jobs.append(
            JobSpec(
                f"h{i}",
                t,
                np.full(int(rng.integers(5, 30)), 20.0),
                np.full(int(rng.integers(0, 3)), 15.0),
                workload="HEAVY",
            )
        )
    return Workload("HEAVY", jobs, tail_alpha=2.0)


@pytest.fixture(scope="module")
def p99():
    out = {}
    for seed in (0, 1, 2):
        for pol in ("none", "late", "mantri"):
            r = sim_bridge.simulate(_heavy(seed), pol, nodes=20, slots=2, seed=seed, progress=False)
            out[pol, seed] = r.summary
    return out


@pytest.mark.parametrize("policy", ["late", "mantri"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_speculation_cuts_p99_jct_under_heavy_tails(p99, policy, seed):
    base, spec = p99["none", seed], p99[policy, seed]
    assert spec["copies"] > 0
    assert spec["p99_jct"] < base["p99_jct"]
    # the copies cost task-seconds but the cluster-wide work does not explode
    assert spec["task_seconds"] < 2.0 * base["task_seconds"]


def test_late_respects_its_speculative_cap():
    # a cap of 1 slot in 40: never more than one live copy at any instant
    pol = get_policy("late", speculative_cap=0.025)
    r = sim_bridge.simulate(_heavy(3), pol, nodes=20, slots=2, seed=3, progress=False)
    copies = r.tasks[r.tasks["attempt"] > 0]
    assert len(copies) > 0
    ev = sorted(
        [(t, 1) for t in copies["launch_time"]] + [(t, -1) for t in copies["end_time"]],
        key=lambda e: (e[0], e[1]),
    )
    live = np.cumsum([d for _t, d in ev])
    assert live.max() <= 1


def test_spark_only_copies_tasks_older_than_multiplier_times_median():
    mult = 1.5
    r = sim_bridge.simulate(
        _heavy(4),
        "spark",
        nodes=20,
        slots=2,
        seed=4,
        progress=False,
        policy_params={"multiplier": mult, "quantile": 0.75},
    )
    t = r.tasks
    orig = t[t["attempt"] == 0].set_index("task_id")
    for _, c in t[t["attempt"] > 0].iterrows():
        job_done = t[
            (t["job_id"] == c["job_id"])
            & (t["outcome"] == "finished")
            & (t["end_time"] <= c["launch_time"])
            & (t["phase"] == c["phase"])
        ]
        med = float(np.median(job_done["duration"]))
        elapsed = c["launch_time"] - orig.loc[c["task_id"], "launch_time"]
        assert elapsed > mult * med - 1e-9


def test_spark4_preset_and_parameter_errors():
    p = get_policy("spark4")
    assert (p.quantile, p.multiplier) == (0.9, 3.0)
    c = get_policy("spark")
    assert (c.quantile, c.multiplier) == (0.75, 1.5)
    with pytest.raises(ValueError, match="quantile.*1.5"):
        sim_bridge.simulate("SYN", "spark", hours=0.1, policy_params={"quantile": 1.5})
    with pytest.raises(ValueError, match="delta"):
        sim_bridge.simulate("SYN", "mantri", hours=0.1, policy_params={"delta": -0.1})
    with pytest.raises(KeyError, match="unknown policy 'nope'"):
        sim_bridge.simulate("SYN", "nope", hours=0.1)
    with pytest.raises(ValueError, match="placement policy"):
        sim_bridge.simulate("SYN", "fifo", hours=0.1)


def test_backup_tasks_only_near_the_end_of_a_stage():
    r = sim_bridge.simulate(_heavy(5), "backup", nodes=20, slots=2, seed=5, progress=False)
    t = r.tasks
    for _, c in t[t["attempt"] > 0].iterrows():
        same = t[(t["job_id"] == c["job_id"]) & (t["phase"] == c["phase"])]
        n = same["task_id"].nunique()
        done = same[(same["outcome"] == "finished") & (same["end_time"] <= c["launch_time"])]
        assert len(done) >= 0.9 * n - 1e-9


def test_mantri_kills_and_restarts_when_the_cluster_is_full():
    r = sim_bridge.simulate(_heavy(1), "mantri", nodes=8, slots=2, seed=1, progress=False)
    t = r.tasks
    killed = t[t["outcome"] == "killed"]
    nxt = t.merge(
        killed[["task_id", "attempt", "end_time"]].rename(
            columns={"attempt": "killed_attempt", "end_time": "killed_at"}
        ),
        on="task_id",
    )
    restarts = nxt[
        (nxt["attempt"] == nxt["killed_attempt"] + 1) & (nxt["launch_time"] == nxt["killed_at"])
    ]
    assert len(restarts) > 0
    # a restart only replaces a lone original, once
    assert (restarts["killed_attempt"] == 0).all()
    assert restarts["task_id"].is_unique


def test_hadoop_waits_for_finished_tasks_and_spaces_its_speculations():
    r = sim_bridge.simulate(_heavy(2), "hadoop", nodes=20, slots=2, seed=2, progress=False)
    t = r.tasks
    copies = t[t["attempt"] > 0]
    assert len(copies) > 0
    for job_id, g in copies.groupby("job_id"):
        assert (g["launch_time"].sort_values().diff().dropna() >= 15.0 - 1e-9).all()
        for _, c in g.iterrows():
            same = t[(t["job_id"] == job_id) & (t["phase"] == c["phase"])]
            done = same[(same["outcome"] == "finished") & (same["end_time"] <= c["launch_time"])]
            assert len(done) >= max(1, 0.05 * same["task_id"].nunique())
