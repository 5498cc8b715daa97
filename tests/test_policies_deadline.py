"""Shed and Shed+ on the engine: common clone count, progress transfer, PoCD experiment."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _crowded import crowded_workload
from scipy import stats

from sim_bridge import JobSpec, simulate
from sim_bridge._cluster import Cluster
from sim_bridge._engine import Simulator
from sim_bridge._workloads import Workload
from sim_bridge.experiments import deadline_jobs, pocd_experiment
from sim_bridge.policies import FIFOPlacement, get_policy
from sim_bridge.policies._deadline import ShedPlus
from sim_bridge.theory import pocd_new_job

BETA, T_MIN = 1.5, 120.0
DIST = stats.pareto(b=BETA, scale=1.0)


def test_shed_gives_every_task_of_a_new_job_the_same_smallest_sufficient_r():
    n, d = 5, 400.0
    jobs = [JobSpec("j", 0.0, np.full(n, T_MIN), deadline=d)]
    t = simulate(
        jobs,
        "shed",
        nodes=1,
        slots=100,
        duration_dist=DIST,
        ideal=True,
        seed=2,
        record_counters=False,
        policy_params={"beta": BETA, "target": 0.99},
    ).tasks
    want = next(r for r in range(6) if pocd_new_job(n, d, T_MIN, BETA, r) >= 0.99)
    per_task = t[t.launch_time == 0.0].groupby("task_id").size()
    assert len(per_task) == n and set(per_task) == {want + 1}


def test_shed_clones_only_what_fits_in_lambda_m():
    jobs = [JobSpec("j", 0.0, np.full(10, T_MIN), deadline=200.0)]
    t = simulate(
        jobs,
        "shed",
        nodes=1,
        slots=25,
        duration_dist=DIST,
        ideal=True,
        seed=2,
        record_counters=False,
        policy_params={"beta": BETA, "lam": 0.8},
    ).tasks
    # 0.8 x 25 = 20 slots -> r + 1 <= 2 copies per task
    assert t[t.launch_time == 0.0].groupby("task_id").size().max() == 2


def _run_engine(jobs, policy, slots, seed=3):
    policy.validate()
    policy.reset()
    place = FIFOPlacement()
    sim = Simulator(
        Cluster(1, slots, seed, ideal=True),
        [Workload("D", jobs)],
        policy,
        place,
        seed=seed,
        duration_dist=DIST,
    )
    sim.run()
    return sim


@pytest.mark.parametrize("transfer", [True, False])
def test_shed_plus_copies_start_from_the_fastest_attempts_offset(transfer):
    jobs = [
        JobSpec(f"j{k}", 30.0 * k, np.full(8, T_MIN), deadline=30.0 * k + 300.0) for k in range(4)
    ]
    pol = ShedPlus(beta=BETA, theta=20.0, interval=5.0, transfer=transfer, target=0.95)
    sim = _run_engine(jobs, pol, 80)
    copies = [a for a in sim.attempts if a.index > 0]
    assert pol.decisions > 0 and copies
    for c in copies:
        siblings = [
            a
            for a in c.task.attempts
            if a.launch_time < c.launch_time and a.end_time >= c.launch_time
        ]
        # progress of each sibling at the copy's launch (linear progress: test oracle reads
        # the engine's private end times)
        prog = [
            a.start_fraction
            + (1 - a.start_fraction) * (c.launch_time - a.launch_time) / (a._end - a.launch_time)
            for a in siblings
        ]
        if transfer:
            assert c.start_fraction == pytest.approx(max(prog), abs=1e-9)
        else:
            assert c.start_fraction == 0.0
    # the AM keeps one attempt per straggler before relaunching: never more than MAX + 1 alive
    for task in {a.task.uid: a.task for a in copies}.values():
        ev = sorted(
            [(a.launch_time, 1) for a in task.attempts] + [(a.end_time, -1) for a in task.attempts],
            key=lambda e: (e[0], e[1]),
        )
        assert np.cumsum([d for _, d in ev]).max() <= 1 + pol.max_extra


def test_shed_plus_does_not_speculate_jobs_past_their_deadline():
    jobs = [JobSpec("late", 0.0, np.full(4, T_MIN), deadline=1.0)]
    pol = ShedPlus(beta=BETA, theta=5.0, interval=1.0)
    sim = _run_engine(jobs, pol, 40)
    assert all(a.index == 0 for a in sim.attempts)


def test_pocd_experiment_is_deterministic_and_hadoop_sits_at_the_median_deadline():
    a = pocd_experiment(5, 0.4, n_jobs=12, seed=1)
    b = pocd_experiment(5, 0.4, n_jobs=12, seed=1)
    assert a.equals(b)
    assert list(a.policy) == ["Shed+", "Shed", "Dolly", "Hopper", "Hadoop"]
    hadoop = float(a.pocd[a.policy == "Hadoop"].iloc[0])
    assert 0.3 <= hadoop <= 0.7  # deadline = median Hadoop job time
    assert (a.pocd.between(0, 1)).all()
    with pytest.raises(ValueError, match="parameter load must be > 0, got 0"):
        deadline_jobs(5, 5, 0, 10, 120.0, 1.5, seed=0)


@pytest.mark.parametrize(
    "name, params, msg",
    [
        ("shed", {"max_extra": -1}, "shed: parameter max_extra must be an integer >= 0, got -1"),
        ("shed", {"lam": 1.5}, "shed: parameter lam must be in [0, 1], got 1.5"),
        ("shed+", {"xi": 2.0}, "shed+: parameter xi must be in [0, 1], got 2.0"),
        ("shed+", {"rule": "x"}, "shed+: parameter rule must be 'paper' or 'log_gain', got 'x'"),
        ("shed+", {"transfer": 1}, "shed+: parameter transfer must be a bool, got 1"),
    ],
)
def test_parameters_are_validated_by_name(name, params, msg):
    esc = msg
    for ch in "()[]+":
        esc = esc.replace(ch, "\\" + ch)
    with pytest.raises(ValueError, match=esc):
        get_policy(name, **params).validate()


class _FreshTMin(ShedPlus):
    """Shed+ checking, at every read, its kept t_min against the sum over the job's tasks,
    and counting the reads and the jobs it keeps it for."""

    name = "_shed_plus_fresh_t_min"

    def reset(self) -> None:
        super().reset()
        self.reads_ = 0
        self.kept_max_ = 0

    def _t_min(self, job) -> float:
        kept = super()._t_min(job)
        fresh = self.t_min_factor * sum(t.work for t in job.tasks) / job.n_tasks
        assert kept == fresh
        self.reads_ += 1
        self.kept_max_ = max(self.kept_max_, len(self._t_mins))
        live = {j.uid for j in self._view.active_jobs()}
        assert set(self._t_mins) <= live  # kept for the jobs alive only
        return kept

    def _plan(self, view):
        self._view = view
        return super()._plan(view)


def test_shed_plus_keeps_each_live_jobs_t_min_and_lets_it_go_with_the_job():
    jobs = crowded_workload(2, n_jobs=16)
    pol = _FreshTMin(theta=20.0, interval=5.0)
    res = simulate(jobs, pol, nodes=5, slots=8, seed=2, progress=False, record_counters=False)
    assert pol.reads_ > 3 * pol.kept_max_ > 0  # read again while kept
    assert not pol._t_mins  # every job done: nothing kept
    plain = simulate(
        jobs,
        ShedPlus(theta=20.0, interval=5.0),
        nodes=5,
        slots=8,
        seed=2,
        progress=False,
        record_counters=False,
    )
    assert plain.tasks.equals(res.tasks)


class _ShedPlusOneReadATask(ShedPlus):
    """Shed+ reading as first written: one ``progress_many`` a task for its fastest attempt
    (``np.argmax``), one ``view.progress`` an original for a new job's progress."""

    name = "_shed_plus_one_read_a_task"

    def _task_states(self, view, tasks):
        out = []
        for task in tasks:
            live = list(task.live.values())
            prog = view.progress_many(live)
            k = int(np.argmax(prog))
            best, phi = live[k], float(prog[k])
            el = view.now - best.launch_time
            gained = phi - best.start_fraction
            t_rem = el * (1.0 - phi) / gained if gained > 0 and el > 0 else math.inf
            out.append((live, best, phi, t_rem))
        return out

    def on_tick(self, view):
        due = view.now - self._last >= self.theta
        for job in view.active_jobs():
            if job.uid in self._fresh:
                done = job.n_done + sum(
                    view.progress(a) for a in job.running.values() if a.index == 0
                )
                if done / job.n_tasks >= self.xi:
                    self._fresh.discard(job.uid)
                    due = True
        return self.optimize(view) if due else []


@pytest.mark.parametrize(
    ("make", "kw"),
    [
        (
            lambda: [
                JobSpec(f"j{k}", 30.0 * k, np.full(8, T_MIN), deadline=30.0 * k + 300.0)
                for k in range(4)
            ],
            dict(nodes=1, slots=80, ideal=True, duration_dist=DIST),
        ),
        (lambda: crowded_workload(3, n_jobs=16), dict(nodes=5, slots=8)),
    ],
)
def test_shed_plus_reading_a_jobs_tasks_at_once_gives_the_per_task_reads_run(make, kw):
    """Shed+ reads all the live attempts of a job's running tasks in one ``progress_many``
    (and a new job's originals in one): the run is, bit for bit, the one reads a task (an
    original) at a time give, on a cluster where it copies and kills (tasks with several
    live attempts, whose fastest is picked) and on crowded nodes (reads under co-located
    demand, which book what later reads go on from)."""
    params = dict(beta=BETA, theta=20.0, interval=5.0, target=0.95)
    common = dict(seed=3, progress=False, record_counters=False, **kw)
    fast = simulate(make(), ShedPlus(**params), **common)
    slow = simulate(make(), _ShedPlusOneReadATask(**params), **common)
    assert fast.summary["attempts"] > fast.summary["tasks"]  # it copied
    assert fast.tasks.equals(slow.tasks) and fast.jobs.equals(slow.jobs)
