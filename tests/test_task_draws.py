"""Issue 13: the originals' draws are made job by job as jobs arrive (``TaskDraws.job``), not
for the whole workload up front; the oracle is the whole workload's arrays drawn at once
(``TaskDraws.whole``, the compiled loop's, and the engine's before): the same floats.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sim_bridge import JobSpec, Workload
from sim_bridge._task_draws import TaskDraws

sizes = st.lists(st.tuples(st.integers(1, 40), st.integers(0, 12)), min_size=1, max_size=25)


def _specs(shape, seed: int, alphas=(1.5, 2.4)):
    rng = np.random.default_rng(seed)
    ws = [Workload(f"W{k}", [], tail_alpha=a) for k, a in enumerate(alphas)]
    out = []
    for i, (n_m, n_r) in enumerate(shape):
        spec = JobSpec(f"j{i}", float(i), rng.lognormal(3, 1, n_m), rng.lognormal(2, 1, n_r))
        out.append((spec, ws[i % len(ws)]))
    return out


@settings(max_examples=40, deadline=None)
@given(
    shape=sizes,
    seed=st.integers(0, 2**31),
    noise=st.booleans(),
    skew=st.sampled_from([(0.0, 0.0), (0.5, 0.3), (1.2, 0.0)]),
)
def test_the_draws_job_by_job_are_the_whole_workloads(shape, seed, noise, skew):
    specs = _specs(shape, seed)
    draws = TaskDraws(specs, seed, noise=noise, skew=skew)
    want = draws.whole()
    got = [draws.job(i) for i in range(len(specs))]
    for k in range(3):
        joined = np.array([x for g in got for x in g[k]])
        assert joined.tobytes() == want[k].tobytes()  # bit for bit, -0.0 and all
    n_tasks = [a + b for a, b in shape]
    assert draws.task_start.tolist() == [sum(n_tasks[:i]) for i in range(len(shape))]


def test_jobs_are_drawn_in_arrival_order_only():
    draws = TaskDraws(_specs([(2, 1), (3, 0), (1, 1)], 0), 0)
    draws.job(0)
    with pytest.raises(RuntimeError, match="job 2 asked for, job 1 comes next"):
        draws.job(2)


def test_a_duration_distribution_is_drawn_at_once_and_sliced():
    specs = _specs([(3, 2), (4, 0)], 1)
    dist = stats.gamma(2.0)
    draws = TaskDraws(specs, 5, duration_dist=dist)
    u, work, m = draws.whole()
    ref = dist.rvs(size=9, random_state=np.random.default_rng([5, 8]))
    assert u.tolist() == ref.tolist() and m.tolist() == [1.0] * 9
    assert draws.job(1)[0] == u[5:].tolist() and draws.job(0)[1] == work[:5].tolist()
    bad = stats.norm(-5.0)
    with pytest.raises(ValueError, match="negative or non-finite"):
        TaskDraws(specs, 5, duration_dist=bad)


@settings(max_examples=20, deadline=None)
@given(shape=sizes, seed=st.integers(0, 2**31), whole_first=st.booleans())
def test_unread_u_is_shared_and_changes_no_other_draw(shape, seed, whole_first):
    """``job(i, u_read=False)``: ``u`` is one shared 0.0 a task; work and noise are the
    floats ``job(i)`` gives, job by job and sliced from the whole workload's arrays."""
    specs = _specs(shape, seed)
    ref = TaskDraws(specs, seed)
    shared = TaskDraws(specs, seed)
    if whole_first:
        shared.whole()
    for i, (n_m, n_r) in enumerate(shape):
        u, work, m = shared.job(i, u_read=False)
        u_ref, work_ref, m_ref = ref.job(i)
        assert len(u) == n_m + n_r == len(u_ref) and len({id(x) for x in u}) == 1
        assert u[0] == 0.0 and work == work_ref and m == m_ref
