"""Dolly and Hopper on the engine: size cut-off, clone count, budget, virtual-size order."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sim_bridge import JobSpec, simulate
from sim_bridge.policies import get_policy
from sim_bridge.theory import dolly_clone_count

DIST = stats.pareto(b=1.5, scale=1.0)


def _run(jobs, policy, slots, **params):
    return simulate(
        jobs,
        policy,
        nodes=1,
        slots=slots,
        duration_dist=DIST,
        ideal=True,
        seed=4,
        record_counters=False,
        policy_params=params,
    )


def test_dolly_clones_only_jobs_under_the_size_cut_off_with_the_formula_count():
    jobs = [JobSpec("small", 0.0, np.ones(4)), JobSpec("big", 0.5, np.ones(30))]
    t = _run(jobs, "dolly", 200, p=0.2, max_tasks=10, budget=1.0).tasks
    c = dolly_clone_count(0.2, 4, 0.05)
    assert c > 1
    small = t[(t.job_id == "small") & (t.launch_time == 0.0)].groupby("task_id").size()
    assert len(small) == 4 and set(small) == {c}
    big = t[t.job_id == "big"]
    assert big.attempt.max() == 0


def test_dolly_stays_within_its_clone_budget():
    # budget 5% of 100 slots = 5 clones at most, whatever the formula asks for
    jobs = [JobSpec(f"j{k}", 0.1 * k, np.ones(3)) for k in range(6)]
    pol = get_policy("dolly", p=0.3, max_tasks=10, budget=0.05)
    r = _run(jobs, pol, 100)
    t = r.tasks
    copies = t[t.attempt > 0]
    assert 0 < len(copies) <= 5
    # at any instant no more than 5 copies alive
    ev = sorted(
        [(x, 1) for x in copies.launch_time] + [(x, -1) for x in copies.end_time],
        key=lambda e: (e[0], e[1]),
    )
    assert np.cumsum([d for _, d in ev]).max() <= 5


def test_dolly_delay_tops_up_clones_when_slots_free():
    # 4 tasks x 3 clones = 12 > 6 slots: the rest are added within the delay window
    t = _run(
        [JobSpec("j", 0.0, np.ones(4))], "dolly", 6, p=0.3, budget=1.0, delay=100.0, max_clones=3
    ).tasks
    assert (t.launch_time > 0).any() and (t.attempt > 0).any()
    t0 = _run(
        [JobSpec("j", 0.0, np.ones(4))], "dolly", 6, p=0.3, budget=1.0, delay=0.0, max_clones=3
    ).tasks
    assert not (t0[t0.attempt > 0].launch_time > 0).any()


def test_hopper_serves_the_smallest_virtual_size_first():
    # a (20 tasks) fills the 10 slots; b (3 tasks) arrives later and overtakes a's queue
    jobs = [JobSpec("a", 0.0, np.ones(20)), JobSpec("b", 0.01, np.ones(3))]
    t = _run(jobs, "hopper", 10, beta=1.5, interval=1000.0).tasks
    orig = t[t.attempt == 0]
    b_last = orig[orig.job_id == "b"].launch_time.max()
    a_late = orig[(orig.job_id == "a") & (orig.launch_time > 0)].launch_time
    assert b_last <= a_late.min()


def test_hopper_speculates_within_the_virtual_size():
    # beta = 1 reserves 2 slots per task: 5 tasks -> at most 10 attempts alive per job
    t = _run(
        [JobSpec("j", 0.0, np.ones(5))], "hopper", 40, beta=1.0, interval=0.5, min_elapsed=0.5
    ).tasks
    assert (t.attempt > 0).any()
    ev = sorted(
        [(x, 1) for x in t.launch_time] + [(x, -1) for x in t.end_time], key=lambda e: (e[0], e[1])
    )
    assert np.cumsum([d for _, d in ev]).max() <= 10
    assert t.groupby("task_id").size().max() <= 2  # one copy per task


@pytest.mark.parametrize(
    "name, params, msg",
    [
        ("dolly", {"p": 1.0}, "dolly: parameter p must be in (0, 1), got 1.0"),
        ("dolly", {"max_tasks": 0}, "dolly: parameter max_tasks must be an integer >= 1, got 0"),
        ("dolly", {"budget": 2.0}, "dolly: parameter budget must be in [0, 1], got 2.0"),
        ("dolly", {"p_is": "x"}, "dolly: parameter p_is must be 'task' or 'job', got 'x'"),
        ("hopper", {"beta": 0.0}, "hopper: parameter beta must be > 0, got 0.0"),
    ],
)
def test_parameters_are_validated_by_name(name, params, msg):
    esc = msg
    for ch in "()[]":
        esc = esc.replace(ch, "\\" + ch)
    with pytest.raises(ValueError, match=esc):
        get_policy(name, **params).validate()
