"""Issue 13: a streaming run solves end times only within the contention paths drawn so far.

A solve whose work is not done by the end of the paths stops there
(:class:`~sim_bridge._cluster.PastPaths`) and goes on when the clock gets there
(:meth:`~sim_bridge._cluster.Cluster.end_resume`). The oracle is the unbounded solve on a
fresh cluster of the same parameters: the resumed end is the same float, bit for bit, and the
bounded solve draws no block ahead for it. A streamed run therefore gives the in-memory run's
tables exactly, even where attempts run days past the paths, while its paths follow its clock.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge import Cluster, JobSpec, Workload
from sim_bridge._cluster import _BLOCK, _CHUNK_MIN, PastPaths
from sim_bridge._engine import Simulator
from sim_bridge._simulate import _tables
from sim_bridge._trace_sink import TraceSink
from sim_bridge.policies import get_policy

KEY = ["job_id", "task_id", "attempt"]
DAY = _BLOCK * 60.0
PROFILE = (0.5, 0.2, 1.0, 0.3)


def _pair(kappa: float, keep_paths: bool) -> tuple[Cluster, Cluster, int]:
    """A bounded cluster (a window held from time 0 unless ``keep_paths``) and its unbounded
    oracle, the same parameters, with the profile registered in both."""
    mk = dict(n_nodes=4, slots=2, seed=7, kappa=kappa)
    bounded = Cluster(**mk, keep_paths=keep_paths)
    if not keep_paths:
        bounded.hold("test", 0.0)
    oracle = Cluster(**mk, keep_paths=True)
    pid = bounded.profile_id(PROFILE)
    assert oracle.profile_id(PROFILE) == pid
    return bounded, oracle, pid


def _resume_all(c: Cluster, node: int, pid: int, end, demand, horizons: list[int]):
    """Go on with ``end`` until it is a time; each resume may draw one block only."""
    while isinstance(end, PastPaths):
        assert end.at == c.horizon_steps * c.dt  # it stopped where the paths end
        before = c.horizon_steps
        end = c.end_resume(node, pid, end, demand)
        assert c.horizon_steps <= before + _BLOCK
        horizons.append(c.horizon_steps)
    return end


@settings(max_examples=60, deadline=None)
@given(
    node=st.integers(0, 3),
    t0=st.floats(0.0, 1.5 * DAY),
    work=st.floats(1.0, 4.0 * DAY),
    demand=st.sampled_from(
        [None, (0.0, 0.0, 0.0, 0.0), (0.1, 0.0, 0.3, 0.0), (0.5, 0.4, 0.2, 0.6)]
    ),
    kappa=st.sampled_from([1.0, 8.0]),
    keep_paths=st.booleans(),
)
def test_a_bounded_solve_resumed_is_the_unbounded_solve_bit_for_bit(
    node, t0, work, demand, kappa, keep_paths
):
    c, oracle, pid = _pair(kappa, keep_paths)
    c.levels_at([0], [t0])  # the paths reach the start, as the clock would
    horizon = c.horizon_steps
    if demand is None:
        want = oracle.end_time(node, pid, t0, work)
        end = c.end_from(node, pid, t0, *c.launch_point(node, pid, t0), work, within=True)
    else:
        want = oracle.end_with(node, pid, t0, work, demand)
        end = c.end_with(node, pid, t0, work, demand, within=True)
    near_end = int(t0 // c.dt) + _CHUNK_MIN + 1 >= horizon
    if not near_end:  # only the first steps, walked one at a time, may read past the paths
        assert c.horizon_steps == horizon
    if isinstance(end, PastPaths):
        assert end.at < want  # it stops before the true end: nothing is delayed
    horizons: list[int] = []
    got = _resume_all(c, node, pid, end, demand, horizons)
    assert type(got) is float and got == want
    # the paths were drawn as far as the end needed, no further than the unbounded solve's
    assert c.horizon_steps <= max(oracle.horizon_steps, horizon)


def test_a_solve_done_within_the_paths_returns_its_end():
    c, oracle, pid = _pair(1.0, False)
    dem = (0.1, 0.0, 0.3, 0.0)
    for work in (300.0, 2e4):  # ends in the first steps, and after chunks of steps
        end = c.end_with(1, pid, 100.0, work, dem, within=True)
        assert type(end) is float and end == oracle.end_with(1, pid, 100.0, work, dem)
        assert end < c.horizon_steps * c.dt == DAY


def _far_workload() -> Workload:
    """Short jobs sharing three nodes with tasks that run days past the first day-block
    under a strong contention response (``kappa`` below): their solves under co-located
    demand would reach far past the paths."""
    rng = np.random.default_rng(11)
    jobs = [JobSpec("long0", 0.0, [1800.0, 2400.0, 3000.0], workload="FB2009")]
    t = 0.0
    for i in range(60):
        t += float(rng.exponential(600.0))
        maps = rng.lognormal(4.0, 0.6, int(rng.integers(1, 5)))
        reds = rng.lognormal(3.5, 0.5, int(rng.integers(0, 3)))
        jobs.append(JobSpec(f"j{i}", t, maps, reds, workload="FB2009"))
    jobs.append(JobSpec("long1", t, [2.5 * DAY / 40.0], workload="FB2009"))
    return Workload("FB2009", jobs)


def _run(w: Workload, policy: str, stream: bool):
    cluster = Cluster(3, 2, 4, kappa=40.0, keep_paths=False)
    pol, place = get_policy(policy), get_policy("fair")
    pol.reset()
    place.reset()
    seen: list[tuple[float, int]] = []
    if stream:
        sink = TraceSink(cluster, row_group_rows=16)

        def on_done(job):
            seen.append((sim.now, cluster.horizon_steps))
            sink.add_job(job)

        sim = Simulator(cluster, [w], pol, place, seed=4, keep_history=False, on_job_done=on_done)
        sink.tenancy = sim._tenancy
        sim.run()
        _jobs, tasks = sink.close()
    else:
        sim = Simulator(cluster, [w], pol, place, seed=4)
        sim.run()
        tasks = _tables(sim, True)[1]
    return sim, cluster, tasks.sort_values(KEY).reset_index(drop=True), seen


@pytest.mark.parametrize("policy", ["none", "late"])
def test_a_streamed_run_with_ends_days_past_the_paths_equals_the_in_memory_run(policy):
    w = _far_workload()
    mem, mem_cl, mem_tasks, _ = _run(w, policy, stream=False)
    st_, st_cl, st_tasks, seen = _run(w, policy, stream=True)
    assert st_.events == mem.events
    pd.testing.assert_frame_equal(st_tasks, mem_tasks, check_exact=True)
    # the run does reach far: in memory the paths were drawn days ahead of the clock ...
    assert mem_tasks["end_time"].max() > 2 * DAY
    first_done = min(t for t, _ in seen)
    assert mem_cl.horizon_steps * mem_cl.dt > first_done + 2 * DAY
    # ... streamed they follow the clock: at every job's end, at most a block and the few
    # steps of a solve's first walk past the block the clock is in
    for now, horizon in seen:
        assert horizon * st_cl.dt <= (now // DAY + 2) * DAY, (now, horizon)
