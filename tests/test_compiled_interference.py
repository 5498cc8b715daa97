"""Co-located contention computed in C against its Python reference.

``sim_bridge._tenants_core.TenantRates`` walks the step-by-step part of ``Cluster.end_with``
and ``Cluster.work_with`` (and ``Cluster.rate_with``); ``Cluster._rate_with_py`` and the
Python walks are the oracle. A cluster whose ``_trates`` is None runs the reference, so twin
clusters (same parameters) must give the same floats bit for bit and extend their contention
paths at the same reads. Whole default-world runs must give ``DataFrame.equals`` tables with
and without the extension, and with and without the heap economy of deferred solves
(``AttemptPhysics._resolve`` pushes no EV_SOLVE when a pending one comes due no later).
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pandas as pd
import pytest

import sim_bridge
import sim_bridge._cluster as cluster_mod
from sim_bridge import JobSpec, Workload
from sim_bridge._cluster import Cluster
from sim_bridge._jobs import list_memo
from sim_bridge.world._attempts import AttemptPhysics

pytestmark = pytest.mark.skipif(
    cluster_mod.TenantRates is None, reason="sim_bridge._tenants_core is not built"
)

PROFILES = ((0.5, 0.2, 1.0, 0.3), (1.0, 0.0, 0.1, 0.0), (0.0, 0.7, 0.0, 1.2))


def _twins(n_nodes=5, slots=4, seed=3, **kw):
    """A cluster on the compiled walk and one on the Python reference, same parameters."""
    co, py = Cluster(n_nodes, slots, seed, **kw), Cluster(n_nodes, slots, seed, **kw)
    py._trates = None
    for c in (co, py):
        for prof in PROFILES:
            c.profile_id(prof)
    assert co._trates is not None
    return co, py


def _demands(rng, n):
    """Demands as the engine forms them (sums of tenants' demands), zeros and a saturating one."""
    out = [tuple(float(v) for v in rng.uniform(0.0, 0.4, 4) * (rng.random(4) < 0.7))
           for _ in range(n)]  # fmt: skip
    return out + [(0.0, 0.0, 0.3, 0.0), (0.9, 0.9, 0.9, 0.9)]


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_one_step_rate_is_the_reference_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    co, py = _twins(seed=seed)
    for dem in _demands(rng, 30):
        node, pid = int(rng.integers(5)), int(rng.integers(len(PROFILES)))
        k = int(rng.integers(0, co.horizon_steps + 3000))  # within, at the end, past the paths
        assert co.rate_with(node, pid, k, dem) == py.rate_with(node, pid, k, dem)
        assert co.horizon_steps == py.horizon_steps  # the same reads extended the paths


@pytest.mark.parametrize("seed", [0, 4])
def test_a_chunk_of_rates_is_each_steps_rate_bit_for_bit(seed):
    """``rates_with`` (a chunk of steps at once: ``TenantRates.rates``, or the NumPy reference)
    gives each step the rate the scalar reference gives it alone. The chunk's load was a BLAS
    product, whose four-term sums OpenBLAS rounds by the CPU's kernel."""
    rng = np.random.default_rng(seed)
    co, py = _twins(seed=seed)
    for dem in _demands(rng, 20):
        node, pid = int(rng.integers(5)), int(rng.integers(len(PROFILES)))
        m = int(rng.integers(1, 200))
        k0 = int(rng.integers(0, co.horizon_steps - m - 1))  # within the paths
        want = [py._rate_with_py(node, pid, k, dem) for k in range(k0, k0 + m)]
        assert co.rates_with(node, pid, k0, m, dem).tolist() == want
        assert py.rates_with(node, pid, k0, m, dem).tolist() == want
    assert co._trates.rates(0, 0, co.horizon_steps - 2, 3, (0.0,) * 4) is None  # past them


@pytest.mark.parametrize("seed", [0, 6])
def test_bounded_chunk_walks_stop_where_the_python_walk_stops(seed):
    """A bounded solve (``within=True``) walks its chunks in C up to the first chunk past the
    paths, then hands it to the Python walk: it stops at the same chunk with the same work
    left, and goes on (``end_resume``) to the same float as the Python walk and as the
    unbounded solve."""
    from sim_bridge._cluster import PastPaths

    rng = np.random.default_rng(seed)
    co, py = _twins(seed=seed, keep_paths=False)
    free = Cluster(5, 4, seed, keep_paths=False)
    for prof in PROFILES:
        free.profile_id(prof)
    stops = 0
    for dem in _demands(rng, 8):
        node, pid = int(rng.integers(5)), int(rng.integers(len(PROFILES)))
        end_of_paths = co.horizon_steps * 60.0
        t0 = end_of_paths - float(rng.uniform(600.0, 20000.0))
        work = float(rng.uniform(2e4, 8e4))
        got, want = (c.end_with(node, pid, t0, work, dem, within=True) for c in (co, py))
        assert type(got) is type(want)
        if isinstance(got, PastPaths):
            stops += 1
            assert got.at == want.at and got.state == want.state
            while isinstance(got, PastPaths):
                got = co.end_resume(node, pid, got, dem)
                want = py.end_resume(node, pid, want, dem)
                assert type(got) is type(want)
                if isinstance(got, PastPaths):
                    assert got.state == want.state
        assert got == want == free.end_with(node, pid, t0, work, dem)
    assert stops >= 5  # most solves ran past the paths


@pytest.mark.parametrize("seed", [0, 2, 5])
def test_end_and_work_under_demand_are_the_reference_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    co, py = _twins(seed=seed)
    for i, dem in enumerate(_demands(rng, 24)):
        node, pid = int(rng.integers(5)), int(rng.integers(len(PROFILES)))
        # starts anywhere, or just before the end of the paths (the walk hands the last step
        # to Python, which extends them); short and long work (the vectorised chunks)
        edge = co.horizon_steps * 60.0 - float(rng.uniform(1, 500))
        t0 = edge if i % 6 == 5 else float(rng.uniform(0, 1e5))
        work = float([rng.uniform(0, 90), rng.uniform(90, 3000), rng.uniform(1e4, 5e4)][i % 3])
        end = co.end_with(node, pid, t0, work, dem)
        assert end == py.end_with(node, pid, t0, work, dem)
        assert co.horizon_steps == py.horizon_steps
        t1 = float(t0 + rng.uniform(0, 1.5) * (end - t0))
        assert co.work_with(node, pid, t0, t1, dem) == py.work_with(node, pid, t0, t1, dem)
        # the solve's own closed form: the work done by its end is the work
        assert math.isclose(co.work_with(node, pid, t0, end, dem), work, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("memo_kind", ["list", "RateMemo"])
def test_progress_reads_with_a_memo_are_the_reference(memo_kind):
    """A speculation scan's reads: successive t1 in one step, the memo kept across reads (the
    compiled walk's memo a list, or a ``RateMemo`` read and written in its C fields; the
    reference's a list)."""
    if memo_kind == "RateMemo":
        new_memo = pytest.importorskip("sim_bridge._attempt_core").RateMemo
    else:
        new_memo = list_memo
    rng = np.random.default_rng(11)
    co, py = _twins()
    for dem in _demands(rng, 10):
        node, pid = int(rng.integers(5)), int(rng.integers(len(PROFILES)))
        memo_co, memo_py = new_memo(), list_memo()
        t0 = float(rng.uniform(0, 5e4))
        t = t0
        for _ in range(40):
            t += float(rng.choice([0.5, 7.0, 61.0, 400.0]))
            a = co.work_with(node, pid, t0, t, dem, memo_co)
            assert a == py.work_with(node, pid, t0, t, dem, memo_py)
            assert list(memo_co) == memo_py and type(memo_co[2]) is float
            assert co.horizon_steps == py.horizon_steps
        # no memo: the same value (the memo saves reads, it changes nothing)
        assert co.work_with(node, pid, t0, t, dem) == a


def test_a_window_drops_steps_alike_and_the_walk_never_reads_them():
    co, py = _twins(keep_paths=False)
    dem = (0.1, 0.0, 0.2, 0.0)
    for c in (co, py):
        c.hold("me", 3 * 3600.0)
        c.levels_at([0], [1440 * 60.0])  # extend: steps before 3 h are dropped
    assert co.base_step == py.base_step > 0
    for c in (co, py):
        with pytest.raises(IndexError, match="was dropped"):
            c.end_with(1, 0, 60.0, 500.0, dem)
        with pytest.raises(IndexError, match="was dropped"):
            c.work_with(1, 0, 60.0, 200.0, dem)
    t0 = 4 * 3600.0
    assert co.end_with(1, 0, t0, 500.0, dem) == py.end_with(1, 0, t0, 500.0, dem)


def test_a_cluster_pickles_and_deep_copies_with_its_compiled_rates():
    co, _py = _twins()
    dem = (0.2, 0.1, 0.0, 0.3)
    want = co.end_with(2, 1, 1234.5, 777.0, dem)
    for twin in (pickle.loads(pickle.dumps(co)), copy.deepcopy(co)):
        assert twin._trates is not None
        assert twin.end_with(2, 1, 1234.5, 777.0, dem) == want
        assert twin.rate_with(2, 1, 20, dem) == co.rate_with(2, 1, 20, dem)


def _tables(
    monkeypatch, workload, *, python_physics=False, push_every_solve=False, numpy_chunks=False, **kw
):
    with monkeypatch.context() as m:
        if python_physics:
            m.setattr(cluster_mod, "TenantRates", None)
        if numpy_chunks:  # the steps walked in C, the chunks in NumPy
            m.setattr(cluster_mod, "CHUNKS_IN_C", False)
        if push_every_solve:  # the heap economy off: every deferral pushes its EV_SOLVE
            m.setattr(AttemptPhysics, "_due", lambda self, att, pend: math.inf)
        kw.setdefault("progress", False)
        r = sim_bridge.simulate(workload, engine="python", **kw)
    assert r.summary["engine"] == "python"
    return r.jobs, r.tasks


WORLDS = [
    pytest.param("SYN", dict(hours=0.1, nodes=12, slots=4), id="syn-4-slots"),
    pytest.param("SYN", dict(hours=0.1, nodes=10, slots=2, policy="late"), id="syn-late"),
    pytest.param(
        "SYN", dict(hours=0.1, nodes=8, slots=6, bad_node_share=0.3, seed=4), id="bad-nodes"
    ),
    pytest.param("SYN", dict(hours=0.1, nodes=8, slots=4, skew=(1.0, 1.5)), id="strong-skew"),
    pytest.param("SYN", dict(hours=0.1, nodes=8, slots=4, record_truth=True), id="truth"),
    pytest.param("SYN", dict(hours=0.1, nodes=8, slots=4, placement="fifo"), id="fifo"),
]


@pytest.mark.parametrize(("workload", "kw"), WORLDS)
def test_default_world_runs_are_the_python_physics_bit_for_bit(monkeypatch, workload, kw):
    jobs, tasks = _tables(monkeypatch, workload, **kw)
    ref_jobs, ref_tasks = _tables(monkeypatch, workload, python_physics=True, **kw)
    assert len(tasks) > 0 and jobs.equals(ref_jobs) and tasks.equals(ref_tasks)


@pytest.mark.parametrize(("workload", "kw"), WORLDS[:3])
def test_chunks_walked_in_numpy_beside_steps_in_c_change_nothing(monkeypatch, workload, kw):
    jobs, tasks = _tables(monkeypatch, workload, **kw)
    ref_jobs, ref_tasks = _tables(monkeypatch, workload, numpy_chunks=True, **kw)
    assert len(tasks) > 0 and jobs.equals(ref_jobs) and tasks.equals(ref_tasks)


@pytest.mark.parametrize(("workload", "kw"), WORLDS[:3])
def test_deferred_solves_sharing_a_heap_entry_change_nothing(monkeypatch, workload, kw):
    jobs, tasks = _tables(monkeypatch, workload, **kw)
    ref_jobs, ref_tasks = _tables(monkeypatch, workload, push_every_solve=True, **kw)
    assert jobs.equals(ref_jobs) and tasks.equals(ref_tasks)


def test_real_workloads_are_the_python_physics_bit_for_bit(monkeypatch, shared_data_dir):
    for name, kw in (
        ("FB2009", dict(hours=0.5, nodes=20, slots=2)),
        ("FB2010", dict(hours=0.02, nodes=60, slots=10)),
    ):
        kw = dict(kw, data_dir=shared_data_dir)
        jobs, tasks = _tables(monkeypatch, name, **kw)
        ref_jobs, ref_tasks = _tables(monkeypatch, name, python_physics=True, **kw)
        assert len(tasks) > 0 and jobs.equals(ref_jobs) and tasks.equals(ref_tasks), name


def test_a_streamed_run_is_the_python_physics_bit_for_bit(monkeypatch, tmp_path):
    kw = dict(hours=0.1, nodes=8, slots=4, policy="late")
    for physics, out in ((False, tmp_path / "c.parquet"), (True, tmp_path / "p.parquet")):
        with monkeypatch.context() as m:
            if physics:
                m.setattr(cluster_mod, "TenantRates", None)
            sim_bridge.simulate("SYN", trace_sink=out, progress=False, **kw)
    assert pd.read_parquet(tmp_path / "c.parquet").equals(pd.read_parquet(tmp_path / "p.parquet"))


def test_the_compiled_loop_still_refuses_co_located_contention_and_auto_says_why():
    jobs = Workload("w", [JobSpec("a", 0.0, [30.0, 40.0, 50.0], [20.0])])
    r = sim_bridge.simulate(jobs, "none", "fifo", nodes=1, slots=3, progress=False)
    assert r.summary["engine"] == "python"
    with pytest.raises(ValueError, match="engine='compiled': interference > 0"):
        sim_bridge.simulate(jobs, "none", "fifo", nodes=1, slots=3, engine="compiled")
