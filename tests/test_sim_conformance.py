"""Conformance suite over EVERY registered policy (later-registered policies join by name).

A speculation policy runs with FIFO placement, a placement policy with no speculation and with
LATE. Each run must: complete every job; never run more attempts on a node than it has slots;
never act on a finished task; be bit-identical under the same seed; and count task-seconds as
the sum of every attempt's run time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sim_bridge
from sim_bridge import JobSpec, Workload
from sim_bridge.policies import registry

NODES, SLOTS = 12, 2


def _workload() -> list:
    """Small mixed workload: multi-task map/reduce jobs with heavy tails + synthetic arrivals."""
    rng = np.random.default_rng(5)
    jobs = []
    t = 0.0
    for i in range(14):
        t += float(rng.exponential(25.0))
        n_map = int(rng.integers(1, 16))
        n_red = int(rng.integers(0, 4))
        jobs.append(
            JobSpec(
                f"c{i}",
                t,
                rng.uniform(5.0, 40.0, n_map),
                rng.uniform(5.0, 30.0, n_red),
                workload="HEAVY",
                deadline=t + 200.0 if i % 3 == 0 else None,
            )
        )
    heavy = Workload("HEAVY", jobs, tail_alpha=1.6)
    syn = sim_bridge.load_workload("SYN", hours=0.4, scale=0.002, seed=1)
    return [heavy, syn]


def _run(name: str, seed: int = 3, with_late: bool = False):
    cls = registry[name]
    if cls.kind == "placement":
        spec, place = ("late" if with_late else "none"), name
    else:
        spec, place = name, "fifo"
    return sim_bridge.simulate(
        _workload(), spec, place, nodes=NODES, slots=SLOTS, hours=0.4, seed=seed, progress=False
    )


def _cases():
    out = []
    for name in sorted(registry):
        out.append(pytest.param(name, False, id=name))
        if registry[name].kind == "placement":
            out.append(pytest.param(name, True, id=f"{name}+late"))
    return out


@pytest.fixture(scope="module")
def runs():
    cache: dict = {}

    def get(name, with_late):
        key = (name, with_late)
        if key not in cache:
            cache[key] = _run(name, with_late=with_late)
        return cache[key]

    return get


def _max_concurrency(tasks: pd.DataFrame) -> pd.Series:
    """Slow obvious sweep per node: ends before starts at equal times."""
    out = {}
    for node, g in tasks.groupby("node"):
        ev = [(t, 0) for t in g["end_time"]] + [(t, 1) for t in g["launch_time"]]
        ev.sort()
        cur = best = 0
        for _t, kind in ev:
            cur += 1 if kind else -1
            best = max(best, cur)
        out[node] = best
    return pd.Series(out)


@pytest.mark.parametrize(("name", "with_late"), _cases())
def test_all_jobs_complete_and_every_task_has_one_winner(runs, name, with_late):
    r = runs(name, with_late)
    jobs, tasks = r.jobs, r.tasks
    assert np.isfinite(jobs["finish_time"]).all()
    assert (jobs["finish_time"] >= jobs["submit_time"]).all()
    winners = tasks[tasks["outcome"] == "finished"].groupby("task_id").size()
    assert (winners == 1).all()
    assert set(winners.index) == set(tasks["task_id"])
    assert int(jobs["n_tasks"].sum()) == tasks["task_id"].nunique() == r.summary["tasks"]
    assert set(tasks["outcome"]) <= {"finished", "killed"}


@pytest.mark.parametrize(("name", "with_late"), _cases())
def test_slots_never_over_committed(runs, name, with_late):
    r = runs(name, with_late)
    assert _max_concurrency(r.tasks).max() <= SLOTS


@pytest.mark.parametrize(("name", "with_late"), _cases())
def test_no_attempt_outlives_or_starts_after_its_task(runs, name, with_late):
    tasks = runs(name, with_late).tasks
    fin = tasks[tasks["outcome"] == "finished"].set_index("task_id")["end_time"]
    done_at = tasks["task_id"].map(fin)
    assert (tasks["launch_time"] <= done_at + 1e-9).all()
    assert (tasks["end_time"] <= done_at + 1e-9).all()
    # a task's attempts are numbered 0..k-1 in launch order
    for _tid, g in tasks.groupby("task_id"):
        assert list(g["attempt"]) == list(range(len(g)))
        assert g["launch_time"].is_monotonic_increasing
    # stage order: no reduce starts before its job's last map finished
    maps = tasks[tasks["phase"] == "map"]
    last_map = maps[maps["outcome"] == "finished"].groupby("job_id")["end_time"].max()
    red = tasks[tasks["phase"] == "reduce"]
    assert (red["launch_time"] >= red["job_id"].map(last_map) - 1e-9).all()


@pytest.mark.parametrize(("name", "with_late"), _cases())
def test_task_seconds_is_the_sum_of_attempt_run_times(runs, name, with_late):
    r = runs(name, with_late)
    run_times = (r.tasks["end_time"] - r.tasks["launch_time"]).to_numpy()
    assert (run_times >= 0).all()
    assert r.summary["task_seconds"] == pytest.approx(float(run_times.sum()), rel=1e-12)
    assert r.summary["attempts"] == len(r.tasks)
    assert r.summary["jobs"] == len(r.jobs)
    for key in ("mean_jct", "p50_jct", "p90_jct", "p99_jct", "makespan", "pocd", "events"):
        assert np.isfinite(r.summary[key])


@pytest.mark.parametrize(("name", "with_late"), _cases())
def test_deterministic_under_a_seed(runs, name, with_late):
    a = runs(name, with_late)
    b = _run(name, with_late=with_late)
    pd.testing.assert_frame_equal(a.tasks, b.tasks)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
