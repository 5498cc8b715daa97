"""The engine's rooms: the state classes live in sim_bridge._jobs (re-exported by the engine and
the package), and the attempt physics' cached progress integration equals the cluster's own
integration bit for bit (the oracle: ``Cluster.work_with``)."""

from __future__ import annotations

import numpy as np
import pytest

import sim_bridge
from sim_bridge import Cluster, JobSpec, Workload, _engine, _jobs, get_policy
from sim_bridge._cluster import _CHUNK_MIN
from sim_bridge.world import _attempts
from sim_bridge.world._attempts import AttemptPhysics


def test_state_classes_live_in_jobs_and_stay_importable_from_the_engine():
    for name in ("Attempt", "Task", "Job"):
        cls = getattr(_jobs, name)
        assert getattr(_engine, name) is cls
        assert getattr(sim_bridge, name) is cls
        assert name in _engine.__all__ and name in _jobs.__all__


class _Physics(AttemptPhysics):
    """The attempt physics on a bare cluster (what ``_work_under`` reads of the simulator)."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster


def _attempt(node: int) -> _jobs.Attempt:
    job = _jobs.Job()
    job.job_id, job.finish_time = "j0", None
    task = _jobs.Task(0, job, 0, 0, "map", 100.0, 0.5)
    return _jobs.Attempt(0, task, 0, node, 0.0, 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_work_under_equals_cluster_work_with_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    cluster = Cluster(4, 3, seed=seed)
    pid = cluster.profile_id((0.6, 0.2, 0.9, 0.3))
    phys = _Physics(cluster)
    dt = cluster.dt
    for node in range(cluster.n_nodes):
        att = _attempt(node)
        att._dem = dem = tuple(rng.uniform(0.0, 0.4, 4).tolist())
        t = float(rng.uniform(0.0, 3 * dt))
        for i in range(60):
            if i % 17 == 16:  # a new demand (equal values once: a distinct tuple)
                att._dem = dem = tuple(dem) if i == 16 else tuple(rng.uniform(0, 0.4, 4).tolist())
            # reads a few seconds apart (the cache's case), across steps, and past _CHUNK_MIN
            gap = rng.choice([rng.uniform(0, 10), rng.uniform(0, 3 * dt), (_CHUNK_MIN + 2) * dt])
            t1 = t + float(gap)
            got = phys._work_under(att, pid, t, t1)
            assert got == cluster.work_with(node, pid, t, t1, dem)
            t = t1


def _run(nodes: int, slots: int, seed: int):
    rng = np.random.default_rng(seed)
    jobs = [
        JobSpec(
            f"j{i}",
            float(i * 20.0),
            rng.uniform(20, 120, 12),
            rng.uniform(20, 60, 3),
        )
        for i in range(8)
    ]
    speculation, placement = get_policy("late"), get_policy("fair")
    speculation.reset()
    placement.reset()
    sim = _engine.Simulator(
        Cluster(nodes, slots, seed=seed),
        [Workload("SYN", jobs)],
        speculation,
        placement,
        seed=seed,
    )
    sim.run()
    return sim


def test_co_located_run_is_deterministic_and_consistent():
    """Many tenants per node (every launch and end re-solves the co-tenants, progress reads
    under demand use the cached step rate): the same seed gives the same attempts, and a
    finished attempt has done its work when it ends."""
    a, b = _run(3, 6, 5), _run(3, 6, 5)
    rows_a = [(x.uid, x.node, x.launch_time, x.end_time, x.state) for x in a.attempts]
    rows_b = [(x.uid, x.node, x.launch_time, x.end_time, x.state) for x in b.attempts]
    assert rows_a == rows_b
    assert all(j.finish_time is not None for j in a.jobs)
    for att in a.attempts:
        if att.state == 1:  # finished
            assert att._seg_done == pytest.approx(att._work, rel=1e-9)


@pytest.mark.parametrize("policy", ["none", "late"])
def test_deferred_end_solves_give_the_eager_run(policy, monkeypatch):
    """Runs defer end solves under co-located demand (``DEFER_SOLVES``); the oracle solves
    each at once. On a cluster crowded enough that every launch and end re-solves its
    co-tenants, both see the same attempts, bit for bit, in memory and streamed
    (keep_history=False: solves within the contention paths drawn so far)."""

    def run(keep: bool):
        rng = np.random.default_rng(11)
        jobs = [
            JobSpec(f"j{i}", float(i * 15.0), rng.uniform(20, 150, 16), rng.uniform(20, 60, 4))
            for i in range(10)
        ]
        spec, place = get_policy(policy), get_policy("fair")
        spec.reset()
        place.reset()
        done: list = []
        sim = _engine.Simulator(
            Cluster(2, 8, seed=3),
            [Workload("SYN", jobs)],
            spec,
            place,
            seed=2,
            keep_history=keep,
            on_job_done=None if keep else done.append,
        )
        sim.run()
        jobs_done = sim.jobs if keep else done
        rows = [
            (a.task.task_id, a.index, a.node, a.launch_time, a.end_time, a.state)
            for j in jobs_done
            for t in j.tasks
            for a in t.attempts
        ]
        return sorted(rows), sim.events

    deferrals: list[float] = []
    defer = AttemptPhysics._defer

    def counting_defer(self, att, now, work):
        deferrals.append(now)
        return defer(self, att, now, work)

    monkeypatch.setattr(AttemptPhysics, "_defer", counting_defer)
    monkeypatch.setattr(_attempts, "DEFER_SOLVES", False)
    eager = run(True)
    assert run(False) == eager
    assert not deferrals  # solved at once
    monkeypatch.setattr(_attempts, "DEFER_SOLVES", True)
    deferred = run(True)
    assert len(deferrals) > 100  # the crowded nodes defer many solves
    assert deferred == eager
    deferrals.clear()
    assert run(False) == eager and len(deferrals) > 100  # streamed, deferred too
