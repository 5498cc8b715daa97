"""A stage's base work held as runs of equal values (:mod:`sim_bridge._work_runs`): packing
gives the array back bit for bit, packs exactly when the rule says, and a ``JobSpec`` reads,
checks and replays the same with its stages packed or not."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest
from _crowded import assert_same_tables
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from sim_bridge import JobSpec, Workload, _work_runs
from sim_bridge._work_runs import PACK_MIN_TASKS, pack_work, unpack_work, work_size, work_values
from sim_bridge._workload_replay import swim_jobs

_VALUES = st.sampled_from(
    [1.0, 2.5, 0.0, -0.0, math.inf, -1.0, float("nan"), 3e-300, 7.25, 1.0 + 2**-52]
)
# runs of a value, so arrays with few runs (packed) and many (kept) both come up
_RUNS = st.lists(st.tuples(_VALUES, st.integers(1, 90)), max_size=12)


def _array(runs) -> np.ndarray:
    return np.array([v for v, k in runs for _ in range(k)], dtype=float)


def _runs_by_bits(w: np.ndarray) -> int:
    """How many maximal stretches of equal bits ``w`` has (the slow, obvious count)."""
    bits = [x.tobytes() for x in w]
    return sum(1 for i in range(len(bits)) if i == 0 or bits[i] != bits[i - 1])


@settings(max_examples=300, deadline=None)
@given(runs=_RUNS, nan_payload=st.booleans())
def test_packing_gives_the_array_back_bit_for_bit_and_packs_by_the_rule(runs, nan_payload):
    w = _array(runs)
    if nan_payload and w.size:
        w.view(np.uint64)[-1] = 0x7FF8_0000_0000_0001  # a NaN with a payload
    p = pack_work(w)
    n_runs = _runs_by_bits(w)
    assert isinstance(p, tuple) == (w.size >= PACK_MIN_TASKS and 4 * n_runs <= w.size)
    back = unpack_work(p)
    assert back.dtype == np.float64 and back.shape == w.shape
    assert back.tobytes() == w.tobytes()
    assert work_size(p) == w.size
    if isinstance(p, tuple):
        assert p[0].size == n_runs and int(p[1].sum()) == w.size and p[1].min() >= 1
        assert not back.flags.writeable
        # the values, one a run, in order: what the checks read
        firsts = [i for i in range(w.size) if i == 0 or w[i].tobytes() != w[i - 1].tobytes()]
        assert work_values(p).tobytes() == w[firsts].tobytes()
    else:
        assert p is w


@settings(max_examples=200, deadline=None)
@given(maps=_RUNS.filter(bool), reds=_RUNS)
def test_a_jobspec_reads_and_checks_its_work_as_the_arrays_it_was_given(maps, reds):
    m, r = _array(maps), _array(reds)

    def outcome(pack_min: int):
        old = _work_runs.PACK_MIN_TASKS
        _work_runs.PACK_MIN_TASKS = pack_min
        try:
            j = JobSpec("j", 1.0, m, r)
        except ValueError as e:
            return ("error", str(e))
        finally:
            _work_runs.PACK_MIN_TASKS = old
        return (
            j.map_work.tobytes(),
            j.reduce_work.tobytes(),
            j.n_map,
            j.n_reduce,
            j.n_tasks,
            j.critical_path,
        )

    packed, kept = outcome(PACK_MIN_TASKS), outcome(10**12)
    assert packed == kept
    if packed[0] != "error":
        # the oracle: the longest map plus the longest reduce of the arrays themselves
        assert packed[2:5] == (m.size, r.size, m.size + r.size)
        assert packed[5] == float(m.max()) + (float(r.max()) if r.size else 0.0)


def test_a_big_uniform_stage_holds_its_runs_not_its_tasks():
    (j,) = swim_jobs(
        [("a", 0.0, 100_000 * 2**20 + 5, 3 * 2**30, 2**20)],
        "FB2010",
        hours=None,
        scale=1.0,
        block_size=2**20,
    )
    held = [j.__dict__["_map_work"], j.__dict__["_reduce_work"]]
    assert j.n_map == 100_001 and j.n_reduce == 3
    assert isinstance(held[0], tuple) and held[0][0].size == 2  # 100,000 blocks and the rest
    assert sum(a.nbytes for a in held[0]) + held[1].nbytes < 100
    w = j.map_work
    assert w.size == 100_001 and np.all(w[:-1] == w[0]) and w[-1] < w[0]
    with pytest.raises(ValueError, match="read-only"):
        w[0] = 1.0


def test_a_bad_value_in_a_packed_stage_is_named_as_before():
    w = np.full(500, 4.0)
    w[300] = np.nan
    with pytest.raises(ValueError, match=r"job 'big': map_work must be finite and > 0, got nan"):
        JobSpec("big", 0.0, w)
    with pytest.raises(ValueError, match="got -2.0"):
        JobSpec("big", 0.0, np.concatenate([np.ones(100), [-2.0, np.inf], np.ones(100)]))


def test_replace_and_pickle_keep_the_work():
    j = JobSpec("j", 2.0, np.full(1_000, 3.0), np.full(70, 5.0), workload="FB2009")
    k = dataclasses.replace(j, submit_time=9.0)
    back = pickle.loads(pickle.dumps(j))
    for other in (k, back):
        assert other.map_work.tobytes() == j.map_work.tobytes()
        assert other.reduce_work.tobytes() == j.reduce_work.tobytes()
        assert other.critical_path == j.critical_path == 8.0
    assert isinstance(back.__dict__["_map_work"], tuple)


def test_small_stages_are_the_arrays_given():
    maps = np.array([1.0, 2.0, 3.0])
    j = JobSpec("j", 0.0, maps)
    assert np.shares_memory(j.map_work, maps)  # as before: no copy, no flag changed
    assert j.map_work.flags.writeable


@pytest.mark.parametrize("policy", ["late", "none"])
def test_runs_give_the_traces_of_unpacked_work(monkeypatch, policy):
    # SWIM jobs of 1 MB blocks: stages of 80-420 equal maps, packed
    rows = [
        (f"j{i}", 40.0 * i, (80 + 37 * i) * 2**20 + 1234, (i % 3) * 2**29, 2**22) for i in range(10)
    ]
    common = dict(nodes=4, slots=8, seed=3, progress=False, engine="python")

    def run(pack_min: int):
        monkeypatch.setattr(_work_runs, "PACK_MIN_TASKS", pack_min)
        jobs = swim_jobs(rows, "FB2009", hours=None, scale=1.0, block_size=2**20)
        packed = sum(isinstance(j.__dict__["_map_work"], tuple) for j in jobs)
        res = sim_bridge.simulate(Workload("FB2009", jobs), policy, **common)
        return res.tasks, res.jobs, packed

    tasks, jobs, packed = run(PACK_MIN_TASKS)
    tasks0, jobs0, packed0 = run(10**12)
    assert packed == 10 and packed0 == 0
    assert_same_tables(tasks, jobs, tasks0, jobs0)
    assert len(tasks) > 2_000
