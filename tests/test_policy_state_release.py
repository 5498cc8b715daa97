"""Every registered policy lets go of a job once it is done: after a run, the policy holds
no container of an entry for each job it saw (a streamed run of a production day would keep
one for every job ever run: ``tests/test_stationary_memory.py`` measures that for LATE).

The single-fork policies kept each job's forked stages for the whole run until 2026-12-02
(y); this test, parametrised over the registry, would have found them.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import sim_bridge
from sim_bridge import JobSpec, Workload
from sim_bridge.policies import registry

N_JOBS = 300


def _workload() -> Workload:
    rng = np.random.default_rng(11)
    t, jobs = 0.0, []
    for i in range(N_JOBS):
        t += float(rng.exponential(12.0))
        jobs.append(
            JobSpec(
                f"r{i}",
                t,
                rng.lognormal(2.5, 0.7, int(rng.integers(2, 24))),
                rng.lognormal(2.0, 0.5, int(rng.integers(0, 4))),
                workload="FB2009",
                deadline=t + 400.0,
            )
        )
    return Workload("FB2009", jobs)


def _containers(obj, path: str = "policy", depth: int = 0) -> Iterator[tuple[str, int]]:
    """``(path, size)`` of every dict, set, list and deque the policy reaches through its
    attributes (two levels down)."""
    if depth > 2:
        return
    attrs = dict(getattr(obj, "__dict__", {}))
    for slot in getattr(type(obj), "__slots__", ()):
        if hasattr(obj, slot):
            attrs[slot] = getattr(obj, slot)
    for name, value in attrs.items():
        if hasattr(value, "__len__") and not isinstance(value, (str, bytes, np.ndarray)):
            try:
                yield f"{path}.{name}", len(value)
            except TypeError:
                continue
        if hasattr(value, "__dict__") and not isinstance(value, type):
            yield from _containers(value, f"{path}.{name}", depth + 1)


@pytest.mark.parametrize("name", sorted(registry))
def test_a_policy_holds_nothing_a_finished_job(name, tmp_path):
    policy = registry[name]()
    if registry[name].kind == "placement":
        spec, place = "late", policy
    else:
        spec, place = policy, "fair"
    r = sim_bridge.simulate(
        _workload(),
        spec,
        place,
        nodes=40,
        slots=2,
        seed=2,
        trace_sink=tmp_path / "t.parquet",
        progress=False,
    )
    assert r.summary["complete"] and r.summary["jobs"] == N_JOBS
    # what a policy may keep: per node (40), per live job, or a bounded memo (Hadoop's
    # retry times, pruned past 64 entries and twice those still due); one entry a job seen
    # would be 300
    grown = {p: n for p, n in _containers(policy) if n >= N_JOBS // 2}
    assert not grown, f"{name} holds, after every job is done: {grown}"


def test_the_walk_finds_a_container_of_every_job():
    class Keeper:
        def __init__(self):
            self.inner = type("Inner", (), {})()
            self.inner.seen = {i: i for i in range(N_JOBS)}

    assert ("policy.inner.seen", N_JOBS) in set(_containers(Keeper()))
