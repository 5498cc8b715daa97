"""Issue 13: when nothing reads a task's uniform draw at its original's launch (no duration
distribution, no tail pressure: the noise comes from ``job._m``), the tasks share one 0.0
(``sim_bridge._sim_arrivals.SHARE_UNREAD_DRAWS``), 24 bytes less each live task.

Oracles: the same runs with the sharing off give the same trace and job table, bit for bit,
in memory and streamed; where the draw is read (tail pressure, a duration distribution) each
task keeps its own, equal to the draw of the task draws' reference.
"""

from __future__ import annotations

import pytest
from _crowded import assert_same_tables, crowded_workload, run_tables
from scipy import stats

import sim_bridge
import sim_bridge._sim_arrivals as arrivals
from sim_bridge._task_draws import TaskDraws

CONFIGS = {
    "default": {},
    "no noise": {"noise": False},
    "tail pressure": {"tail_pressure": 0.4, "engine": "python"},
    "duration_dist": {"duration_dist": stats.lognorm(0.6)},
}


def _run(tmp_path, config: str, share: bool, stream: bool, seen: list) -> dict:
    kw = {"nodes": 6, "slots": 4, "seed": 5, "progress": False, **CONFIGS[config]}
    if stream:
        kw["trace_sink"] = tmp_path / f"{config}-{share}.parquet"
    real = arrivals.JobArrivals._arrive

    def arrive(self, i):
        job = real(self, i)
        seen.append((self, i, [t._u0 for t in job.tasks]))
        return job

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(arrivals, "SHARE_UNREAD_DRAWS", share)
        mp.setattr(arrivals.JobArrivals, "_arrive", arrive)
        res = sim_bridge.simulate(crowded_workload(2, 12), "late", "fair", **kw)
    return run_tables(res)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_the_trace_does_not_depend_on_sharing_unread_draws(tmp_path, config, stream):
    seen_on: list = []
    on = _run(tmp_path, config, True, stream, seen_on)
    off = _run(tmp_path, config, False, stream, [])
    assert_same_tables(on["tasks"], on.get("jobs"), off["tasks"], off.get("jobs"))
    assert seen_on, "no job arrived through the Python engine"
    draws = [u for _, _, us in seen_on for u in us]
    if config in ("default", "no noise"):  # one shared object
        assert len({id(u) for u in draws}) == 1 and draws[0] == 0.0
    else:  # its own draw, the task draws' value
        sim = seen_on[0][0]
        ref = TaskDraws(
            sim._specs, sim.seed, duration_dist=sim.duration_dist, noise=sim.noise, skew=sim.skew
        )
        for _, i, us in seen_on:
            assert us == ref.job(i)[0]
