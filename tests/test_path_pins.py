"""Issue 13: single nodes' levels kept aside (``Cluster.hold``'s ``nodes``).

A streamed run's window of contention paths followed its oldest attempt under unchanged
co-located demand: one attempt running for 14 hours kept 14 hours of every node's levels
(1 MB a step on 33,000 nodes). Such an attempt now pins its own node: that node's levels
are kept aside when the window drops them, and every read of them gives the same float. The
oracle is the cluster that keeps every step; a read of a dropped step that no pin holds
raises, so a missed reader fails loudly instead of reading something else.
"""

from __future__ import annotations

import pytest
from _streamed_pair import streamed_equals_in_memory
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge._engine as engine_module
from sim_bridge import Cluster

PROFILE = (0.5, 0.2, 1.0, 0.3)
DEM = (0.1, 0.05, 0.3, 0.0)


def _pair(seed: int) -> tuple[Cluster, Cluster, int]:
    mk = dict(n_nodes=5, slots=2, seed=seed, extend_steps=30)
    full, win = Cluster(**mk, keep_paths=True), Cluster(**mk, keep_paths=False)
    pid = full.profile_id(PROFILE)
    assert win.profile_id(PROFILE) == pid
    return full, win, pid


@settings(max_examples=20, deadline=None)
@given(
    moves=st.lists(
        st.tuples(st.integers(10, 150), st.integers(0, 4), st.integers(0, 400)),
        min_size=1,
        max_size=8,
    ),
    seed=st.integers(0, 50),
)
def test_a_pinned_nodes_old_levels_read_as_the_whole_paths_give_them(moves, seed):
    """Whatever the clock and the pins (each only moving forward: a new pin is no older
    than the reader's last hold), every read of a pinned node from its pin on equals the
    keep-all cluster's: the step rates, a short and a long walk of the work done, and an
    end solve from there."""
    full, win, pid = _pair(seed)
    clock, pins = 0.0, {}
    for advance, node, back in moves:
        held, clock = clock, clock + advance * 60.0
        pins[node] = max(pins.get(node, held), clock - back * 60.0)
        win.hold("r", clock, nodes=dict(pins))
        for n in range(5):  # reads at the clock extend the paths and drop released steps
            assert win.work_with(n, pid, clock, clock + 90.0, DEM) == full.work_with(
                n, pid, clock, clock + 90.0, DEM
            )
        for n, tp in pins.items():
            k = int(tp // 60.0)
            assert win.rate_with(n, pid, k, DEM) == full.rate_with(n, pid, k, DEM)
            for t1 in (tp + 200.0, clock + 30.0):
                assert win.work_with(n, pid, tp, t1, DEM) == full.work_with(n, pid, tp, t1, DEM)
            assert win.end_with(n, pid, tp, 900.0, DEM) == full.end_with(n, pid, tp, 900.0, DEM)
        # only the pinned nodes are kept aside, from their pins on
        assert set(win._aside) <= set(pins)
        assert all(win._aside[n][0] >= int(pins[n] // 60.0) for n in win._aside)
        lost = [n for n in range(5) if n not in pins]
        if lost and win.base_step > 0:  # a dropped step no pin holds: an error, not a value
            with pytest.raises(IndexError, match="was dropped"):
                win.work_with(lost[0], pid, 0.0, clock, DEM)


def test_a_pin_released_frees_its_levels():
    """A pin that goes (the reader's next hold does not name the node) frees what was kept
    aside for it at once; a hold of None releases every pin."""
    _, win, pid = _pair(3)
    win.hold("r", 5 * 3600.0, nodes={1: 600.0, 2: 1200.0})
    win.work_with(0, pid, 5 * 3600.0, 6 * 3600.0, DEM)  # extends past the window
    assert win.base_step > 0 and set(win._aside) == {1, 2}
    win.hold("r", 5 * 3600.0, nodes={2: 1800.0})
    assert set(win._aside) == {2} and win._aside[2][0] == 30
    win.hold("r", None)
    assert win._aside == {}


class _Spy(Cluster):
    """A cluster that counts its reads of levels kept aside and the pins it was given."""

    made: list[_Spy] = []

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.aside_reads = 0
        self.pinned = 0
        _Spy.made.append(self)

    def hold(self, reader, t, *, rates_from=None, nodes=None):
        self.pinned += len(nodes or {})
        super().hold(reader, t, rates_from=rates_from, nodes=nodes)

    def _node_levels(self, node, k0, m):
        self.aside_reads += k0 < self.base_step
        return super()._node_levels(node, k0, m)


@pytest.mark.parametrize("policy", ["late", "mantri", "none", "dolly", "sda"])
def test_a_streamed_run_that_pins_every_old_reader_gives_the_in_memory_trace(
    tmp_path, monkeypatch, policy
):
    """Every attempt that reads its node's levels from before the clock pins its node
    (``_PIN_AFTER_S`` 0: the whole cluster's window follows the clock alone) on 30-step
    parts: the trace and the job table are the in-memory run's, bit for bit, and levels
    kept aside were read."""
    monkeypatch.setattr(engine_module, "_PIN_AFTER_S", 0.0)
    monkeypatch.setattr(engine_module, "_HOLD_EVERY_S", 60.0)
    cl = streamed_equals_in_memory(tmp_path, monkeypatch, policy, _Spy)
    assert cl.pinned > 0 and cl.base_step > 0
    assert cl.aside_reads > 0


def test_the_hold_follows_the_clock_when_events_are_few(tmp_path, monkeypatch):
    """A drain has few events a day: the engine scans its live attempts for the hold when
    the clock moved ``_HOLD_EVERY_S``, not only every ``_CHECK_EVERY`` events. With the
    event count never reaching a check, the window still moves, and the trace is the
    in-memory run's."""
    monkeypatch.setattr(engine_module, "_CHECK_EVERY", 10**12)
    cl = streamed_equals_in_memory(tmp_path, monkeypatch, "none", _Spy)
    assert cl.base_step > 0
