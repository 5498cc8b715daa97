"""FlowBench reader: the mapping into the trace schema, causal counters against a slow
oracle, no leakage from jobs that end after a launch, and errors naming file/row/column."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines import label_stragglers, load_trace, validate_trace
from pipelines.flowbench import (
    COUNTER_NAMES,
    EXTRA_COLUMNS,
    FlowBenchFormatError,
    build_trace,
    causal_counters,
    collect_flowbench,
    read_flowbench,
    read_run,
)

#: Upstream's header (the first column, the DAG node id, has an empty name).
HEADER = (
    ",anomaly_type,type,is_clustered,ready,pre_script_start,pre_script_end,submit,"
    "stage_in_start,stage_in_end,stage_in_effective_bytes_per_sec,execute_start,execute_end,"
    "stage_out_start,stage_out_end,stage_out_effective_bytes_per_sec,post_script_start,"
    "post_script_end,wms_delay,pre_script_delay,queue_delay,runtime,post_script_delay,"
    "stage_in_delay,stage_in_bytes,stage_out_delay,stage_out_bytes,kickstart_user,"
    "kickstart_site,kickstart_hostname,kickstart_transformations,kickstart_executables,"
    "kickstart_executables_argv,kickstart_executables_cpu_time,kickstart_status,"
    "kickstart_executables_exitcode,kickstart_online_iowait,kickstart_online_bytes_read,"
    "kickstart_online_bytes_written,kickstart_online_read_system_calls,"
    "kickstart_online_write_system_calls,kickstart_online_utime,kickstart_online_stime,"
    "kickstart_online_bytes_read_per_second,kickstart_online_bytes_written_per_second"
).split(",")

W1 = "poseidon-worker-1-container-0-3"
W1B = "poseidon-worker-1-container-4-7"
W2 = "poseidon-worker-2-container-0-3"


def _row(node, typ, site, host, tr, start, end, anomaly="None", status=0, exitcode=0, online=True):
    r = dict.fromkeys(HEADER, "")
    r.update(
        {
            "": node,
            "anomaly_type": anomaly,
            "type": typ,
            "is_clustered": "0",
            "ready": f"{start - 5}.0",
            "submit": f"{start - 2}.0",
            "execute_start": f"{start}.0",
            "execute_end": f"{end}.0",
            "runtime": f"{end - start}.0",
            "kickstart_user": "poseidon",
            "kickstart_site": site,
            "kickstart_hostname": host,
            "kickstart_transformations": tr,
            "kickstart_executables": tr,
            "kickstart_executables_cpu_time": f"{0.8 * (end - start):.1f}",
            "kickstart_status": str(status),
            "kickstart_executables_exitcode": str(exitcode),
        }
    )
    if online:
        r.update(
            {
                "kickstart_online_iowait": "0.5",
                "kickstart_online_bytes_read": "1000.0",
                "kickstart_online_bytes_written": "500.0",
                "kickstart_online_read_system_calls": "10.0",
                "kickstart_online_write_system_calls": "5.0",
            }
        )
    return r


def _run_rows(t0: int, anomaly: str) -> list[dict]:
    """A small run: a create-dir, a stage-in, 4 `a` jobs, 3 `b` jobs, a cleanup."""
    return [
        _row(
            "create_dir_wf_0",
            "auxiliary",
            "local",
            "submit-host",
            "pegasus::dirmanager",
            t0,
            t0 + 3,
        ),
        _row(
            "stage_in_local_0",
            "transfer",
            "local",
            "submit-host",
            "pegasus::transfer",
            t0 + 3,
            t0 + 9,
        ),
        _row("a_ID1", "compute", "condorpool", W1, "a", t0 + 10, t0 + 40),
        _row("a_ID2", "compute", "condorpool", W1B, "a", t0 + 10, t0 + 42, anomaly=anomaly),
        _row("a_ID3", "compute", "condorpool", W2, "a", t0 + 11, t0 + 39, online=False),
        _row("a_ID4", "compute", "condorpool", W1, "a", t0 + 41, t0 + 120, exitcode=1),
        _row("b_ID5", "compute", "condorpool", W2, "b", t0 + 50, t0 + 60),
        _row("b_ID6", "compute", "condorpool", W1B, "b", t0 + 50, t0 + 61, anomaly=anomaly),
        _row("b_ID7", "compute", "condorpool", W1, "b", t0 + 121, t0 + 200),
        _row(
            "cleanup_wf_0",
            "auxiliary",
            "local",
            "submit-host",
            "pegasus::cleanup",
            t0 + 201,
            t0 + 205,
        ),
    ]


def _csv(rows: list[dict]) -> str:
    lines = [",".join(HEADER)] + [",".join(r[h] for h in HEADER) for r in rows]
    return "\n".join(lines) + "\n"


@pytest.fixture
def tiny(tmp_path):
    """parsed/normal/wf-run0001.csv (plain) and parsed/cpu_2/wf-run0002.csv.gz."""
    parsed = tmp_path / "flowbench" / "parsed"
    (parsed / "normal").mkdir(parents=True)
    (parsed / "cpu_2").mkdir()
    (parsed / "normal" / "wf-run0001.csv").write_text(_csv(_run_rows(1000, "None")))
    with gzip.open(parsed / "cpu_2" / "wf-run0002.csv.gz", "wt") as fh:
        fh.write(_csv(_run_rows(2000, "cpu_2")))
    return tmp_path


# ------------------------------------------------------------------------------ mapping
def test_mapping_of_a_tiny_run_folder(tiny, tmp_path):
    s = collect_flowbench(tiny, tmp_path / "trace")
    t = load_trace(tmp_path / "trace")
    assert len(t) == 14  # 7 executor jobs per run; auxiliary and transfer rows are not tasks
    assert s["row_categories"] == {
        "executor_jobs": 14,
        "local_auxiliary": 4,
        "local_transfer": 2,
    }
    assert set(t["job_id"]) == {"normal/wf-run0001", "cpu_2/wf-run0002"}
    r = t.set_index(["job_id", "task_id"]).loc[("cpu_2/wf-run0002", "a_ID2")]
    assert r["node"] == W1B and r["worker"] == "poseidon-worker-1"
    assert r["workload"] == "wf/a" and r["phase"] == "a" and r["attempt"] == 0
    assert (r["launch_time"], r["end_time"], r["duration"]) == (2010.0, 2042.0, 32.0)
    assert r["submit_time"] == 2008.0
    assert r["anomaly_folder"] == "cpu_2" and r["anomaly_type"] == "cpu_2"
    failed = t[t["outcome"] == "failed"]
    assert sorted(failed["task_id"]) == ["a_ID4", "a_ID4"]
    assert set(t["outcome"]) == {"finished", "failed"}
    # extra columns are never counters; the counters are the documented ones, finite
    assert not any(c.startswith("c_") for c in EXTRA_COLUMNS)
    assert [c for c in t.columns if c.startswith("c_")] == list(COUNTER_NAMES)
    assert np.isfinite(t[list(COUNTER_NAMES)].to_numpy()).all()
    assert t["launch_time"].is_monotonic_increasing
    # the summary is that of a collect, plus FlowBench's own keys
    saved = json.loads((tmp_path / "trace" / "summary.json").read_text())
    for key in ("rows", "pairs", "nodes", "workloads", "straggler_share", "excluded_stages"):
        assert key in saved
    assert saved["nodes"] == 3 and saved["files"] == 2
    assert (tmp_path / "trace" / "jobs.parquet").is_file()


def test_plain_and_gzip_files_read_alike(tmp_path):
    rows = _csv(_run_rows(0, "hdd_5"))
    (tmp_path / "hdd_5").mkdir()
    plain = tmp_path / "hdd_5" / "x-run0001.csv"
    plain.write_text(rows)
    packed = tmp_path / "hdd_5" / "x-run0002.csv.gz"
    packed.write_bytes(gzip.compress(rows.encode()))
    a, b = read_run(plain), read_run(packed)
    cols = [c for c in a.columns if c not in ("run", "job_id")]
    pd.testing.assert_frame_equal(
        a[cols].astype({c: str for c in a[cols].select_dtypes("category")}),
        b[cols].astype({c: str for c in b[cols].select_dtypes("category")}),
    )
    both = read_flowbench(tmp_path)
    assert both["job_id"].astype(str).unique().tolist() == ["hdd_5/x-run0001", "hdd_5/x-run0002"]


def test_arrow_and_careful_pandas_paths_agree(tiny):
    """Arrow reads good files; pandas re-reads a bad one to name the fault: same table."""
    import pyarrow as pa

    from pipelines.flowbench._read import _SCHEMA, _load_careful, _load_fast

    for f in sorted((tiny / "flowbench" / "parsed").glob("*/*")):
        fast = _load_fast(f)
        careful = pa.Table.from_pandas(
            _load_careful(f).set_axis(_SCHEMA.names, axis=1),
            schema=_SCHEMA,
            preserve_index=False,
        )
        assert fast.equals(careful)


def test_filters_name_the_parameter(tiny):
    assert set(read_flowbench(tiny, anomalies=["normal"])["folder"]) == {"normal"}
    with pytest.raises(ValueError, match="workflows"):
        read_flowbench(tiny, workflows=["montage"])
    with pytest.raises(ValueError, match="anomalies"):
        read_flowbench(tiny, anomalies=["hdd_10"])


# ----------------------------------------------------------------------- causal counters
def _random_raw(rng: np.random.Generator, n: int = 40) -> pd.DataFrame:
    """Executor jobs on 4 hosts of 2 workers, 2 types, 3 runs; integer times with ties;
    some rows without online counters; a few submit-host rows."""
    hosts = np.array(["wa-container-0", "wa-container-1", "wb-container-0", "wb-container-1"])
    start = rng.integers(0, 400, n).astype(float)
    end = start + rng.integers(0, 80, n)
    online = rng.random(n) < 0.7
    raw = pd.DataFrame(
        {
            "pegasus_type": np.where(rng.random(n) < 0.15, "auxiliary", "compute"),
            "site": "condorpool",
            "host": hosts[rng.integers(0, 4, n)],
            "workflow": "wf",
            "transformation": np.array(["a", "b"])[rng.integers(0, 2, n)],
            "job_id": np.array(["r1", "r2", "r3"])[rng.integers(0, 3, n)],
            "start": start,
            "end": end,
            "cpu_time": rng.uniform(0, 100, n),
            "iowait": np.where(online, rng.uniform(0, 5, n), np.nan),
            "bytes_read": np.where(online, rng.uniform(0, 1e6, n), np.nan),
            "bytes_written": np.where(online, rng.uniform(0, 1e6, n), np.nan),
            "read_calls": np.where(online, rng.uniform(0, 1e3, n), np.nan),
            "write_calls": np.where(online, rng.uniform(0, 1e3, n), np.nan),
        }
    )
    raw.loc[raw["pegasus_type"] == "auxiliary", "site"] = "local"
    return raw


def _oracle(raw: pd.DataFrame, beta: float, halflife: float, window: int) -> pd.DataFrame:
    """The definitions, one job at a time, filtering finished-before rows."""
    is_ex = ((raw["pegasus_type"] == "compute") & (raw["site"] != "local")).to_numpy()
    ex = raw[is_ex].reset_index()
    aux = raw[~is_ex]
    n = len(ex)
    rt = np.maximum(ex["end"] - ex["start"], 1.0).to_numpy()
    typ = (ex["workflow"] + "/" + ex["transformation"]).to_numpy()
    ref = np.empty(n)
    for k in range(n):
        same = sorted(
            (i for i in range(n) if typ[i] == typ[k]),
            key=lambda i: (ex["end"][i], ex["start"][i], i),
        )
        pos = same.index(k)
        ref[k] = np.median(rt[same[max(0, pos - window + 1) : pos + 1]])
    slow = np.log(rt / np.maximum(ref, 1.0))
    strag = (rt > beta * ref).astype(float)
    cpu = ex["cpu_time"].to_numpy() / rt
    on_cols = ["iowait", "bytes_read", "bytes_written", "read_calls", "write_calls"]
    online = np.isfinite(ex[on_cols].to_numpy()).all(axis=1)
    worker = ex["host"].str.split("-container-").str[0].to_numpy()

    def ew(idx, t, x):
        if len(idx) == 0:
            return 0.0
        w = 0.5 ** ((t - ex["end"].to_numpy()[idx]) / halflife)
        return float(np.sum(w * x[idx]) / np.sum(w))

    rows = []
    for j in range(n):
        t, h = ex["start"][j], ex["host"][j]
        e = ex["end"].to_numpy()
        hist = np.flatnonzero((ex["host"] == h).to_numpy() & (e < t))
        hon = hist[online[hist]]
        run = hist[(ex["job_id"].to_numpy()[hist] == ex["job_id"][j])]
        allh = np.flatnonzero(e < t)
        rd = ex["bytes_read"].to_numpy() / rt
        wr = ex["bytes_written"].to_numpy() / rt
        running = (ex["start"].to_numpy() <= t) & (t < e)
        running[j] = False
        idle = min(t - e[hist].max(), 86400.0) if len(hist) else 86400.0
        rows.append(
            {
                "c_exec_jobs": math.log1p(len(hist)),
                "c_exec_jobs_1h": float(np.sum(e[hist] >= t - 3600)),
                "c_exec_idle": math.log1p(idle),
                "c_exec_slowdown": ew(hist, t, slow),
                "c_exec_straggle": ew(hist, t, strag),
                "c_exec_cpu_eff": ew(hist, t, cpu),
                "c_exec_online_jobs": math.log1p(len(hon)),
                "c_exec_iowait": ew(hon, t, ex["iowait"].to_numpy() / rt),
                "c_exec_read_rate": ew(hon, t, np.log1p(rd)),
                "c_exec_write_rate": ew(hon, t, np.log1p(wr)),
                "c_exec_read_calls": ew(hon, t, np.log1p(ex["read_calls"].to_numpy() / rt)),
                "c_exec_write_calls": ew(hon, t, np.log1p(ex["write_calls"].to_numpy() / rt)),
                "c_run_exec_jobs": float(len(run)),
                "c_run_exec_slowdown": float(np.mean(slow[run])) if len(run) else 0.0,
                "c_cluster_slowdown": ew(allh, t, slow),
                "c_running_exec": float(np.sum(running & (ex["host"] == h).to_numpy())),
                "c_running_worker": float(np.sum(running & (worker == worker[j]))),
                "c_running_cluster": float(np.sum(running)),
                "c_running_local": float(
                    np.sum((aux["start"].to_numpy() <= t) & (t < aux["end"].to_numpy()))
                ),
            }
        )
    return pd.DataFrame(rows, index=ex["index"].to_numpy())


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("window", [1, 3, 50])
def test_counters_match_the_slow_oracle(seed, window):
    raw = _random_raw(np.random.default_rng(seed))
    got = causal_counters(raw, beta=1.3, halflife=30.0, ref_window=window)
    want = _oracle(raw, 1.3, 30.0, window)
    assert list(got.columns) == list(COUNTER_NAMES)
    pd.testing.assert_index_equal(got.index, want.index)
    np.testing.assert_allclose(
        got.to_numpy(), want[list(COUNTER_NAMES)].to_numpy(), rtol=1e-9, atol=1e-12
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), pick=st.integers(0, 10**6), shake=st.integers(0, 2**32 - 1))
def test_no_leakage_from_rows_ending_after_a_launch(seed, pick, shake):
    """Changing any row that ends after a job's launch (its counters, run time, end; its
    start too if it had not started) leaves that job's counters unchanged; so does changing
    the counters and run time of a row that ends exactly at the launch (history is strict)."""
    raw = _random_raw(np.random.default_rng(seed))
    before = causal_counters(raw)
    tied = [i for i in before.index if (raw["end"] == raw.at[i, "start"]).any()]
    pool = tied if tied and pick % 2 == 0 else list(before.index)
    j = pool[pick % len(pool)]
    t = raw.at[j, "start"]
    rng = np.random.default_rng(shake)
    changed = raw.copy()
    later = raw["end"] > t
    m = int(later.sum())
    new_end = t + rng.integers(1, 500, m)
    not_started = (changed.loc[later, "start"] > t).to_numpy()
    new_start = np.where(
        not_started, t + rng.uniform(0.5, 1.0, m) * (new_end - t), changed.loc[later, "start"]
    )
    changed.loc[later, "start"] = new_start
    changed.loc[later, "end"] = new_end.astype(float)
    at = (raw["end"] == t) & (raw.index != j)  # j's own launch stays put
    changed.loc[at, "start"] = rng.uniform(0.0, 1.0, int(at.sum())) * t
    touched = later | at
    k = int(touched.sum())
    for c in ("cpu_time", "iowait", "bytes_read", "bytes_written", "read_calls", "write_calls"):
        changed.loc[touched, c] = np.where(rng.random(k) < 0.2, np.nan, rng.uniform(0, 1e7, k))
    changed.loc[touched, "cpu_time"] = changed.loc[touched, "cpu_time"].fillna(1.0)
    after = causal_counters(changed)
    np.testing.assert_array_equal(after.loc[j].to_numpy(), before.loc[j].to_numpy())


def test_counters_see_what_finished_before_only():
    """A job's own run time never enters its counters; the next job on the node sees it
    only when it ended strictly before the launch."""
    one = _random_raw(np.random.default_rng(5), n=1).assign(
        pegasus_type="compute", site="condorpool", start=0.0, end=10.0
    )
    two = pd.concat([one, one.assign(start=11.0, end=20.0)], ignore_index=True)
    slow = two.assign(start=[0.0, 500.0], end=[499.0, 520.0])
    touching = two.assign(start=[0.0, 10.0])
    a, b, c = causal_counters(two), causal_counters(slow), causal_counters(touching)
    assert a.loc[0, "c_exec_jobs"] == 0.0 and a.loc[1, "c_exec_jobs"] == math.log1p(1)
    np.testing.assert_array_equal(a.loc[0].to_numpy(), b.loc[0].to_numpy())
    assert a.loc[1, "c_exec_idle"] == math.log1p(1.0) and b.loc[1, "c_exec_idle"] == math.log1p(1)
    assert c.loc[1, "c_exec_jobs"] == 0.0 and c.loc[1, "c_running_exec"] == 0.0


# ------------------------------------------------------------------------------ bad files
def _bad(tmp_path, text: str, name="wf-run0001.csv"):
    d = tmp_path / "normal"
    d.mkdir(exist_ok=True)
    f = d / name
    f.write_text(text)
    return f


def test_truncated_gzip_names_file_and_row(tmp_path):
    d = tmp_path / "normal"
    d.mkdir()
    f = d / "wf-run0001.csv.gz"
    body = _csv(_run_rows(0, "None") * 40).encode()
    packed = gzip.compress(body)
    f.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(FlowBenchFormatError, match="truncated") as info:
        read_run(f)
    e = info.value
    assert e.file == str(f) and e.row is not None and e.row > 0 and e.column is None
    assert str(f) in str(e) and f"row {e.row}" in str(e)


def test_missing_column_is_named(tmp_path):
    rows = _run_rows(0, "None")
    text = _csv(rows).replace(",execute_end,", ",execute_stop,", 1)
    with pytest.raises(FlowBenchFormatError, match="'execute_end'") as info:
        read_run(_bad(tmp_path, text))
    assert info.value.column == "execute_end" and "wf-run0001.csv" in str(info.value)


def test_non_numeric_timestamp_names_row_and_column(tmp_path):
    rows = _run_rows(0, "None")
    rows[3]["execute_start"] = "soon"
    with pytest.raises(FlowBenchFormatError, match="'soon'") as info:
        read_run(_bad(tmp_path, _csv(rows)))
    e = info.value
    assert (e.row, e.column) == (3, "execute_start")
    assert "row 3 (line 5)" in str(e) and "wf-run0001.csv" in str(e)


def test_end_before_start_names_row_and_column(tmp_path):
    rows = _run_rows(0, "None")
    rows[5]["execute_end"] = "1.0"
    f = _bad(tmp_path, _csv(rows))
    with pytest.raises(FlowBenchFormatError, match="before execute_start") as info:
        read_flowbench(tmp_path)
    e = info.value
    assert (e.file, e.row, e.column) == (str(f), 5, "execute_end")


def test_missing_required_value_names_row_and_column(tmp_path):
    rows = _run_rows(0, "None")
    rows[2]["kickstart_hostname"] = ""
    with pytest.raises(FlowBenchFormatError) as info:
        read_run(_bad(tmp_path, _csv(rows)))
    assert (info.value.row, info.value.column) == (2, "kickstart_hostname")


# ------------------------------------------------------------------------------ real data
def test_a_few_real_files(shared_data_dir):
    parsed = shared_data_dir / "flowbench" / "parsed"
    files = (
        sorted(parsed.glob("*/1000-genome-run*.csv*"))[:2]
        + sorted(parsed.glob("*/casa-wind-full-run*.csv*"))[:2]
    )
    if not files:
        pytest.skip("no FlowBench runs in the shared data")
    raw = pd.concat([read_run(f) for f in files], ignore_index=True)
    assert (raw["end"] >= raw["start"]).all()
    trace = validate_trace(build_trace(raw))
    assert set(trace["job_id"]) == {f"{f.parent.name}/{f.name.split('.')[0]}" for f in files}
    assert trace["node"].str.contains("-container-").all()
    labelled = label_stragglers(trace)
    assert 0.0 < labelled.frame["straggler"].mean() < 0.5


# ------------------------------------------------------------------------------ the CLI
def test_collect_cli_writes_the_same_trace(tiny, tmp_path, capsys):
    """``straggler collect --source flowbench`` writes what collect_flowbench writes, honours
    --anomalies, and a bad folder name is a usage error naming it."""
    from pipelines.cli import main

    out = tmp_path / "cli"
    assert (
        main(["collect", "--source", "flowbench", "--data-dir", str(tiny), "--out", str(out)]) == 0
    )
    assert "executor jobs from 2 runs" in capsys.readouterr().out
    collect_flowbench(tiny, tmp_path / "lib")
    pd.testing.assert_frame_equal(load_trace(out), load_trace(tmp_path / "lib"))
    one = tmp_path / "one"
    args = ["collect", "--source", "flowbench", "--data-dir", str(tiny), "--out", str(one)]
    assert main([*args, "--anomalies", "cpu_2"]) == 0
    assert set(load_trace(one)["anomaly_folder"]) == {"cpu_2"}
    assert main([*args, "--anomalies", "cpu_9", "--overwrite"]) == 2
    assert "cpu_9" in capsys.readouterr().err


def test_the_trace_files_are_written_under_fresh_temporary_names(tiny, tmp_path):
    # tasks.parquet / jobs.parquet went through the fixed names .tasks.parquet.tmp and
    # .jobs.parquet.tmp, which two writers (or a leftover) shared; now each write has its own
    out = tmp_path / "fb"
    out.mkdir()
    others = [out / f".{name}.parquet.tmp" for name in ("tasks", "jobs")]
    for p in others:
        p.write_text("another writer's file\n")
    collect_flowbench(tiny, out)
    assert [p.read_text() for p in others] == ["another writer's file\n"] * 2
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == sorted(
        p.name for p in others
    )
    assert len(load_trace(out)) > 0
