"""The rate memos' steps and a scan's step of the clock are one int object
(``TenantRates.step_int``): the same values, one object a step while it is in use, so a scan
compares pointers."""

from __future__ import annotations

import pytest
from _crowded import crowded_workload
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from sim_bridge.policies import LATE

_tenants = pytest.importorskip("sim_bridge._tenants_core")


@settings(max_examples=200, deadline=None)
@given(ks=st.lists(st.one_of(st.integers(-3, 200), st.integers(10**6, 10**6 + 300)), max_size=60))
def test_step_ints_are_the_values_and_one_object_while_their_slot_holds_them(ks):
    import numpy as np

    r = _tenants.TenantRates(np.ones((1, 4)), np.ones(1), 1.0, 0.1, 60.0)
    held: dict[int, tuple[int, object]] = {}  # the model: slot -> (step, object)
    for k in ks:
        got = r.step_int(k)
        assert type(got) is int and got == k
        slot = k % 64
        if k >= 0 and slot in held and held[slot][0] == k:
            assert got is held[slot][1]
        held[slot] = (k, got)
        assert r.step_int(k) is got


class _CountingLATE(LATE):
    """LATE that counts, at each scan, the running attempts whose rate memo is of the
    clock's step, and how many of those hold the scan's own step object."""

    equal_ = 0
    same_ = 0

    def on_tick(self, view):
        k_now = view._scan_clock()[2]
        for job in view.active_jobs():
            for a in job.running.values():
                memo = a._step_rate
                if memo is not None and memo[0] == k_now:
                    self.equal_ += 1
                    self.same_ += memo[0] is k_now
        return super().on_tick(view)


def test_a_scan_finds_the_memos_of_its_step_holding_its_step_object():
    pol = _CountingLATE(interval=5.0)
    w = crowded_workload(5, 30)
    sim_bridge.simulate(w, pol, "fair", nodes=4, slots=8, seed=2, progress=False, engine="python")
    assert pol.equal_ > 500
    assert pol.same_ >= 0.9 * pol.equal_
