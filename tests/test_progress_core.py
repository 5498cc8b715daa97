"""The scan loops in C (``sim_bridge._progress_core``) equal their Python references
(``SimView._progress_list_py``, ``LATE._ranked_py``): oracles, not pasted numbers.

* At every scan of whole runs, the compiled loop and the Python loop read the same values,
  bit for bit, over every branch: attempts not running, linear progress under a duration
  override, reads under co-located demand inline and through the engine, and the
  cumulative rates without demand (the tests count each branch, so a run that stopped
  exercising one fails).
* Whole runs with the compiled loop equal runs with the Python loop (tables and events),
  streamed and in memory: the loop also books each read under demand (``_prog``), which
  later reads go on from.
* The compiled loop rewrites an attempt's last-read pair in place only when nothing else
  holds it: a pair, or its float, held elsewhere keeps its values.
* LATE's scan in C (``late_scan``) ranks, at every scan, the same attempts with the same
  estimates as the Python scan (``LATE._ranked_py``) and books the same reads; runs with
  either are equal.
* Mantri's tick in C (``mantri_scan``) gives, at every tick, the same copies and restarts as
  the Python tick (``Mantri._on_tick_py``) and books the same reads; runs with either are
  equal. Its count of run times below a remaining time equals NumPy's ``searchsorted``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from _crowded import crowded_workload, run_tables
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
import sim_bridge._view as view_mod
from sim_bridge._states import A_RUNNING
from sim_bridge.policies import LATE, Kill, Launch, Mantri
from sim_bridge.policies import _speculation as speculation

pytestmark = pytest.mark.skipif(view_mod._progress_c is None, reason="not built")


def _bits(values) -> list[int]:
    return np.asarray(values, dtype=float).view(np.int64).tolist()


def _branch(view, a) -> str:
    """The branch of the loop that reads ``a`` (before the read)."""
    if a.state != A_RUNNING:
        return "closed"
    if a._work <= 0.0:
        return "override"
    if a._dem is None:
        return "rates"
    memo, k_now = a._step_rate, int(view.now // view._sim.cluster.dt)
    if a._prog is not None and memo is not None and memo[0] == k_now:
        return "inline"
    return "engine"


def _state(a) -> tuple:
    """What a progress read books on an attempt, comparable: its last read and rate memo."""
    prog, memo = a._prog, a._step_rate
    return (
        None if prog is None else (prog[0], _bits([prog[1]])[0]),
        None if memo is None else (memo[0], id(memo[1]), _bits([memo[2]])[0]),
    )


def _save(a) -> tuple:
    memo = a._step_rate
    return a._prog, memo, None if memo is None else list(memo)


def _restore(a, saved: tuple) -> None:
    prog, memo, contents = saved
    a._prog = prog  # a pair held here: a read replaces it (it rewrites only unheld pairs)
    a._step_rate = memo
    if memo is not None:  # a list the reads update in place
        memo[:] = contents


def _both_ways(atts: list, calls: list, turn: int) -> tuple:
    """Run the two ``calls`` (first or second in turn) from the same state of ``atts`` (each
    books what it reads: the second must start where the first did, or it would only read
    back the first's values); check they book the same, and return both results."""
    before = [_save(a) for a in atts]
    if turn % 2:
        calls = calls[::-1]
    first = calls[0]()
    after = [_state(a) for a in atts]
    for a, saved in zip(atts, before, strict=True):
        _restore(a, saved)
    second = calls[1]()
    assert [_state(a) for a in atts] == after
    return first, second


class _BothLoops(LATE):
    """LATE whose scans read every live attempt and some closed ones through both loops,
    the compiled one first or second in turn (a second read at the same instant adds
    nothing to an attempt's work done), and check the values are the same bits."""

    name = "_both_progress_loops"

    def reset(self) -> None:
        super().reset()
        self.branches_: dict[str, int] = {}
        self.closed_: list = []
        self.scans_ = 0

    def on_attempt_finished(self, view, attempt):
        if len(self.closed_) < 50:
            self.closed_.append(attempt)
        return super().on_attempt_finished(view, attempt)

    def on_tick(self, view):
        atts = list(view.running_attempts()) + self.closed_[-5:]
        for a in atts:
            b = _branch(view, a)
            self.branches_[b] = self.branches_.get(b, 0) + 1
        first, second = _both_ways(
            atts,
            [lambda: view._progress_list(atts), lambda: view._progress_list_py(atts)],
            self.scans_,
        )
        assert _bits(first) == _bits(second)
        self.scans_ += 1
        return super().on_tick(view)


CASES = {
    # crowded nodes: most reads under co-located demand, inline or through the engine
    "crowded": (lambda: crowded_workload(3, 30), dict(nodes=5, slots=8)),
    # no co-located contention: every read from the cumulative rates
    "no_tenancy": (lambda: crowded_workload(4, 25), dict(nodes=8, slots=4, interference=0.0)),
    # an idle nominal cluster
    "ideal": (lambda: crowded_workload(5, 20), dict(nodes=6, slots=4, ideal=True)),
    # duration override: linear progress
    "override": (
        lambda: crowded_workload(6, 20),
        dict(nodes=6, slots=4, duration_dist=scipy.stats.pareto(2.0)),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_scan_reads_the_same_values_through_both_loops(case):
    make, kw = CASES[case]
    pol = _BothLoops()
    sim_bridge.simulate(make(), pol, seed=1, progress=False, **kw)
    assert pol.scans_ > 20
    seen = pol.branches_
    assert seen.get("closed", 0) > 0
    want = {
        "crowded": ("inline", "engine"),
        "no_tenancy": ("rates",),
        "ideal": ("rates",),
        "override": ("override",),
    }[case]
    assert all(seen.get(b, 0) > 10 for b in want), seen


@pytest.mark.parametrize("case", ["crowded", "no_tenancy"])
@pytest.mark.parametrize("stream", [False, True])
def test_runs_with_the_compiled_loop_equal_runs_with_the_python_loop(
    case, stream, tmp_path, monkeypatch
):
    make, kw = CASES[case]

    def run(tag):
        sink = {"trace_sink": tmp_path / f"{tag}.parquet"} if stream else {}
        return sim_bridge.simulate(make(), "late", seed=2, progress=False, **kw, **sink)

    fast = run("c")
    assert fast.summary["attempts"] > fast.summary["tasks"]  # it speculated
    monkeypatch.setattr(view_mod, "PROGRESS_IN_C", False)
    slow = run("py")
    assert fast.summary["events"] == slow.summary["events"]
    ta, tb = run_tables(fast), run_tables(slow)
    assert ta.keys() == tb.keys()
    for name, table in ta.items():
        assert table.equals(tb[name]), name


class _BothScans(LATE):
    """LATE that runs every scan both ways, the compiled one first or second in turn, from
    the same state, and checks they rank the same attempts with the same estimates (bits)
    and book the same reads."""

    name = "_both_late_scans"

    def reset(self) -> None:
        super().reset()
        self.scans_ = self.ranked_ = 0

    def _ranked(self, view):
        atts = list(view.running_attempts())
        scan_c = super()._ranked
        first, second = _both_ways(
            atts, [lambda: scan_c(view), lambda: self._ranked_py(view)], self.scans_
        )
        assert [(_bits([e])[0], u) for e, u, _a in first] == [
            (_bits([e])[0], u) for e, u, _a in second
        ]
        assert all(x[2] is y[2] for x, y in zip(first, second, strict=True))
        assert all(type(e) is float for e, _u, _a in first + second)
        self.scans_ += 1
        self.ranked_ += len(first)
        return first


@pytest.mark.skipif(speculation._late_scan is None, reason="not built")
@pytest.mark.parametrize("case", sorted(CASES))
def test_late_scan_in_c_equals_the_python_scan(case, monkeypatch):
    make, kw = CASES[case]
    pol = _BothScans(min_elapsed=20.0)
    checked = sim_bridge.simulate(make(), pol, seed=3, progress=False, **kw)
    assert pol.scans_ > 20 and pol.ranked_ > 20
    plain = sim_bridge.simulate(make(), LATE(min_elapsed=20.0), seed=3, progress=False, **kw)
    monkeypatch.setattr(speculation, "LATE_SCAN_IN_C", False)
    slow = sim_bridge.simulate(make(), LATE(min_elapsed=20.0), seed=3, progress=False, **kw)
    assert plain.summary["attempts"] > plain.summary["tasks"]
    for a, b in ((plain, slow), (plain, checked)):
        assert a.tasks.equals(b.tasks) and a.jobs.equals(b.jobs)


@pytest.mark.skipif(speculation._late_scan is None, reason="not built")
@pytest.mark.parametrize(
    ("q", "numpys"), [(1.0, True), (1, True), (0.0, False), (np.float64(0.25), False)]
)
def test_late_scan_leaves_numpys_cases_to_the_python_percentile(q, numpys, monkeypatch):
    """A threshold at the top, or not a float, is left to the Python percentile (which
    leaves it to NumPy); the others are picked in C. Either way the run is the Python
    scan's."""
    make, kw = CASES["crowded"]
    calls = []
    percentile = speculation._quantile_linear

    def counted(rates, done, q_):
        calls.append(q_)
        return percentile(rates, done, q_)

    monkeypatch.setattr(speculation, "_quantile_linear", counted)
    fast = sim_bridge.simulate(make(), LATE(slow_task_threshold=q), seed=3, progress=False, **kw)
    assert (len(calls) > 10) if numpys else not calls
    assert all(c is q for c in calls)
    monkeypatch.setattr(speculation, "LATE_SCAN_IN_C", False)
    slow = sim_bridge.simulate(make(), LATE(slow_task_threshold=q), seed=3, progress=False, **kw)
    assert fast.tasks.equals(slow.tasks) and fast.jobs.equals(slow.jobs)


class _HoldsReads(LATE):
    """LATE that, before each scan, holds a reference to the last-read pair of one running
    attempt in three and to the float of another in three (their values noted), reads every
    running attempt through the compiled loop, and checks what was held kept its values
    while each attempt read under demand booked a new last read at the clock."""

    name = "_holds_last_reads"

    def reset(self) -> None:
        super().reset()
        self.held_ = self.booked_ = 0

    def on_tick(self, view):
        atts = list(view.running_attempts())
        before = [_branch(view, a) for a in atts]
        held: list = []  # the only other references to what they hold
        for i, a in enumerate(atts):
            if a._prog is not None and i % 3 != 2:
                obj = a._prog if i % 3 == 0 else a._prog[1]
                held.append((obj, repr(obj)))
        obj = None
        view._progress_list(atts)
        for obj, was in held:
            assert repr(obj) == was
        for a, b in zip(atts, before, strict=True):
            if b in ("inline", "engine") and a.state == A_RUNNING:
                assert a._prog is not None and a._prog[0] == view.now
                self.booked_ += 1
        self.held_ += len(held)
        return super().on_tick(view)


def test_a_read_rewrites_no_last_read_held_elsewhere(monkeypatch):
    make, kw = CASES["crowded"]
    pol = _HoldsReads()
    held = sim_bridge.simulate(make(), pol, seed=4, progress=False, **kw)
    assert pol.held_ > 100 and pol.booked_ > 100
    # the same run with every read in Python (new pairs every time) is the same run
    monkeypatch.setattr(view_mod, "PROGRESS_IN_C", False)
    monkeypatch.setattr(speculation, "LATE_SCAN_IN_C", False)
    slow = sim_bridge.simulate(make(), _HoldsReads(), seed=4, progress=False, **kw)
    assert held.tasks.equals(slow.tasks) and held.jobs.equals(slow.jobs)


def _actions(actions: list) -> list[tuple[str, int]]:
    """A tick's actions, comparable: kind and the uid of what it acts on."""
    return [
        ("launch", a.task.uid) if type(a) is Launch else ("kill", a.attempt.uid) for a in actions
    ]


class _BothMantriTicks(Mantri):
    """Mantri that runs every tick both ways, the compiled one first or second in turn,
    from the same state, and checks they give the same actions on the same objects and book
    the same reads; it counts the copies, the restarts and the tasks read with copies."""

    name = "_both_mantri_ticks"

    def reset(self) -> None:
        super().reset()
        self.ticks_ = self.launches_ = self.kills_ = self.multi_ = 0

    def on_tick(self, view):
        atts = list(view.running_attempts())
        tick_c = super().on_tick
        first, second = _both_ways(
            atts, [lambda: tick_c(view), lambda: self._on_tick_py(view)], self.ticks_
        )
        assert _actions(first) == _actions(second)
        assert all(
            (x.task is y.task) if type(x) is Launch else (x.attempt is y.attempt)
            for x, y in zip(first, second, strict=True)
        )
        self.ticks_ += 1
        self.launches_ += sum(type(a) is Launch for a in first)
        self.kills_ += sum(type(a) is Kill for a in first)
        self.multi_ += len({a.task.uid for a in atts if a.task.n_live > 1})
        return first


@pytest.mark.skipif(speculation._mantri_scan is None, reason="not built")
@pytest.mark.parametrize("case", sorted(CASES))
def test_mantri_scan_in_c_equals_the_python_tick(case, monkeypatch):
    make, kw = CASES[case]
    pol = _BothMantriTicks()
    checked = sim_bridge.simulate(make(), pol, seed=3, progress=False, **kw)
    # copies, restarts (slots full), and tasks read over their several live attempts
    assert pol.ticks_ > 20 and pol.launches_ > 5 and pol.kills_ > 5 and pol.multi_ > 5
    plain = sim_bridge.simulate(make(), Mantri(), seed=3, progress=False, **kw)
    monkeypatch.setattr(speculation, "MANTRI_SCAN_IN_C", False)
    slow = sim_bridge.simulate(make(), Mantri(), seed=3, progress=False, **kw)
    assert plain.summary["attempts"] > plain.summary["tasks"]
    for a, b in ((plain, slow), (plain, checked)):
        assert a.tasks.equals(b.tasks) and a.jobs.equals(b.jobs)


@pytest.mark.skipif(speculation._mantri_scan is None, reason="not built")
@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.floats(allow_nan=False), st.sampled_from([0.0, -0.0, 1.0, 2.5])),
        max_size=40,
    ),
    x=st.one_of(st.floats(), st.sampled_from([0.0, -0.0, 1.0, 2.5])),
    nan_last=st.booleans(),
)
def test_mantri_scans_count_equals_searchsorted(values, x, nan_last):
    """The compiled count of run times below ``x`` is NumPy's ``searchsorted`` (side
    ``"left"``) on the sorted run times, NaN included (NumPy sorts NaN last)."""
    from sim_bridge._progress_core import count_below_sorted

    arr = np.sort(np.array(values + [math.nan] * nan_last, dtype=float))
    got = count_below_sorted(arr, x, speculation._count_below)
    assert got == int(np.searchsorted(arr, x))
