"""A crowded workload run in memory and streamed on small path parts, for the tests of the
streamed run's window of contention paths (``test_path_parts``, ``test_path_pins``)."""

from __future__ import annotations

import pandas as pd
from _crowded import mapreduce_workload

import sim_bridge
import sim_bridge._simulate as simulate_module
from sim_bridge import Cluster


def streamed_equals_in_memory(
    tmp_path, monkeypatch, policy: str, spy: type, rate_steps: int = 30
) -> Cluster:
    """Run ~5 h of arrivals on 4 x 2 slots (jobs queue and live for hours) in memory, then
    streamed with launch levels and 30-step parts on the cluster class ``spy`` (its
    ``made`` list collects the clusters it makes), every node's rates computed
    ``rate_steps`` at a time; assert the trace and the job table are the in-memory run's,
    bit for bit, and return the streamed run's cluster."""
    monkeypatch.setattr(simulate_module, "LAUNCH_LEVELS_MIN_BYTES", 0)
    monkeypatch.setattr(simulate_module, "PATH_PART_BYTES", 32 * 4 * 30)  # 30-step parts
    monkeypatch.setattr(simulate_module, "PATH_RATE_BYTES", 16 * 4 * rate_steps)
    monkeypatch.setattr(simulate_module, "Cluster", spy)
    w = mapreduce_workload(60, 7, gap=300.0, max_maps=30, map_mu=5.0)
    common = dict(nodes=4, slots=2, seed=2, progress=False, engine="python")
    mem = sim_bridge.simulate(w, policy, **common)
    spy.made.clear()  # type: ignore[attr-defined]
    path = tmp_path / "t.parquet"
    streamed = sim_bridge.simulate(w, policy, trace_sink=path, row_group_rows=40, **common)
    (cl,) = spy.made  # type: ignore[attr-defined]
    assert (cl.extend_steps, cl.rate_steps) == (30, rate_steps)
    key = ["job_id", "task_id", "attempt"]
    got = pd.read_parquet(path).sort_values(key).reset_index(drop=True)
    want = mem.tasks.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    pd.testing.assert_frame_equal(streamed.jobs, mem.jobs, check_exact=True)
    return cl
