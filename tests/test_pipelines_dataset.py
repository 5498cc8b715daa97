"""Trace validation, straggler labels (vs a slow loop), splits (hypothesis), data hash."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pipelines_helpers import make_trace

from pipelines._dataset import (
    TraceError,
    check_classes,
    label_stragglers,
    load_trace,
    trace_hash,
    validate_trace,
)
from pipelines._splits import (
    TABLE1_FRACTIONS,
    fraction_split,
    leave_pair_out_splits,
    pair_order,
    table1_splits,
)

# ----------------------------------------------------------------------------- validation


def test_missing_column_named():
    t = make_trace().drop(columns=["launch_time"])
    with pytest.raises(TraceError, match=r"missing column\(s\) \['launch_time'\]"):
        validate_trace(t)


def test_no_counters():
    t = make_trace()
    with pytest.raises(TraceError, match="no counter column"):
        validate_trace(t[[c for c in t.columns if not c.startswith("c_")]])


def test_empty_trace():
    with pytest.raises(TraceError, match="empty"):
        validate_trace(make_trace().iloc[:0])


def test_wrong_types_named():
    t = make_trace()
    bad = t.assign(c_2=t["c_2"].astype(object))
    bad.loc[7, "c_2"] = "high"
    with pytest.raises(TraceError, match=r"column 'c_2' must be numeric, got 'high' at row 7"):
        validate_trace(bad)
    bad = t.assign(attempt=0.5)
    with pytest.raises(TraceError, match="column 'attempt' must hold integers, got 0.5 at row 0"):
        validate_trace(bad)
    bad = t.assign(node=1.5)
    with pytest.raises(TraceError, match="column 'node' must hold strings"):
        validate_trace(bad)
    bad = t.copy()
    bad.loc[3, "outcome"] = "exploded"
    with pytest.raises(TraceError, match="'outcome' has value 'exploded' at row 3"):
        validate_trace(bad)
    bad = t.copy()
    bad.loc[5, "duration"] = -1.0
    with pytest.raises(TraceError, match="'duration' has negative value -1.0 at row 5"):
        validate_trace(bad)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nonfinite_counters(value):
    t = make_trace()
    t.loc[11, "c_1"] = value
    t.loc[12, "c_3"] = value
    with pytest.raises(TraceError, match=rf"'c_1' has a non-finite value {value!r} at row 11 \(2"):
        validate_trace(t)
    kept = validate_trace(t, nan_counters="drop")
    assert len(kept) == len(t) - 2 and kept.attrs["dropped_nan_rows"] == 2
    assert np.isfinite(kept[[c for c in t.columns if c.startswith("c_")]].to_numpy()).all()


def test_nonfinite_time():
    t = make_trace()
    t.loc[4, "launch_time"] = np.nan
    with pytest.raises(TraceError, match="'launch_time' has a non-finite value nan at row 4"):
        validate_trace(t)


def test_load_trace_roundtrip_and_errors(tmp_path):
    t = make_trace()
    t.to_parquet(tmp_path / "tasks.parquet")
    pd.testing.assert_frame_equal(load_trace(tmp_path), validate_trace(t))
    with pytest.raises(FileNotFoundError, match="no trace at"):
        load_trace(tmp_path / "nope")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "tasks.parquet").write_bytes(b"not parquet")
    with pytest.raises(TraceError, match="cannot read as Parquet"):
        load_trace(tmp_path / "bad")
    t.drop(columns=["node"]).to_parquet(tmp_path / "bad" / "tasks.parquet")
    with pytest.raises(TraceError, match=r"tasks.parquet: missing column\(s\) \['node'\]"):
        load_trace(tmp_path / "bad")


# ----------------------------------------------------------------------------- labels


def _slow_labels(trace: pd.DataFrame, beta: float, min_tasks: int) -> dict:
    """The obvious loop: stage by stage of each job, task by task."""
    out = {}
    for job, phase in sorted(set(zip(trace["job_id"], trace["phase"], strict=True))):
        rows = [
            r for r in trace.itertuples() if r.job_id == job and r.phase == phase and r.attempt == 0
        ]
        durs = sorted(r.duration for r in rows if r.outcome == "finished")
        if len(durs) < min_tasks:
            continue
        m = len(durs)
        med = durs[m // 2] if m % 2 else (durs[m // 2 - 1] + durs[m // 2]) / 2
        for r in rows:
            slow = r.duration > beta * med
            if r.outcome == "finished" or slow:
                out[(r.job_id, r.task_id)] = slow
    return out


def _trace_strategy():
    @st.composite
    def build(draw):
        n_jobs = draw(st.integers(1, 6))
        rows = []
        for j in range(n_jobs):
            for k in range(draw(st.integers(1, 6))):
                phase = draw(st.sampled_from(["map", "map", "reduce"]))
                d = draw(st.sampled_from([1.0, 2.0, 3.0, 4.0, 10.0]))
                outcome = draw(st.sampled_from(["finished"] * 4 + ["killed", "failed"]))
                attempts = [0] + ([1] if draw(st.booleans()) else [])
                for a in attempts:
                    rows.append(
                        dict(
                            job_id=f"j{j}",
                            task_id=f"t{k}",
                            attempt=a,
                            workload="W",
                            node=draw(st.sampled_from(["a", "b"])),
                            phase=phase,
                            submit_time=0.0,
                            launch_time=(t0 := float(draw(st.integers(0, 9)))),
                            end_time=t0 + d,
                            duration=d,
                            outcome=outcome if a == 0 else "finished",
                            c_x=float(k),
                        )
                    )
        return pd.DataFrame(rows)

    return build()


@settings(max_examples=60, deadline=None)
@given(_trace_strategy(), st.sampled_from([1.1, 1.3, 2.0]), st.integers(1, 4))
def test_labels_match_slow_loop(trace, beta, min_tasks):
    lt = label_stragglers(validate_trace(trace), beta=beta, min_tasks=min_tasks)
    got = {(r.job_id, r.task_id): bool(r.straggler) for r in lt.frame.itertuples()}
    want = _slow_labels(trace, beta, min_tasks)
    assert got == want
    orig = trace[trace["attempt"] == 0]
    assert len(lt.frame) + lt.excluded_rows + lt.censored_rows == len(orig)
    n_fin = orig[orig["outcome"] == "finished"].groupby(["job_id", "phase"]).size()
    stages = orig.groupby(["job_id", "phase"]).ngroups
    assert lt.excluded_stages == stages - int((n_fin >= min_tasks).sum())
    jobs_ok = n_fin[n_fin >= min_tasks].index.get_level_values("job_id").unique()
    assert lt.excluded_jobs == orig["job_id"].nunique() - len(jobs_ok)


def test_label_parameters_validated():
    t = validate_trace(make_trace())
    with pytest.raises(ValueError, match="beta must be a finite number > 1, got 0.9"):
        label_stragglers(t, beta=0.9)
    with pytest.raises(ValueError, match="min_tasks must be an integer >= 1, got 0"):
        label_stragglers(t, min_tasks=0)


def test_single_class_workload():
    t = make_trace()
    # Make every SYN task in a job last exactly as long: no stragglers in SYN.
    syn = t["workload"] == "SYN"
    t.loc[syn, "duration"] = 7.0
    t.loc[syn, "end_time"] = t.loc[syn, "launch_time"] + 7.0
    lt = label_stragglers(validate_trace(t))
    with pytest.raises(TraceError, match=r"workload 'SYN' has a single class .* non-straggler"):
        check_classes(lt)
    lt = check_classes(lt, on_single_class="drop")
    assert lt.dropped_workloads == {"SYN": "no stragglers"}
    assert set(lt.frame["workload"]) == {"FB2009"}
    assert lt.summary()["dropped_workloads"] == {"SYN": "no stragglers"}


def test_all_jobs_too_small():
    t = make_trace(tasks_per_job=2)
    lt = label_stragglers(validate_trace(t), min_tasks=3)
    assert len(lt.frame) == 0 and lt.excluded_jobs == t["job_id"].nunique()
    with pytest.raises(TraceError, match="no labelled rows left: 40 jobs had fewer than 3"):
        check_classes(lt)


def test_summary_counts():
    lt = label_stragglers(validate_trace(make_trace()))
    s = lt.summary()
    assert s["rows"] == len(lt.frame)
    assert s["pairs"] == lt.frame.groupby(["node", "workload"]).ngroups
    for w, share in s["straggler_share_by_workload"].items():
        assert share == pytest.approx(lt.frame.loc[lt.frame["workload"] == w, "straggler"].mean())


def test_trace_hash_sensitive():
    t = make_trace()
    assert trace_hash(t) == trace_hash(make_trace())
    t2 = t.copy()
    t2.loc[0, "c_0"] += 1e-12
    assert trace_hash(t2) != trace_hash(t)


# ----------------------------------------------------------------------------- splits


def _frame_strategy():
    @st.composite
    def build(draw):
        n = draw(st.integers(1, 120))
        return pd.DataFrame(
            {
                "node": draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)),
                "workload": draw(st.lists(st.sampled_from(["W", "V"]), min_size=n, max_size=n)),
                "launch_time": draw(
                    st.lists(st.integers(0, 30).map(float), min_size=n, max_size=n)
                ),
                "job_id": "j",
                "task_id": [f"t{i:03d}" for i in range(n)],
            }
        ).sample(frac=1.0, random_state=draw(st.integers(0, 99)), ignore_index=True)

    return build()


def _key(frame, i):
    r = frame.iloc[i]
    return (r["launch_time"], r["job_id"], r["task_id"])


@settings(max_examples=60, deadline=None)
@given(_frame_strategy(), st.sampled_from(TABLE1_FRACTIONS), st.sampled_from([0.0, 0.25, 0.5]))
def test_fraction_split_properties(frame, fraction, val_share):
    s = fraction_split(frame, fraction, val_share=val_share)
    fit, val, test = set(s.fit), set(s.val), set(s.test)
    assert not (fit & val) and not (fit & test) and not (val & test)
    for (node, wl), pos in pair_order(frame).items():
        n = len(pos)
        in_pair = set(pos)
        n_train = int(np.floor(fraction * n + 1e-9))
        assert len((fit | val) & in_pair) == n_train
        assert len(val & in_pair) == int(np.floor(val_share * n_train + 1e-9))
        assert len(test & in_pair) == n - int(np.floor(0.66 * n + 1e-9))
        # time order inside the pair: fit <= val <= test
        parts = [sorted(_key(frame, i) for i in p & in_pair) for p in (fit, val, test)]
        nonempty = [p for p in parts if p]
        for a, b in zip(nonempty, nonempty[1:], strict=False):
            assert a[-1] <= b[0]
        assert all(frame.loc[i, "node"] == node and frame.loc[i, "workload"] == wl for i in pos)


@settings(max_examples=40, deadline=None)
@given(_frame_strategy(), st.integers(1, 5), st.integers(0, 9))
def test_leave_pair_out_properties(frame, n_pairs, seed):
    orders = pair_order(frame)
    if max(len(v) for v in orders.values()) < 5:
        with pytest.raises(ValueError, match="no \\(node, workload\\) pair has min_rows=5"):
            leave_pair_out_splits(frame, n_pairs=n_pairs, min_rows=5, seed=seed)
        return
    splits = leave_pair_out_splits(frame, n_pairs=n_pairs, min_rows=5, seed=seed)
    eligible = [k for k, v in orders.items() if len(v) >= 5]
    assert len(splits) == min(n_pairs, len(eligible))
    assert len({tuple(s.info["pair"]) for s in splits}) == len(splits)
    for s in splits:
        pos = orders[tuple(s.info["pair"])]
        n_keep = int(np.floor(0.05 * len(pos) + 1e-9))
        assert set(s.test) == set(pos[n_keep:])
        assert set(s.train) == set(range(len(frame))) - set(s.test)
        assert not set(s.fit) & set(s.val)
    again = leave_pair_out_splits(frame, n_pairs=n_pairs, min_rows=5, seed=seed)
    assert [s.name for s in again] == [s.name for s in splits]


def test_split_parameters_validated():
    f = pd.DataFrame(
        {"node": "a", "workload": "W", "launch_time": [0.0], "job_id": "j", "task_id": "t"}
    )
    with pytest.raises(ValueError, match="fraction must be a number in \\[0, 0.66\\], got 0.8"):
        fraction_split(f, 0.8)
    with pytest.raises(ValueError, match="n_pairs must be an integer >= 1, got 0"):
        leave_pair_out_splits(f, n_pairs=0)
    assert len(table1_splits(f)) == len(TABLE1_FRACTIONS)
