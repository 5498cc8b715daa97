"""SCA, SDA and ESE (seeds 000 / 001) on the engine: clone counts, detection, backups, slots."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _crowded import crowded_workload

from sim_bridge import JobSpec, SimView, simulate
from sim_bridge.experiments import pareto_unit_mean, run_cluster, sigma_sweep, xu_lau_jobs
from sim_bridge.experiments._xu_lau import SlotHold
from sim_bridge.policies import Launch, get_policy
from sim_bridge.policies._xu_lau import ESE, SDA
from sim_bridge.theory import sca_clone_counts

ALPHA = 2.0
DIST = pareto_unit_mean(ALPHA)


def _run(jobs, policy, machines, seed=1, **params):
    slotted = params.get("slotted", False)
    return simulate(
        jobs,
        policy,
        SlotHold() if slotted else "fifo",
        nodes=machines,
        slots=1,
        duration_dist=DIST,
        ideal=True,
        seed=seed,
        record_counters=False,
        policy_params=params,
    )


@pytest.mark.parametrize("m, machines, ex", [(6, 40, 1.0), (10, 25, 3.0), (3, 100, 2.0)])
def test_sca_clones_a_new_job_by_p2_when_it_fits(m, machines, ex):
    t = _run([JobSpec("j", 0.0, np.full(m, ex))], "sca", machines, gamma=0.01, r_max=4).tasks
    at0 = t[t.launch_time == 0.0].groupby("task_id").size()
    want = sca_clone_counts([m], [ex * (ALPHA - 1) / ALPHA], ALPHA, machines, 4, 0.01)[0]
    assert len(at0) == m and set(at0) == {want}
    assert want * m <= machines


def test_sca_never_exceeds_free_machines_and_clones_nothing_when_jobs_do_not_fit():
    # 30 tasks on 20 machines: sum(m) >= N(l), so one copy each in workload order
    t = _run([JobSpec("j", 0.0, np.ones(30))], "sca", 20).tasks
    assert t.attempt.max() == 0
    assert (t.launch_time == 0.0).sum() == 20
    # a busy multi-job cluster: never more live attempts than machines (sweep per instant)
    r = _run(xu_lau_jobs(1.0, 10.0, seed=3), "sca", 60)
    ev = sorted([(x, 1) for x in r.tasks.launch_time] + [(x, -1) for x in r.tasks.end_time])
    live = np.cumsum([d for _, d in sorted(ev, key=lambda e: (e[0], e[1]))])
    assert live.max() <= 60


def test_sca_places_new_jobs_in_increasing_workload_order_at_a_slot_start():
    # a (40 tasks) and b (5 tasks) arrive within one slot; 45 > 20 machines, so no cloning:
    # at the slot start b (smaller workload) gets all its tasks, a the 15 machines left
    jobs = [JobSpec("a", 0.01, np.ones(40)), JobSpec("b", 0.02, np.ones(5))]
    t = _run(jobs, "sca", 20, interval=1.0, slotted=True).tasks
    first = t[t.launch_time == t.launch_time.min()]
    assert first.launch_time.iloc[0] == pytest.approx(1.01)
    assert (first.job_id == "b").sum() == 5 and (first.job_id == "a").sum() == 15
    assert first.attempt.max() == 0


def test_sda_detects_after_fraction_s_and_adds_c_minus_1_copies():
    s = 0.2
    t = _run(
        [JobSpec("j", 0.0, np.ones(60))], "sda", 200, sigma=0.01, copies=2, s=s, interval=0.01
    ).tasks
    copies = t[t.attempt > 0]
    assert len(copies) > 0
    assert t.groupby("task_id").size().max() <= 2  # c* = 2 for Pareto (Theorem 3)
    orig = t[t.attempt == 0].set_index("task_id")
    fin = orig[orig.outcome == "finished"]
    c = copies.merge(
        fin[["launch_time", "duration"]].add_suffix("_o"), left_on="task_id", right_index=True
    )
    assert len(c) > 0
    # progress is linear in duration_dist mode: detection needs elapsed >= s * duration
    assert (c.launch_time - c.launch_time_o >= s * c.duration_o - 1e-9).all()


def test_sda_with_a_huge_threshold_never_copies():
    t = _run([JobSpec("j", 0.0, np.ones(50))], "sda", 100, sigma=1e9, interval=0.05).tasks
    assert t.attempt.max() == 0


def test_ese_backs_up_each_task_at_most_once_and_not_with_huge_sigma():
    jobs = [JobSpec("j", 0.0, np.ones(300))]
    small = _run(jobs, "ese", 30, sigma=0.3, interval=0.05, slotted=True).tasks
    assert small.attempt.max() == 1 and (small.attempt == 1).sum() > 0
    big = _run(jobs, "ese", 30, sigma=1e9, xi=0.0, interval=0.05, slotted=True).tasks
    assert big.attempt.max() == 0


def test_ese_clones_small_new_jobs_only():
    # eta * N / |chi| = 0.5 * 100 / 1 = 50 > m = 4 and E[x] = 0.5 < xi = 1: cloned
    t = _run([JobSpec("s", 0.0, np.full(4, 0.5))], "ese", 100, eta=0.5, xi=1.0, sigma=1e9).tasks
    assert (t[t.launch_time == 0.0].groupby("task_id").size() > 1).all()
    # E[x] = 2 >= xi: not small, one copy each
    t = _run([JobSpec("b", 0.0, np.full(4, 2.0))], "ese", 100, eta=0.5, xi=1.0, sigma=1e9).tasks
    assert t.attempt.max() == 0


@pytest.mark.parametrize("name", ["sca", "sda", "ese"])
def test_slotted_policies_launch_only_at_slot_starts(name):
    interval = 0.25
    jobs = xu_lau_jobs(2.0, 5.0, seed=2)
    r = _run(jobs, name, 80, interval=interval, slotted=True)
    t0 = jobs[0].submit_time
    k = (r.tasks.launch_time.to_numpy() - t0) / interval
    assert np.allclose(k, np.round(k), atol=1e-6)
    assert np.isfinite(r.jobs.finish_time).all()


def test_sigma_sweep_is_deterministic_and_has_the_no_backup_baseline():
    a = sigma_sweep([1.7], n_tasks=100, machines=10, runs=2, seed=0)
    b = sigma_sweep([1.7], n_tasks=100, machines=10, runs=2, seed=0)
    assert a.equals(b)
    assert a.sigma.isna().sum() == 2 and (a.sigma == 1.7).sum() == 2
    df = run_cluster("none", xu_lau_jobs(1.0, 3.0, seed=0), 50)
    assert (df.resource > 0).all() and (df.attempts == df.n_tasks).all()


@pytest.mark.parametrize(
    "name, params, msg",
    [
        ("sca", {"r_max": 0}, "sca: parameter r_max must be an integer >= 1, got 0"),
        ("sca", {"gamma": -1.0}, "sca: parameter gamma must be >= 0, got -1.0"),
        ("sda", {"s": 1.0}, "sda: parameter s must be in (0, 1), got 1.0"),
        ("sda", {"sigma": 0.0}, "sda: parameter sigma must be > 0, got 0.0"),
        ("sda", {"sigma": 0.3}, "sda: parameter sigma must be >= 0.5 to derive copies"),
        ("ese", {"alpha": 1.0}, "ese: parameter alpha must be > 1, got 1.0"),
        ("ese", {"slotted": "yes"}, "ese: parameter slotted must be a bool, got 'yes'"),
    ],
)
def test_parameters_are_validated_by_name(name, params, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        get_policy(name, **params).validate()


class _OneReadAtATime(ESE):
    """ESE whose backup candidates read each attempt's progress by its own
    ``view.progress`` call (the obvious scan ESE made before 2026-11-30)."""

    name = "_ese_one_read_at_a_time"

    def backup_candidates(self, view):
        cands = []
        for job in view.active_jobs():
            if not job.running:
                continue
            thr = self._sigma * self._mean_x(job)
            for a in job.running.values():
                if len(a.task.attempts) != 1:
                    continue
                t_rem = self._t_rem(view.now, a, view.progress(a))
                if t_rem > thr and math.isfinite(t_rem):
                    cands.append((-t_rem, a.uid, a))
        cands.sort(key=lambda c: (c[0], c[1]))
        return [c[2] for c in cands]


@pytest.mark.parametrize("seed", [0, 1])
def test_ese_reading_a_jobs_progress_at_once_gives_the_obvious_scans_run(seed):
    """ESE reads a job's candidates' progress in one ``progress_many`` (the compiled loop):
    on crowded nodes (reads under co-located demand, which book what later reads go on
    from) the run is, bit for bit, the one per-attempt reads give."""
    kw = dict(nodes=5, slots=8, seed=seed, progress=False, record_counters=False)
    fast = simulate(crowded_workload(seed, n_jobs=20), ESE(sigma=0.5), **kw)
    slow = simulate(crowded_workload(seed, n_jobs=20), _OneReadAtATime(sigma=0.5), **kw)
    assert fast.summary["attempts"] > fast.summary["tasks"]  # it backed tasks up
    assert fast.tasks.equals(slow.tasks) and fast.jobs.equals(slow.jobs)


class _SdaOneReadAtATime(SDA):
    """SDA's pass as first written: one ``view.progress`` per unchecked original, in order,
    up to where the free slots run out."""

    name = "_sda_one_read_at_a_time"

    def reset(self) -> None:
        super().reset()
        self._ever: set[int] = set()  # every original ever tested, as first written

    def _schedule(self, view, scan):
        free = view.free_slot_count
        out: list = []
        if scan and free > 0 and self._copies > 1:
            now = view.now
            for job in view.active_jobs():
                if not job.running:
                    continue
                ex = self._mean_x(job)
                for a in list(job.running.values()):
                    if a.index != 0 or a.uid in self._ever or a.task.n_live != 1:
                        continue
                    prog = view.progress(a)
                    if prog < self.s or now <= a.launch_time:
                        continue
                    self._ever.add(a.uid)
                    t_rem = (now - a.launch_time) * (1.0 - prog) / prog
                    if t_rem > self._sigma * ex:
                        k = min(self._copies - 1, free)
                        out.extend(Launch(a.task) for _ in range(k))
                        free -= k
                        if free == 0:
                            return out
        free = self._place_started(view, free, out)
        if free:
            self._place_one_each(self._unscheduled(view), free, out)
        return out


@pytest.mark.parametrize(("seed", "slots"), [(0, 8), (1, 3), (2, 16)])
def test_sda_reading_a_jobs_progress_at_once_gives_the_obvious_scans_run(seed, slots, monkeypatch):
    """SDA reads a job's unchecked originals in one ``progress_many`` when its pass cannot run
    out of slots within the job, else one by one as before, and keeps the tested originals
    per job alive: on crowded nodes (reads under co-located demand) and with few or many
    free slots, the run is, bit for bit, the one per-attempt reads and one set of every
    tested uid give, and both ways of reading were taken."""
    calls = {"many": 0, "one": 0}
    progress_many, progress = SimView.progress_many, SimView.progress

    def many(self, attempts):
        calls["many"] += 1
        return progress_many(self, attempts)

    def one(self, attempt):
        calls["one"] += 1
        return progress(self, attempt)

    monkeypatch.setattr(SimView, "progress_many", many)
    monkeypatch.setattr(SimView, "progress", one)
    kw = dict(nodes=5, slots=slots, seed=seed, progress=False, record_counters=False)
    sda = SDA(copies=2)
    fast = simulate(crowded_workload(seed, n_jobs=20), sda, **kw)
    assert calls["many"] > 0 and calls["one"] > 0  # both ways of reading were taken
    pol = _SdaOneReadAtATime(copies=2)
    slow = simulate(crowded_workload(seed, n_jobs=20), pol, **kw)
    assert fast.summary["attempts"] > fast.summary["tasks"]  # it copied
    # originals were tested, and their uids went with their jobs
    assert len(pol._ever) > 5 and not sda._checked
    assert fast.tasks.equals(slow.tasks) and fast.jobs.equals(slow.jobs)
