"""The compiled scans' prefetch hints (``sim_bridge._progress_core._ahead``) change no value.

The hints read ahead of the loop, through the slots of the attempts 2 to 12 places on, so the
lists here mix every shape a read meets -- inline reads, reads through the engine, attempts
not running, reads from the cumulative rates, a duration override, an ``Attempt`` subclass
read by name, and lists shorter than the distance ahead -- and each list is read three ways:
with the hints, without them, and by a slow per-attempt oracle written from the reader's
formulas. The values and what each read books must be the same bits. Whole runs with and
without the hints give the same tables.
"""

from __future__ import annotations

import numpy as np
import pytest
from _crowded import assert_same_tables, crowded_workload, simulate_tables
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge._jobs import Attempt

core = pytest.importorskip("sim_bridge._progress_core")

DT = 60.0
NOW = 3630.0
K_NOW = int(NOW // DT)
DEM = (0.2, 0.1)
N_NODES = 7
CUM = np.linspace(100.0, 160.0, N_NODES)  # the clock's cumulative rates, per node


class _Sub(Attempt):
    """Not a plain Attempt: read by name, and not looked into by the hints."""

    __slots__ = ()


def _engine_done(a, now) -> float:
    """The work-done call-back of reads the loop leaves to the engine (a stand-in)."""
    return a._seg_done + 0.25 * (now - a._seg_t)


def _closed_progress(a) -> float:
    """The call-back of attempts not running (a stand-in)."""
    return 0.125 + a.uid / 1024.0


class _Cluster:
    def cum_at_nodes(self, pid, t):
        return CUM


SHAPES = ["inline", "engine", "closed", "rates", "override", "sub"]

spec = st.tuples(
    st.sampled_from(SHAPES),
    st.floats(1.0, 500.0),  # work
    st.floats(0.0, 0.5),  # start fraction
    st.floats(0.0, 0.9),  # work done at the last read, as a share of the work
    st.floats(0.0, 2.0),  # the memo's rate
    st.integers(0, 59),  # seconds into the step of the last read
)


def _build(specs) -> list:
    atts = []
    for uid, (shape, work, sf, share, rate, into) in enumerate(specs):
        cls = _Sub if shape == "sub" else Attempt
        a = cls(uid, None, 0, uid % N_NODES, 3000.0 + uid, sf, pid=0)
        t0 = K_NOW * DT + into
        a._work = 0.0 if shape == "override" else work
        a._end = NOW + 100.0 + uid
        a._seg_t = t0 - 1.0
        a._seg_done = share * work / 2
        a._c0 = 90.0
        a._dem = None if shape == "rates" else DEM
        a._prog = None if shape == "engine" else (t0, share * work)
        a._step_rate = [K_NOW, DEM, rate]
        if shape == "closed":
            a.state = 1
        atts.append(a)
    return atts


def _oracle(a) -> float:
    """One read, from the reader's formulas (``SimView._progress_list_py``'s branches)."""
    if a.state != 0:
        return _closed_progress(a)
    if a._work <= 0.0:
        span = a._end - a.launch_time
        frac = 1.0 if span <= 0 else (NOW - a.launch_time) / span
    elif a._dem is not None:
        prog, memo = a._prog, a._step_rate
        if prog is not None and memo[0] == K_NOW and prog[0] <= NOW and a._seg_t <= prog[0]:
            t0 = prog[0]
            done = prog[1] + (0.0 + memo[2] * (NOW - t0) if t0 < NOW else 0.0)
            a._prog = (NOW, done)
            frac = done / a._work
        else:
            frac = _engine_done(a, NOW) / a._work
    else:
        frac = (a._seg_done + float(CUM[a.node]) - a._c0) / a._work
    frac = 0.0 if frac < 0.0 else 1.0 if frac > 1.0 else frac
    return a.start_fraction + (1.0 - a.start_fraction) * frac


def _read(atts) -> list[float]:
    return core.progress_list(
        atts, NOW, _closed_progress, _engine_done, _Cluster(), {}, True, DT, K_NOW
    )


def _booked(atts) -> list:
    return [a._prog for a in atts]


def _bits(values) -> list[int]:
    return np.asarray(values, dtype=float).view(np.int64).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(spec, max_size=40))
def test_reads_with_and_without_hints_equal_the_oracle(specs):
    with_hints, without, slow = _build(specs), _build(specs), _build(specs)
    was = core.set_prefetch(True)
    try:
        got = _read(with_hints)
        core.set_prefetch(False)
        plain = _read(without)
    finally:
        core.set_prefetch(was)
    expected = [_oracle(a) for a in slow]
    assert _bits(got) == _bits(plain) == _bits(expected)
    assert _booked(with_hints) == _booked(without) == _booked(slow)


def test_set_prefetch_returns_the_previous_setting():
    was = core.set_prefetch(False)
    try:
        assert core.set_prefetch(True) is False
        assert core.set_prefetch(True) is True
    finally:
        core.set_prefetch(was)


@pytest.mark.parametrize("policy", ["late", "mantri"])
def test_runs_with_and_without_hints_are_equal(policy):
    """A crowded run's tables, LATE's and Mantri's scans with the hints and without them."""
    kw = dict(nodes=5, slots=8, policy=policy, seed=11)
    runs = []
    for on in (True, False):
        was = core.set_prefetch(on)
        try:
            runs.append(simulate_tables(crowded_workload(3, 30), kw))
        finally:
            core.set_prefetch(was)
    (tasks, jobs), (tasks0, jobs0) = runs
    assert len(tasks) > 100 and (tasks["attempt"] > 0).any()  # the scans made copies
    assert_same_tables(tasks, jobs, tasks0, jobs0)
