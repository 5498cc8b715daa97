"""One straggler rule: the simulator's summary and the training pipeline label alike.

Oracle: a per-job loop written from the rule's statement (median over finished originals,
at least ``min_tasks`` of them; killed originals labelled only once past the threshold).
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from pipelines._dataset import label_stragglers as pipeline_labels
from pipelines._dataset import validate_trace


def _oracle(rows, beta, min_tasks):
    out = []
    for job, attempt, outcome, dur in rows:
        fin = [d for j, a, o, d in rows if j == job and a == 0 and o == "finished"]
        if attempt != 0 or len(fin) < min_tasks:
            out.append(math.nan)
            continue
        above = dur > beta * statistics.median(fin)
        out.append(float(above) if outcome == "finished" or above else math.nan)
    return out


_row = st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from([0, 0, 0, 1]),
    st.sampled_from(["finished", "finished", "killed"]),
    st.sampled_from([1.0, 2.0, 3.0, 5.0]) | st.floats(0.1, 50.0),
)


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(_row, min_size=1, max_size=30),
    beta=st.sampled_from([1.1, 1.3, 2.0]),
    min_tasks=st.integers(1, 4),
)
def test_both_label_functions_follow_the_rule(rows, beta, min_tasks):
    expect = np.array(_oracle(rows, beta, min_tasks))
    n = len(rows)
    trace = pd.DataFrame(
        {
            "job_id": [r[0] for r in rows],
            "task_id": [f"{r[0]}-m{i}" for i, r in enumerate(rows)],
            "attempt": [r[1] for r in rows],
            "workload": "SYN",
            "node": "n0000",
            "phase": "map",
            "submit_time": 0.0,
            "launch_time": np.arange(n, dtype=float),
            "end_time": np.arange(n, dtype=float) + [r[3] for r in rows],
            "duration": [r[3] for r in rows],
            "outcome": [r[2] for r in rows],
            "c_cpu": 0.5,
        }
    )
    got = sim_bridge.label_stragglers(trace, beta, min_tasks).to_numpy()
    np.testing.assert_array_equal(got, expect)
    lt = pipeline_labels(validate_trace(trace), beta, min_tasks)
    known = ~np.isnan(expect)
    by_task = dict(zip(lt.frame["task_id"], lt.frame["straggler"], strict=True))
    assert set(by_task) == set(trace.loc[known, "task_id"])
    for task_id, label in zip(trace.loc[known, "task_id"], expect[known], strict=True):
        assert by_task[task_id] == bool(label)
    share = sim_bridge.summarize(
        pd.DataFrame(
            {"jct": [1.0], "submit_time": [0.0], "finish_time": [1.0], "met_deadline": [True]}
        ),
        trace,
        beta=beta,
    )["straggler_share"]
    if min_tasks == 3:
        assert (math.isnan(share) and not known.any()) or share == np.nanmean(expect)
