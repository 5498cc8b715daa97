"""Bounded memory for one big replay: the cluster keeps a window of its contention paths.

A streaming run (``keep_history=False``) tells the cluster the oldest time its readers still
need (:meth:`Cluster.hold`): the engine the oldest live job's submission, the trace sink the
oldest buffered job's. Older path steps are dropped. Oracles: the peer that keeps every step
(``keep_paths=True``, or ``$STRAGGLER_KEEP_PATHS=1``) gives bit-identical paths, reads and
trace tables; the window never drops a held step and stays bounded over a long run.
"""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge._engine
from sim_bridge import Cluster, JobSpec, Workload
from sim_bridge._cluster import _BLOCK, _TRIM_STEPS, KEEP_PATHS_ENV
from sim_bridge._engine import Attempt, Simulator
from sim_bridge._trace_sink import TraceSink
from sim_bridge.policies import get_policy

DAY = 86400.0
KEY = ["job_id", "task_id", "attempt"]


def _same_window(keep: Cluster, win: Cluster) -> bool:
    """The windowed cluster's paths equal the keeping peer's over the window, bit for bit."""
    b = win.base_step
    if keep.horizon_steps != win.horizon_steps or keep.base_step != 0:
        return False
    same = np.array_equal(keep._levels[:, :, b:], win._levels)
    r = win._rhorizon  # rates for every node so far, the rest per node when read
    for pid in range(len(keep._profiles)):
        same &= np.array_equal(keep._rate[pid][:, b:r], win._rate[pid])
        same &= np.array_equal(keep._cum[pid][:, b : r + 1], win._cum[pid])
        ends = [win.cum_end(pid, node) for node in range(win.n_nodes)]
        same &= ends == keep._cum[pid][:, -1].tolist()
    return bool(same)


@pytest.mark.parametrize("source", ["synthetic", "markov"])
@pytest.mark.parametrize("seed", [0, 7])
def test_window_paths_equal_the_kept_paths_even_for_a_late_profile(source, seed):
    keep = Cluster(5, 2, seed, source=source, keep_paths=True)
    win = Cluster(5, 2, seed, source=source, keep_paths=False)
    for c in (keep, win):
        c.profile_id((1.0, 0.2, 0.0, 0.5))
        c._ensure_step(2 * _BLOCK + 10)
    win.hold("reader", (2 * _BLOCK - 30) * 60.0)
    assert win.base_step == 2 * _BLOCK - 30 and _same_window(keep, win)
    # a profile first seen after steps were dropped: its running sum is rebuilt from the start
    for c in (keep, win):
        c.profile_id((0.3, 1.0, 0.7, 0.0))
        c._ensure_step(3 * _BLOCK + 5)
    assert _same_window(keep, win)
    t = (3 * _BLOCK - 100) * 60.0 + 17.0
    dem = (0.1, 0.0, 0.2, 0.05)
    for read in (
        lambda c: c.end_with(3, 1, t, 5000.0, dem),
        lambda c: c.end_time(2, 0, t, 9.0e4),
        lambda c: c.work_with(4, 1, t, t + 4000.0, dem),
        lambda c: c.counter_values_now(2, t, 1, 0.1, 0.2, 0.3, dem),
        lambda c: c.levels_at(np.arange(5), np.full(5, t)).tolist(),
        lambda c: c.step_rates(1, int(t // 60.0)).tolist(),
    ):
        assert read(keep) == read(win)


def test_numpy_counters_read_the_window_like_the_kept_paths():
    keep, win = Cluster(4, 2, 3, keep_paths=True), Cluster(4, 2, 3, keep_paths=False)
    keep._synth = win._synth = None  # the NumPy reference path (no compiled extension)
    for c in (keep, win):
        c._ensure_step(_BLOCK + 50)
    win.hold("reader", (_BLOCK - 200) * 60.0)
    for c in (keep, win):
        c._ensure_step(2 * _BLOCK)  # an extension drops the released steps
    assert win.base_step == _BLOCK - 200
    t = (_BLOCK - 10) * 60.0 + 3.0
    assert keep.counters_now(1, t, 1, 0.5, 0.4, 0.3) == win.counters_now(1, t, 1, 0.5, 0.4, 0.3)
    nodes, times = np.array([0, 1, 3]), np.array([t, t + 700.0, t + 4000.0])
    z = np.zeros(3)
    a, b = (c.counters(nodes, times, z + 1, z, z, z) for c in (keep, win))
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_a_dropped_step_is_refused_with_its_time():
    c = Cluster(3, 1, 2, keep_paths=False)
    pid = c.profile_id((1, 0, 0, 0))
    c.hold("reader", 5 * 3600.0)
    c._ensure_step(_BLOCK)
    assert c.base_step == 300
    with pytest.raises(IndexError, match=r"step 1 \(t=61.0\) was dropped \(kept from step 300\)"):
        c.cum_at(0, pid, 61.0)
    with pytest.raises(IndexError, match="before the background levels kept|was dropped"):
        c.counter_values_now(0, 61.0, 0, 0.0, 0.0, 0.0)


def test_keep_paths_from_the_environment(monkeypatch):
    monkeypatch.setenv(KEEP_PATHS_ENV, "1")
    c = Cluster(2, 1, 0)
    c.hold("reader", 10 * 3600.0)
    assert c.keep_paths and c.base_step == 0 and c.window_steps == c.horizon_steps
    monkeypatch.delenv(KEEP_PATHS_ENV)
    assert not Cluster(2, 1, 0).keep_paths


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b"]), st.one_of(st.none(), st.integers(0, 3 * _BLOCK))),
        min_size=1,
        max_size=12,
    )
)
def test_a_held_step_is_never_dropped_and_released_ones_go(moves):
    """Readers hold steps forward in time (as the engine and the sink do): the window always
    starts at or before every step held; released steps go at once when they are at least
    ``_TRIM_STEPS`` and half the window, else at the next extension, which drops all."""
    c = Cluster(2, 1, 1, keep_paths=False)
    pid = c.profile_id((0.5, 0.5, 0.5, 0.5))
    last = {"a": 0, "b": 0}
    for reader, step in moves:
        if step is not None:
            step = last[reader] = max(step, last[reader], c.base_step)
            c._ensure_step(step)
        c.hold(reader, None if step is None else step * 60.0)
        held = list(c._holds.values())
        if held:
            oldest = min(held)
            assert c.base_step <= oldest
            dead = oldest - c.base_step
            assert dead < _TRIM_STEPS or 2 * dead < c.window_steps
            assert c.cum_at(1, pid, oldest * 60.0) >= 0.0  # still readable
            horizon = c.horizon_steps
            c._extend()
            assert c.base_step == min(oldest, horizon)
        assert c.window_steps == c._levels.shape[2]
        # every node's rates only as far as read (the rest per node, from the levels)
        assert c._cum[pid].shape[1] - 1 == c._rhorizon - c.base_step <= c.window_steps


def _long_workload(days: float, seed: int) -> Workload:
    """Small jobs arriving for ``days``: the clock runs over several path blocks."""
    rng = np.random.default_rng(seed)
    jobs, t, i = [], 0.0, 0
    while t < days * DAY:
        t += float(rng.exponential(1800.0))
        maps = rng.lognormal(4.0, 0.7, int(rng.integers(1, 6)))
        reds = rng.lognormal(3.5, 0.5, int(rng.integers(0, 3)))
        jobs.append(JobSpec(f"j{i}", t, maps, reds, workload="FB2009"))
        i += 1
    return Workload("FB2009", jobs)


def _stream(w: Workload, policy: str, seed: int, keep_paths: bool, **kw):
    """A streaming run (engine forgets finished jobs, the sink buffers 16 rows)."""
    cluster = Cluster(3, 2, seed, keep_paths=keep_paths)
    sink = TraceSink(cluster, row_group_rows=16, record_truth=kw.get("record_truth", False))
    pol, place = get_policy(policy), get_policy("fair")
    pol.reset()
    place.reset()
    sim = Simulator(
        cluster, [w], pol, place, seed=seed, keep_history=False, on_job_done=sink.add_job, **kw
    )
    sink.tenancy = sim._tenancy
    sim.run()
    jobs, tasks = sink.close()
    return cluster, sim, jobs, tasks


@pytest.mark.parametrize(
    "policy, seed, kw",
    [("late", 0, {}), ("none", 1, {"record_truth": True}), ("mantri", 2, {"interference": 0.0})],
)
def test_a_long_streaming_run_is_identical_and_its_window_bounded(monkeypatch, policy, seed, kw):
    # the engine updates its hold every _CHECK_EVERY events: thousands a simulated hour in a
    # real replay, a few here (sparse small jobs), so check as often as a real run would
    monkeypatch.setattr(sim_bridge._engine, "_CHECK_EVERY", 16)
    w = _long_workload(3.5, seed)
    keep, sim_k, jobs_k, tasks_k = _stream(w, policy, seed, True, **kw)
    win, sim_w, jobs_w, tasks_w = _stream(w, policy, seed, False, **kw)
    assert sim_k.events == sim_w.events
    pd.testing.assert_frame_equal(jobs_w, jobs_k, check_exact=True)
    pd.testing.assert_frame_equal(
        tasks_w.sort_values(KEY).reset_index(drop=True),
        tasks_k.sort_values(KEY).reset_index(drop=True),
        check_exact=True,
    )
    # the peer keeps every step; the window drops the days behind the clock and never
    # holds more than one block past the oldest job alive or buffered (jobs here last
    # minutes, so well under two blocks) however long the run
    assert keep.horizon_steps >= 4 * _BLOCK and keep.max_window_steps == keep.horizon_steps
    assert win.horizon_steps == keep.horizon_steps
    assert win.base_step >= 2 * _BLOCK
    assert win.max_window_steps <= 2 * _BLOCK


def _live_attempts() -> int:
    """Attempt objects the cyclic collector tracks (alive or unreachable garbage not yet
    collected: the collector is paused during a run)."""
    return sum(type(o) is Attempt for o in gc.get_objects())


def _heap_attempt(obj) -> bool:
    """A heap entry's object is an attempt (an end, a deferred solve) or holds one (a solve
    that goes on where the contention paths end: ``(attempt, PastPaths)``)."""
    return type(obj) is Attempt or (type(obj) is tuple and type(obj[0]) is Attempt)


@pytest.mark.parametrize("policy", ["late", "mantri"])
def test_a_long_streaming_run_holds_only_the_attempts_of_jobs_alive_or_buffered(policy):
    """Finished jobs leave memory once the sink has read their rows: at every job handed to
    the sink, the Attempt objects in the interpreter are at most those of the jobs alive, of
    the job the sink received last (released at the next one), of the job being handed over,
    and those still referenced by pending heap entries (stale ends of killed copies)."""
    w = _long_workload(2.0, 3)
    cluster = Cluster(3, 2, 3, keep_paths=False)
    sink = TraceSink(cluster, row_group_rows=16)
    pol, place = get_policy(policy), get_policy("fair")
    pol.reset()
    place.reset()
    checks: list[tuple[int, int]] = []

    def add_job(job):
        if job.uid % 4 == 0:
            n_att = lambda jobs: sum(len(t.attempts) for j in jobs for t in j.tasks)  # noqa: E731
            bound = (
                n_att(sim._active.values())
                + n_att(sink._received)
                + n_att([job])
                + sum(_heap_attempt(e[3]) for e in sim._heap)
            )
            checks.append((_live_attempts(), bound))
        sink.add_job(job)

    sim = Simulator(cluster, [w], pol, place, seed=3, keep_history=False, on_job_done=add_job)
    sink.tenancy = sim._tenancy
    gc.collect()  # nothing of earlier tests counted
    sim.run()
    _jobs, tasks = sink.close()
    assert len(checks) >= 20
    assert all(live <= bound for live, bound in checks), checks
    # the run made many more attempts than it ever held at once
    assert len(tasks) > 10 * max(live for live, _ in checks)
