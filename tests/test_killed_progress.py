"""A killed attempt's progress, read after it closed, is the work it had done at its end.

The oracle is the attempt's work done just before the close, computed with the formula of a
running attempt with no co-located demand (a pure function of the paths: its booked work
plus the running sum of its profile since its segment began)."""

from __future__ import annotations

import pytest

import sim_bridge
from sim_bridge import _sim_lifecycle
from sim_bridge._states import A_KILLED


@pytest.mark.parametrize("stream", [False, True])
def test_a_killed_attempts_progress_is_its_work_done_at_its_end(
    stream, tmp_path, monkeypatch, shared_data_dir
):
    seen: list[tuple[float, float]] = []
    close = _sim_lifecycle.AttemptLifecycle._close

    def spy(self, att, state):
        want = None
        if state == A_KILLED and att._work > 0 and att._dem is None and self._tenancy:
            task = att.task
            pid = task.job.pids[task.stage]
            done = att._seg_done + self.cluster.cum_at(att.node, pid, self.now) - att._c0
            want = att.start_fraction + (1 - att.start_fraction) * min(done / att._work, 1.0)
        close(self, att, state)
        if want is not None:
            seen.append((self.view.progress(att), want))

    monkeypatch.setattr(_sim_lifecycle.AttemptLifecycle, "_close", spy)
    monkeypatch.setattr(sim_bridge._simulate, "LAUNCH_LEVELS_MIN_BYTES", 0)
    sink = {"trace_sink": tmp_path / "t.parquet"} if stream else {}
    sim_bridge.simulate(
        "FB2009", "late", nodes=20, slots=4, hours=1.0, seed=1, progress=False,
        engine="python", data_dir=shared_data_dir, **sink,
    )  # fmt: skip
    assert len(seen) >= 5
    for got, want in seen:
        assert got == want
