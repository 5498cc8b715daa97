"""``import sim_bridge`` and a streamed run import no pandas (its RSS is the streamed day's
fixed cost), and what replaces it on that path gives the same values.

Oracles: in a fresh interpreter, ``sys.modules`` after ``import sim_bridge`` and a small
streamed ``simulate`` (every public name still importable; ``r.jobs`` then builds its
DataFrame and equals the in-memory run's). The pandas-free summary pieces against the pandas
ones on random traces, exactly: :func:`straggler_labels` against
:func:`~sim_bridge.trace.straggler_thresholds` and :func:`~sim_bridge.trace.excluded_counts`,
:class:`StreamSummary` against :func:`sim_bridge.summarize`, :func:`arrow_array` against
``pyarrow.Table.from_pandas``.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sim_bridge
from sim_bridge._stream_summary import StreamSummary, group_medians, straggler_labels
from sim_bridge._trace_columns import task_columns
from sim_bridge._trace_sink import arrow_array
from sim_bridge.trace import excluded_counts, straggler_thresholds, tasks_table
from sim_bridge.world import _persistence

REPO = Path(__file__).resolve().parents[1]

#: modules neither ``import sim_bridge`` nor a streamed run may load (``scipy`` at all when
#: the contention paths' kernels are built: the logistic map of a block runs in C)
LAZY = ("pandas", "scipy.stats", "matplotlib", "sklearn", "tqdm") + (
    ("scipy",) if _persistence.expit_inplace is not None else ()
)

_CHILD = """
import json, sys
import sim_bridge
after_import = sorted(m for m in {lazy!r} if m in sys.modules)
names = [n for n in sim_bridge.__all__ if not hasattr(sim_bridge, n)]
jobs = [sim_bridge.JobSpec(f"j{{i}}", 3.0 * i, [4.0, 5.0, 9.0], [2.0]) for i in range(30)]
r = sim_bridge.simulate(sim_bridge.Workload("SYN", jobs), "late", "fifo", nodes=3, slots=2,
    seed=1, trace_sink={path!r}, row_group_rows=16, progress=False)
after_run = sorted(m for m in {lazy!r} if m in sys.modules)
summary = {{k: v for k, v in r.summary.items() if k in ("jobs", "attempts", "complete")}}
n_jobs = len(r.jobs)
print(json.dumps(dict(after_import=after_import, after_run=after_run, missing=names,
    summary=summary, n_jobs=n_jobs, pandas_after_jobs="pandas" in sys.modules)))
"""


def _run_child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (this checkout first on its path) and read the
    JSON of its last line."""
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "TQDM_DISABLE": "1", "PATH": "/usr/bin:/bin"},
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_import_and_a_streamed_run_load_no_pandas(tmp_path):
    path = tmp_path / "t.parquet"
    code = _CHILD.format(lazy=LAZY, path=str(path))
    out = _run_child(code)
    assert out["after_import"] == [] and out["after_run"] == [] and out["missing"] == []
    assert out["summary"] == {"jobs": 30, "attempts": out["summary"]["attempts"], "complete": True}
    assert out["n_jobs"] == 30 and out["pandas_after_jobs"]  # built on access
    assert len(pd.read_parquet(path)) == out["summary"]["attempts"]


_PAST_A_DAY = """
import json, sys
import sim_bridge
jobs = [sim_bridge.JobSpec(f"j{{i}}", 3600.0 * i, [40.0, 50.0], [20.0]) for i in range(27)]
r = sim_bridge.simulate(sim_bridge.Workload("SYN", jobs), "late", nodes=40, slots=2, seed=1,
    trace_sink={path!r}, progress=False)
print(json.dumps(dict(loaded=sorted(m for m in {lazy!r} if m in sys.modules),
    complete=r.summary["complete"])))
"""


@pytest.mark.skipif(_persistence.expit_inplace is None, reason="the paths' kernels not built")
def test_a_streamed_run_past_its_first_day_loads_no_scipy(tmp_path):
    """The next day's block is drawn into the paths' window, a view whose rows are apart by
    more than their steps: its logistic map runs in C too (SciPy was imported there until
    2026-12-02 (y))."""
    code = _PAST_A_DAY.format(lazy=LAZY, path=str(tmp_path / "t.parquet"))
    out = _run_child(code)
    assert out == {"loaded": [], "complete": True}


def test_the_lazy_job_table_equals_the_in_memory_runs(tmp_path):
    jobs = [sim_bridge.JobSpec(f"j{i}", 2.0 * i, [3.0, 6.0, 4.0]) for i in range(20)]
    kw = dict(nodes=2, slots=2, seed=3, progress=False, engine="python")
    w = sim_bridge.Workload("SYN", jobs)
    mem = sim_bridge.simulate(w, "late", **kw)
    st_ = sim_bridge.simulate(w, "late", trace_sink=tmp_path / "t.parquet", **kw)
    again = pickle.loads(pickle.dumps(st_))  # pickled with its table built
    assert isinstance(again.jobs, pd.DataFrame) and again.jobs.equals(mem.jobs)
    assert isinstance(st_.jobs, pd.DataFrame) and st_.jobs.equals(mem.jobs)
    assert st_.jobs is st_.jobs  # built once
    for key in ("straggler_share", "p99_jct", "pocd", "makespan", "killed", "copies"):
        assert st_.summary[key] == mem.summary[key] or (
            np.isnan(st_.summary[key]) and np.isnan(mem.summary[key])
        )


_trace = st.integers(0, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 4), min_size=n, max_size=n),  # job
        st.lists(st.sampled_from(["map", "reduce"]), min_size=n, max_size=n),
        st.lists(st.integers(0, 2), min_size=n, max_size=n),  # attempt
        st.lists(st.booleans(), min_size=n, max_size=n),  # finished
        st.lists(  # durations with ties and both parities of group sizes
            st.one_of(st.sampled_from([1.0, 2.0, 0.1, 0.3]), st.floats(1e-3, 1e6)),
            min_size=n,
            max_size=n,
        ),
    )
)


def _columns(draw):
    job, phase, attempt, finished, dur = draw
    return (
        np.array([f"j{j}" for j in job], dtype=object),
        np.array(phase, dtype=object),
        np.array(attempt, dtype=np.int64),
        np.array(finished, dtype=bool),
        np.array(dur, dtype=float),
    )


@given(_trace, st.sampled_from([1.05, 1.3, 2.0]), st.booleans())
def test_straggler_labels_equal_the_pandas_rule(draw, beta, staged):
    job, phase, attempt, finished, dur = _columns(draw)
    stage = phase if staged else None
    outcome = np.where(finished, "finished", "killed")
    med, lab = straggler_thresholds(job, attempt, outcome, dur, beta, stage=stage)
    med2, lab2, ex_jobs, ex_stages = straggler_labels(
        job, attempt, finished, dur, beta, stage=stage
    )
    np.testing.assert_array_equal(med2, med)
    np.testing.assert_array_equal(lab2, lab)
    assert (ex_jobs, ex_stages) == excluded_counts(job, stage, med)


@given(st.lists(st.floats(-1e9, 1e9), min_size=1, max_size=40), st.integers(1, 4))
def test_group_medians_equal_pandas_groupby_median(values, n_groups):
    v = np.array(values)
    codes = np.arange(len(v)) % n_groups
    med, size = group_medians(codes, v, n_groups)
    ref = pd.Series(v).groupby(codes).agg(["median", "size"])
    np.testing.assert_array_equal(med[ref.index], ref["median"].to_numpy())
    np.testing.assert_array_equal(size[ref.index], ref["size"].to_numpy())


@given(st.lists(_trace, min_size=1, max_size=4))
def test_stream_summary_in_chunks_equals_summarize(chunks):
    acc = StreamSummary()
    frames = []
    for k, draw in enumerate(chunks):  # each chunk its own jobs, as the sink hands them over
        job, phase, attempt, finished, dur = _columns(draw)
        job = np.array([f"c{k}{j}" for j in job], dtype=object)
        acc.add(job_id=job, attempt=attempt, finished=finished, duration=dur, phase=phase)
        frames.append(
            pd.DataFrame(
                {
                    "job_id": job,
                    "attempt": attempt,
                    "duration": dur,
                    "phase": phase,
                    "outcome": np.where(finished, "finished", "killed").astype(object),
                }
            )  # fmt: skip
        )
    tasks = pd.concat(frames, ignore_index=True)
    jobs = pd.DataFrame(
        {"submit_time": [0.0, 2.0], "finish_time": [5.0, 3.0], "jct": [5.0, 1.0],
         "met_deadline": [True, False]}
    )  # fmt: skip
    ref = sim_bridge.summarize(jobs, tasks)
    got = acc.summary({k: jobs[k].to_numpy() for k in jobs.columns})
    assert set(got) == set(ref)
    for key, value in ref.items():
        if key == "task_seconds" and len(chunks) > 1:  # per-chunk sums (documented)
            assert np.isclose(got[key], value, rtol=1e-12)
        elif isinstance(value, float) and np.isnan(value):
            assert np.isnan(got[key])
        else:
            assert got[key] == value, key


def test_arrow_array_equals_from_pandas():
    cols = {
        "s": np.array(["ab", "", "é", "n0001"], dtype=object),
        "f": np.array([1.5, np.nan, -0.0, 1e300]),
        "i": np.array([0, -3, 2**40, 7], dtype=np.int64),
        "b": np.array([True, False, True, True]),
    }
    ref = pa.Table.from_pandas(pd.DataFrame(cols), preserve_index=False)
    got = pa.Table.from_arrays([arrow_array(v) for v in cols.values()], names=list(cols))
    assert got.equals(ref.replace_schema_metadata(None))
    assert got.to_pandas().equals(ref.to_pandas())
    empty = {k: v[:0] for k, v in cols.items()}
    ref0 = pa.Table.from_pandas(pd.DataFrame(empty), preserve_index=False)
    got0 = pa.Table.from_arrays([arrow_array(v) for v in empty.values()], names=list(empty))
    assert got0.schema.equals(ref0.schema, check_metadata=False)


def test_task_columns_are_the_columns_of_tasks_table():
    rng = np.random.default_rng(3)
    n = 7
    base = dict(
        job_id=[f"j{i % 3}" for i in range(n)],
        task_id=[f"j{i % 3}-m{i}" for i in range(n)],
        attempt=rng.integers(0, 3, n),
        workload=["SYN"] * n,
        phase=["map", "reduce"] * 3 + ["map"],
        submit_time=rng.random(n),
        launch_time=rng.random(n),
        end_time=rng.random(n) + 1.0,
        outcome=["finished", "killed"] * 3 + ["finished"],
        input_work=rng.random(n),
    )
    cases = [
        dict(node=rng.integers(0, 5, n)),
        dict(node=rng.integers(0, 5, n), node_names=np.array([f"m{i}" for i in range(5)], object)),
        dict(
            node=[f"x{i}" for i in range(n)],
            truth={"work": rng.random(n)},
            counters={"load1": rng.random(n), "cpu_user": rng.random(n)},
        ),
        dict(node=np.zeros(0, np.int64), **{k: v[:0] for k, v in base.items()}),
    ]
    for extra in cases:
        kw = {**base, **extra}
        table = tasks_table(**kw)
        assert pd.DataFrame(task_columns(**kw)).equals(table)
        assert list(task_columns(**kw)) == list(table.columns)
