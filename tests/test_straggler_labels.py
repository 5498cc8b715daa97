"""One straggler rule: the simulator's summary and the training pipeline label alike.

The rule compares like with like: an original attempt is a straggler when its run time
exceeds ``beta`` x the median of the finished original attempts of the same stage (the
trace's ``phase``) of its job. Oracle: an explicit loop over the (job, phase) groups written
from the rule's statement (median over finished originals, at least ``min_tasks`` of them;
killed originals labelled only once past the threshold). Without a ``phase`` column, or with
one phase per job, the rule is the old job-level one.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from pipelines._dataset import label_stragglers as pipeline_labels
from pipelines._dataset import validate_trace
from sim_bridge._metrics import straggler_thresholds


def _oracle(rows, beta, min_tasks):
    """Slow and obvious: for each (job, phase) group, its median, then each of its rows."""
    out = [math.nan] * len(rows)
    groups = sorted({(job, phase) for job, phase, _a, _o, _d in rows})
    for job, phase in groups:
        members = [i for i, r in enumerate(rows) if r[0] == job and r[1] == phase]
        fin = [rows[i][4] for i in members if rows[i][2] == 0 and rows[i][3] == "finished"]
        if len(fin) < min_tasks:
            continue
        median = statistics.median(fin)
        for i in members:
            _job, _phase, attempt, outcome, dur = rows[i]
            if attempt != 0:
                continue
            above = dur > beta * median
            if outcome == "finished" or above:
                out[i] = float(above)
    return out


def _excluded_oracle(rows, min_tasks):
    """(jobs, stages) without a median, by the same loop."""
    fin: dict[tuple, int] = {}
    for job, phase, attempt, outcome, _d in rows:
        fin.setdefault((job, phase), 0)
        fin[(job, phase)] += attempt == 0 and outcome == "finished"
    bad = {k for k, n in fin.items() if n < min_tasks}
    jobs = {j for j, _p in fin}
    ok_jobs = {j for (j, _p) in fin.keys() - bad}
    return len(jobs - ok_jobs), len(bad)


_row = st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["map", "map", "reduce", "task"]),
    st.sampled_from([0, 0, 0, 1]),
    st.sampled_from(["finished", "finished", "killed"]),
    st.sampled_from([1.0, 2.0, 3.0, 5.0]) | st.floats(0.1, 50.0),
)


def _trace(rows) -> pd.DataFrame:
    n = len(rows)
    return pd.DataFrame(
        {
            "job_id": [r[0] for r in rows],
            "task_id": [f"{r[0]}-{r[1][0]}{i}" for i, r in enumerate(rows)],
            "attempt": [r[2] for r in rows],
            "workload": "SYN",
            "node": "n0000",
            "phase": [r[1] for r in rows],
            "submit_time": 0.0,
            "launch_time": np.arange(n, dtype=float),
            "end_time": np.arange(n, dtype=float) + [r[4] for r in rows],
            "duration": [r[4] for r in rows],
            "outcome": [r[3] for r in rows],
            "c_cpu": 0.5,
        }
    )


def _one_job_summary(trace: pd.DataFrame, beta: float) -> dict:
    jobs = pd.DataFrame(
        {"jct": [1.0], "submit_time": [0.0], "finish_time": [1.0], "met_deadline": [True]}
    )
    return sim_bridge.summarize(jobs, trace, beta=beta)


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(_row, min_size=1, max_size=30),
    beta=st.sampled_from([1.1, 1.3, 2.0]),
    min_tasks=st.integers(1, 4),
)
def test_every_label_function_follows_the_stage_rule(rows, beta, min_tasks):
    expect = np.array(_oracle(rows, beta, min_tasks))
    trace = _trace(rows)
    got = sim_bridge.label_stragglers(trace, beta, min_tasks).to_numpy()
    np.testing.assert_array_equal(got, expect)
    _med, lab = straggler_thresholds(
        trace["job_id"],
        trace["attempt"],
        trace["outcome"],
        trace["duration"],
        beta,
        min_tasks,
        stage=trace["phase"],
    )
    np.testing.assert_array_equal(lab, expect)
    lt = pipeline_labels(validate_trace(trace), beta, min_tasks)
    known = ~np.isnan(expect)
    by_task = dict(zip(lt.frame["task_id"], lt.frame["straggler"], strict=True))
    assert set(by_task) == set(trace.loc[known, "task_id"])
    for task_id, label in zip(trace.loc[known, "task_id"], expect[known], strict=True):
        assert by_task[task_id] == bool(label)
    originals = [r for r in rows if r[2] == 0]
    if originals:
        assert (lt.excluded_jobs, lt.excluded_stages) == _excluded_oracle(originals, min_tasks)
    if min_tasks == 3:
        s = _one_job_summary(trace, beta)
        share = s["straggler_share"]
        assert (math.isnan(share) and not known.any()) or share == np.nanmean(expect)
        jobs, stages = _excluded_oracle(rows, min_tasks)
        assert (s["straggler_excluded_jobs"], s["straggler_excluded_stages"]) == (jobs, stages)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(_row, min_size=1, max_size=30),
    beta=st.sampled_from([1.1, 1.3, 2.0]),
    min_tasks=st.integers(1, 4),
)
def test_one_stage_per_job_is_the_job_rule(rows, beta, min_tasks):
    """No ``phase`` column, one phase per job, or ``stage=None``: the job-level rule."""
    one_stage = [(job, "map", a, o, d) for job, _p, a, o, d in rows]
    expect = np.array(_oracle(one_stage, beta, min_tasks))
    trace = _trace(one_stage)
    np.testing.assert_array_equal(
        sim_bridge.label_stragglers(trace, beta, min_tasks).to_numpy(), expect
    )
    np.testing.assert_array_equal(
        sim_bridge.label_stragglers(trace.drop(columns="phase"), beta, min_tasks).to_numpy(),
        expect,
    )
    # the phases of the original rows are ignored when no stage is given
    mixed = _trace(rows)
    _med, lab = straggler_thresholds(
        mixed["job_id"], mixed["attempt"], mixed["outcome"], mixed["duration"], beta, min_tasks
    )
    np.testing.assert_array_equal(lab, expect)
    s = _one_job_summary(trace.drop(columns="phase"), beta)
    assert s["straggler_excluded_jobs"] == s["straggler_excluded_stages"]


def test_reduces_are_not_stragglers_against_maps():
    """A job of short maps and long reduces: the job-wide median labelled every reduce a
    straggler; per stage, only the slow map and the slow reduce straggle."""
    dur = [10.0, 10.0, 10.0, 30.0, 100.0, 100.0, 100.0, 300.0]
    phase = ["map"] * 4 + ["reduce"] * 4
    t = pd.DataFrame({"job_id": "j", "attempt": 0, "duration": dur, "phase": phase})
    assert sim_bridge.label_stragglers(t).tolist() == [0, 0, 0, 1, 0, 0, 0, 1]
    old = sim_bridge.label_stragglers(t.drop(columns="phase")).tolist()
    assert old == [0, 0, 0, 0, 1, 1, 1, 1]
    med, _ = straggler_thresholds(t["job_id"], t["attempt"], None, dur, stage=phase)
    assert med.tolist() == [10.0] * 4 + [100.0] * 4


def test_same_phase_name_in_two_jobs_is_two_stages():
    t = pd.DataFrame(
        {
            "job_id": ["a"] * 3 + ["b"] * 3,
            "attempt": 0,
            "duration": [1.0, 1.0, 1.0, 5.0, 5.0, 5.0],
            "phase": "map",
        }
    )
    assert sim_bridge.label_stragglers(t).tolist() == [0.0] * 6


def test_stage_length_must_match():
    with pytest.raises(ValueError, match="stage has 2 entries, job_id has 3"):
        straggler_thresholds(["a"] * 3, [0] * 3, None, [1.0] * 3, stage=["map"] * 2)


def test_empty_trace():
    med, lab = straggler_thresholds([], [], None, [], stage=[])
    assert med.size == lab.size == 0
