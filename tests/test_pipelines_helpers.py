"""A small hand-made trace following sim_bridge.trace, shared by the pipeline tests.

Durations depend on node counters through weights that differ by node and by workload (plus
a shared part), so stragglers are partly predictable and multi-task learning has something to
share, like the simulator's traces but tiny and instant.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines._dataset import validate_trace


def make_trace(
    n_nodes: int = 4,
    workloads: tuple[str, ...] = ("FB2009", "SYN"),
    n_jobs: int = 40,
    tasks_per_job: int = 8,
    n_counters: int = 5,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per original attempt; every random draw from one seeded generator."""
    rng = np.random.default_rng(seed)
    nodes = [f"n{i}" for i in range(n_nodes)]
    w0 = rng.normal(0, 1, n_counters)
    w_node = {n: rng.normal(0, 0.7, n_counters) for n in nodes}
    w_wl = {w: rng.normal(0, 0.7, n_counters) for w in workloads}
    rows = []
    t = 0.0
    for j in range(n_jobs):
        wl = workloads[j % len(workloads)]
        base = rng.uniform(5, 50)
        t += rng.exponential(10)
        for k in range(tasks_per_job):
            node = nodes[int(rng.integers(n_nodes))]
            c = rng.normal(0, 1, n_counters)
            score = c @ (w0 + w_node[node] + w_wl[wl])
            dur = base * np.exp(0.35 * score + rng.normal(0, 0.1))
            launch = t + rng.uniform(0, 5)
            rows.append(
                {
                    "job_id": f"j{j}",
                    "task_id": f"j{j}_t{k}",
                    "attempt": 0,
                    "workload": wl,
                    "node": node,
                    "phase": "map",
                    "submit_time": t,
                    "launch_time": launch,
                    "end_time": launch + dur,
                    "duration": dur,
                    "outcome": "finished",
                    **{f"c_{i}": c[i] for i in range(n_counters)},
                }
            )
    return pd.DataFrame(rows)


def test_make_trace_is_valid_and_deterministic():
    a, b = make_trace(seed=3), make_trace(seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(make_trace(seed=4))
    assert len(validate_trace(a)) == len(a)


def test_written_results_are_readable_by_others(tmp_path):
    """Atomic writes go through mkstemp (mode 0600); the result files must end up 0644, as a
    plain open() would leave them, so a shared results directory is readable."""
    import stat

    from pipelines._io import atomic_write_text, write_summary

    for path in (atomic_write_text(tmp_path / "a.md", "x"), write_summary(tmp_path, {"a": 1})):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
