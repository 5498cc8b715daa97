"""The speculation scans' fast paths equal the obvious ones: oracles, not pasted numbers.

* ``SimView.progress_many`` clamps with comparisons: equal to ``min(max(x, 0), 1)`` on every
  float, signed zeros and NaN included.
* Mantri counts the finished durations below a remaining time by bisection on a list: equal
  to ``np.searchsorted`` (NaN goes to NumPy), and a whole run with NumPy's count instead
  gives equal tables.
* Hopper reads each job's virtual size once a pass, sorts only the jobs with waiting tasks
  when it does not speculate, and takes waiting tasks without copying the queue: runs equal
  those of the pass as first written (every job alive sorted at every pass).
* LATE ranks on arrays over the scan's batch: on a crowded cluster (every progress read
  under co-located demand, so the inline reads run) the ranking equals the obvious per-job
  scan at every scan, and the run with the fast scan equals the run with the obvious one.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from _crowded import crowded_workload, run_tables
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from sim_bridge import SimView, Workload
from sim_bridge.policies import LATE, Mantri
from sim_bridge.policies import _speculation as speculation
from sim_bridge.policies._cloning import Hopper
from sim_bridge.policies._speculation import _count_below, _Durations
from sim_bridge.policies.base import Launch

_specials = st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 5e-324])
_any_float = st.one_of(st.floats(allow_nan=True, allow_infinity=True), _specials)


def _bits(x: float) -> int:
    return int(np.float64(x).view(np.int64))


def _clamp(frac: float) -> float:
    """The clamp of ``SimView._progress_list``, as written there."""
    if frac < 0.0:
        frac = 0.0
    elif frac > 1.0:
        frac = 1.0
    return frac


@settings(max_examples=300, deadline=None)
@given(frac=_any_float, sf=st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5])))
def test_comparison_clamp_equals_min_max_bit_for_bit(frac, sf):
    want = sf + (1.0 - sf) * min(max(frac, 0.0), 1.0)
    got = sf + (1.0 - sf) * _clamp(frac)
    assert _bits(got) == _bits(want) or (math.isnan(got) and math.isnan(want))
    assert _bits(_clamp(frac)) == _bits(min(max(frac, 0.0), 1.0)) or math.isnan(frac)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.one_of(st.floats(-1e6, 1e6), _specials), max_size=30),
    x=_any_float,
)
def test_count_below_equals_searchsorted(values, x):
    arr = np.sort(np.asarray(values, dtype=float))
    want = int(np.searchsorted(arr, x))
    assert _count_below(arr.tolist(), x, arr) == want
    assert _count_below(arr.data, x, arr) == want  # the array's memoryview (Mantri's)


def test_sorted_view_follows_the_snapshot():
    d = _Durations()
    assert d.sorted_view().tolist() == []
    for v in (3.0, 1.0, 2.0):
        d.add(v)
    first = d.sorted_view()
    assert isinstance(first, memoryview)  # no list of floats kept: 8 bytes a value
    assert first.tolist() == d.sorted().tolist() == [1.0, 2.0, 3.0]
    assert d.sorted_view() is first  # unchanged snapshot: not made again
    d.add(0.5)
    assert d.sorted_view().tolist() == d.sorted().tolist() == [0.5, 1.0, 2.0, 3.0]


def test_durations_survive_pickle_and_deepcopy():
    """A policy's run times travel with it (a memoryview cannot be pickled: it is made
    again when read)."""
    d = _Durations()
    for v in (3.0, 1.0, 2.0):
        d.add(v)
    d.sorted_view()
    d.add(0.25)  # one value since the snapshot, not in it yet (fewer than 50: next read)
    for e in (pickle.loads(pickle.dumps(d)), copy.deepcopy(d)):
        assert len(e) == len(d) and e.total == d.total and e.total_sq == d.total_sq
        assert e.sorted_view().tolist() == d.sorted_view().tolist() == [0.25, 1.0, 2.0, 3.0]
        assert e.sorted().tobytes() == d.sorted().tobytes()


def _crowded(seed: int) -> Workload:
    return crowded_workload(seed, n_jobs=24)


def _run(policy, seed: int, tmp_path=None):
    kw = dict(nodes=5, slots=8, seed=seed, progress=False)
    if tmp_path is not None:
        kw["trace_sink"] = tmp_path / f"{policy.name}_{seed}_{len(list(tmp_path.iterdir()))}.pq"
    return sim_bridge.simulate(_crowded(seed), policy, **kw)


def _tables(res) -> dict[str, pd.DataFrame]:
    return run_tables(res)


def _assert_same_run(a, b) -> None:
    ta, tb = _tables(a), _tables(b)
    assert ta.keys() == tb.keys()
    for name, table in ta.items():
        assert table.equals(tb[name]), name


@pytest.mark.parametrize("stream", [False, True])
def test_mantri_with_numpy_counts_gives_the_same_run(stream, tmp_path, monkeypatch):
    fast = _run(Mantri(), 5, tmp_path if stream else None)
    assert fast.summary["attempts"] > fast.summary["tasks"]  # it really speculated
    monkeypatch.setattr(
        speculation, "_count_below", lambda values, x, arr: int(np.searchsorted(arr, x))
    )
    # the Python tick, which counts through _count_below (the compiled tick bisects in C)
    monkeypatch.setattr(speculation, "MANTRI_SCAN_IN_C", False)
    slow = _run(Mantri(), 5, tmp_path if stream else None)
    _assert_same_run(slow, fast)


def _obvious_progress(view: SimView, attempts) -> list[float]:
    """Progress the slow way: one :meth:`SimView.progress` per attempt."""
    return [view.progress(a) for a in attempts]


def _obvious_ranked(pol: LATE, view) -> list:
    """LATE's ranking scanned per job and attempt with the plain formulas."""
    now = view.now
    ranked = []
    for job in view.active_jobs():
        live = [a for a in job.running.values() if a.task.stage == job.stage]
        if not any(now - a.launch_time >= pol.min_elapsed and len(a.task.live) == 1 for a in live):
            continue
        durs = pol._stage_durations(job)
        if len(live) + len(durs) < 2:
            continue
        prog = _obvious_progress(view, live)
        rates = [
            (p - a.start_fraction) / (now - a.launch_time) if now > a.launch_time else 0.0
            for a, p in zip(live, prog, strict=True)
        ]
        keep = [
            (r, p, a)
            for a, p, r in zip(live, prog, rates, strict=True)
            if not (r <= 0.0 or now - a.launch_time < pol.min_elapsed) and len(a.task.live) == 1
        ]
        if not keep:
            continue
        done = durs.sorted()
        pool = np.concatenate([rates, 1.0 / done[done > 0]])
        cut = float(np.quantile(pool, pol.slow_task_threshold))
        ranked += [((1.0 - p) / r, a.uid, a) for r, p, a in keep if not (r >= cut)]
    ranked.sort(key=lambda x: (-x[0], x[1]))
    return ranked


class _CheckedLATE(LATE):
    """LATE that checks its ranking against the obvious scan at every scan (the second
    reads fall at the same instant: they add nothing to an attempt's work done)."""

    name = "_checked_late_crowded"

    def reset(self) -> None:
        super().reset()
        self.scans_ = self.ranked_ = 0

    def _ranked(self, view):
        fast = super()._ranked(view)
        ref = _obvious_ranked(self, view)
        assert [(e, u) for e, u, _a in ref] == [(e, u) for e, u, _a in fast]
        assert all(type(e) is float for e, _u, _a in fast)
        self.scans_ += 1
        self.ranked_ += len(fast)
        return fast


@pytest.mark.parametrize(
    ("seed", "params"),
    [(0, {}), (1, {"slow_task_threshold": 0.5, "min_elapsed": 0.0, "interval": 2.0})],
)
def test_late_crowded_ranking_equals_the_obvious_scan(seed, params):
    pol = _CheckedLATE(**params)
    checked = _run(pol, seed)
    assert pol.scans_ >= 10 and pol.ranked_ > 0
    plain = _run(LATE(**params), seed)
    assert plain.summary["attempts"] > plain.summary["tasks"]
    _assert_same_run(plain, checked)


def test_progress_reads_under_demand_take_the_inline_path():
    """The crowded runs above do exercise the inline reads (the fast path under test): at
    LATE's scans, many live attempts under demand were last read in the clock's step."""
    seen = {"inline": 0, "all": 0}

    class Counting(LATE):
        name = "_counting_late"

        def _ranked(self, view):
            k_now = int(view.now // view._sim.cluster.dt)
            for a in view.running_attempts():
                memo = a._step_rate
                seen["all"] += 1
                if a._dem is not None and memo and memo[0] == k_now:
                    seen["inline"] += 1
            return super()._ranked(view)

    _run(Counting(), 0)
    assert seen["inline"] > seen["all"] // 4 > 0


def test_scans_are_deterministic_under_a_seed(tmp_path):
    for make in (LATE, Mantri):
        _assert_same_run(_run(make(), 7, tmp_path), _run(make(), 7, tmp_path))


class _ObviousHopper(Hopper):
    """Hopper's pass as first written: the virtual size read for the sort and again for the
    allotment, the waiting queue copied before it is walked."""

    name = "_obvious_hopper"

    def _schedule(self, view, speculate: bool) -> list:
        free = view.free_slot_count
        if free == 0:
            return []
        now = view.now
        out: list = []
        jobs = sorted(view.active_jobs(), key=lambda j: (self.virtual_size(j), j.uid))
        for job in jobs:
            if free == 0:
                break
            allot = math.ceil(self.virtual_size(job)) - len(job.running)
            if allot <= 0:
                continue
            for task in list(job.pending.values()):
                if allot == 0 or free == 0:
                    break
                out.append(Launch(task))
                allot -= 1
                free -= 1
            if not speculate or allot <= 0 or free == 0:
                continue
            cands = []
            for a in job.running.values():
                if len(a.task.live) != 1 or now - a.launch_time < self.min_elapsed:
                    continue
                prog = view.progress(a)
                gained = prog - a.start_fraction
                t_rem = (now - a.launch_time) * (1.0 - prog) / gained if gained > 0 else math.inf
                cands.append((-t_rem, a.uid, a))
            cands.sort(key=lambda c: (c[0], c[1]))
            for _, _, a in cands[: min(allot, free)]:
                out.append(Launch(a.task))
                free -= 1
        if free:
            launched = {x.task.uid for x in out}
            for job in jobs:
                for task in list(job.pending.values()):
                    if free == 0:
                        return out
                    if task.uid in launched:
                        continue
                    out.append(Launch(task))
                    free -= 1
        return out


@pytest.mark.parametrize("beta", [1.5, 3.0])
def test_hopper_pass_equals_the_obvious_pass(beta):
    fast = _run(Hopper(beta=beta), 4)
    assert fast.summary["attempts"] > fast.summary["tasks"]  # it really speculated
    _assert_same_run(_run(_ObviousHopper(beta=beta), 4), fast)
