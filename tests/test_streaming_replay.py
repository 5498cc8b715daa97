"""A streaming replay (``simulate(..., trace_sink=path)``): the same tables as the in-memory
run, exact accumulators, early stops that leave a readable file, and an engine that forgets
finished jobs."""

from __future__ import annotations

import gc
import json
import math
import os
import signal

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
from pipelines.cli import main
from sim_bridge import JobSpec, SummaryAccumulator, Workload, summarize
from sim_bridge._engine import Job, Simulator
from sim_bridge._trace_sink import trace_status
from sim_bridge.policies import get_policy
from sim_bridge.policies._speculation import LATE

KEY = ["job_id", "task_id", "attempt"]
TIMING = {"wall_seconds", "engine_seconds", "engine_cpu_seconds"}
STREAM_ONLY = {"stop_reason", "jobs_submitted", "jobs_arrived", "trace_path", "trace_row_groups"}


def _workload(n_jobs: int = 40, seed: int = 0) -> Workload:
    rng = np.random.default_rng(seed)
    jobs = []
    t = 0.0
    for i in range(n_jobs):
        t += float(rng.exponential(8.0))
        maps = rng.lognormal(2.5, 0.6, int(rng.integers(1, 14)))
        reds = rng.lognormal(2.0, 0.5, int(rng.integers(0, 4)))
        jobs.append(JobSpec(f"j{i}", t, maps, reds, workload="FB2009"))
    return Workload("FB2009", jobs)


def _sorted(tasks: pd.DataFrame) -> pd.DataFrame:
    return tasks.sort_values(KEY).reset_index(drop=True)


@pytest.mark.parametrize(
    "policy, kw",
    [
        ("late", {}),
        ("none", {"record_truth": True}),
        ("mantri", {"interference": 0.0}),
        ("late", {"record_counters": False}),
        # (above: the paths held from the oldest live job's submission, the rule for
        # clusters under a positive LAUNCH_LEVELS_MIN_BYTES; below: launch levels and the
        # live attempts' hold, the default)
        ("late", {"levels": True}),
        ("none", {"record_truth": True, "levels": True}),
        # and paths drawn two steps at a time (a big cluster's parts of a day-block)
        ("late", {"levels": True, "parts": True}),
        ("mantri", {"record_truth": True, "levels": True, "parts": True}),
    ],
)
def test_streaming_run_equals_the_in_memory_run(tmp_path, monkeypatch, policy, kw):
    kw = dict(kw)
    levels = kw.pop("levels", False)
    monkeypatch.setattr(sim_bridge._simulate, "LAUNCH_LEVELS_MIN_BYTES", 0 if levels else 1 << 60)
    if kw.pop("parts", False):
        monkeypatch.setattr(sim_bridge._simulate, "PATH_PART_BYTES", 32 * 6 * 2)
        assert sim_bridge._simulate.path_part_steps(6) == 2
    w = _workload()
    common = dict(nodes=6, slots=2, seed=5, progress=False, engine="python", **kw)
    mem = sim_bridge.simulate(w, policy, **common)
    path = tmp_path / "tasks.parquet"
    st_ = sim_bridge.simulate(w, policy, trace_sink=path, row_group_rows=50, **common)
    assert st_.tasks is None and st_.summary["complete"] is True
    assert trace_status(path) == (True, None)
    streamed = pd.read_parquet(path)
    pd.testing.assert_frame_equal(_sorted(streamed), _sorted(mem.tasks), check_exact=True)
    pd.testing.assert_frame_equal(st_.jobs, mem.jobs, check_exact=True)
    a, b = mem.summary, st_.summary
    assert set(b) - set(a) == STREAM_ONLY
    for k in set(a) - TIMING:
        if k == "task_seconds":  # chunked sums: the same up to rounding (documented)
            assert math.isclose(a[k], b[k], rel_tol=1e-12)
        elif isinstance(a[k], float) and math.isnan(a[k]):
            assert math.isnan(b[k])
        else:
            assert a[k] == b[k], k
    # row groups: several, each holding whole jobs
    meta = pq.ParquetFile(path)
    assert meta.num_row_groups == b["trace_row_groups"] > 1
    seen: set[str] = set()
    for g in range(meta.num_row_groups):
        ids = set(meta.read_row_group(g, columns=["job_id"]).column(0).to_pylist())
        assert not ids & seen
        seen |= ids


def test_compiled_loop_writes_its_trace_after_the_run(tmp_path):
    w = _workload(10)
    kw = dict(nodes=4, seed=1, interference=0.0, progress=False)
    mem = sim_bridge.simulate(w, "none", "fifo", **kw)
    assert mem.summary["engine"] == "compiled"
    path = tmp_path / "t.parquet"
    r = sim_bridge.simulate(w, "none", "fifo", trace_sink=path, row_group_rows=20, **kw)
    assert r.summary["engine"] == "compiled" and r.summary["complete"] and r.tasks is None
    pd.testing.assert_frame_equal(pd.read_parquet(path), mem.tasks, check_exact=True)
    assert pq.ParquetFile(path).num_row_groups == r.summary["trace_row_groups"] > 1
    assert trace_status(path) == (True, None)
    # a limit that may stop the run early: the Python loop, which can stop cleanly
    r = sim_bridge.simulate(w, "none", "fifo", trace_sink=path, max_events=10**9, **kw)
    assert r.summary["engine"] == "python" and r.summary["complete"]
    with pytest.raises(ValueError, match="stop early"):
        sim_bridge.simulate(
            w, "none", "fifo", trace_sink=path, max_events=9, engine="compiled", **kw
        )


def _whole_jobs_of(full: pd.DataFrame, part: pd.DataFrame) -> None:
    """``part`` holds whole jobs of the complete trace ``full``, row for row."""
    ids = set(part["job_id"])
    expect = _sorted(full[full["job_id"].isin(ids)])
    pd.testing.assert_frame_equal(_sorted(part), expect, check_exact=True)


def test_max_events_leaves_a_readable_incomplete_trace(tmp_path):
    w = _workload()
    common = dict(nodes=6, slots=2, seed=2, progress=False, engine="python")
    full = sim_bridge.simulate(w, "late", **common)
    limit = full.summary["events"] // 2
    with pytest.raises(RuntimeError, match=f"max_events={limit}"):
        sim_bridge.simulate(w, "late", max_events=limit, **common)
    path = tmp_path / "tasks.parquet"
    r = sim_bridge.simulate(w, "late", trace_sink=path, max_events=limit, **common)
    s = r.summary
    assert s["complete"] is False and s["stop_reason"] == f"max_events={limit}"
    assert 0 < s["jobs"] < s["jobs_submitted"] == len(w.jobs)
    part = pd.read_parquet(path)
    assert len(part) == s["attempts"] and set(part["job_id"]) == set(r.jobs["job_id"])
    _whole_jobs_of(full.tasks, part)
    done = full.jobs.set_index("job_id").loc[r.jobs["job_id"]].reset_index()
    pd.testing.assert_frame_equal(r.jobs.reset_index(drop=True), done, check_exact=True)
    assert not list(tmp_path.glob(".*.part"))
    assert trace_status(path) == (False, f"max_events={limit}")


class _Interrupting(LATE):
    """LATE that raises or signals at its third scan (a test hook inside the loop)."""

    name = "late-interrupting"

    def __init__(self, how: str = "raise"):
        super().__init__()
        self.how = how

    def reset(self):
        super().reset()
        self._scans = 0

    def get_params(self):
        return {"how": self.how}

    def on_tick(self, view):
        self._scans += 1
        if self._scans == 3:
            if self.how == "raise":
                raise KeyboardInterrupt
            os.kill(os.getpid(), getattr(signal, self.how))
        return super().on_tick(view)


@pytest.mark.parametrize(
    "how, reason", [("raise", "KeyboardInterrupt"), ("SIGTERM", "SIGTERM"), ("SIGINT", "SIGINT")]
)
def test_interrupt_and_signals_leave_a_readable_incomplete_trace(tmp_path, how, reason):
    w = _workload(60)
    path = tmp_path / "tasks.parquet"
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    r = sim_bridge.simulate(w, _Interrupting(how), nodes=3, seed=1, progress=False, trace_sink=path)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    s = r.summary
    assert s["complete"] is False and s["stop_reason"] == reason
    assert s["jobs"] < len(w.jobs)
    part = pq.read_table(path).to_pandas()
    assert len(part) == s["attempts"]
    assert set(part["job_id"]) == set(r.jobs["job_id"])


def test_without_a_sink_an_interrupt_propagates():
    with pytest.raises(KeyboardInterrupt):
        sim_bridge.simulate(_workload(60), _Interrupting("raise"), nodes=3, progress=False)


def test_engine_forgets_finished_jobs():
    w = _workload(50)
    cluster = sim_bridge.Cluster(4, 2, 0)
    seen = {"max_active": 0, "done": 0}

    def on_done(job):
        assert job.done and job.uid not in sim._active and job.uid not in sim._waiting
        assert all(not t.live for t in job.tasks)
        seen["done"] += 1
        seen["max_active"] = max(seen["max_active"], len(sim._active))

    late = get_policy("late")
    late.reset()
    fair = get_policy("fair")
    fair.reset()
    sim = Simulator(cluster, [w], late, fair, keep_history=False, on_job_done=on_done)
    sim.run()
    assert seen["done"] == sim.n_arrived == len(w.jobs)
    assert not sim.jobs and not sim.attempts and not sim._active and not sim._heap
    assert len(sim._rstates) == 0 and len(sim._dstates) == 0
    assert seen["max_active"] < len(w.jobs)
    del on_done
    gc.collect()
    assert not [o for o in gc.get_objects() if type(o) is Job]


def test_keep_history_false_needs_a_callback():
    with pytest.raises(ValueError, match="on_job_done"):
        Simulator(
            sim_bridge.Cluster(2, 1, 0),
            [_workload(2)],
            get_policy("none"),
            get_policy("fair"),
            keep_history=False,
        )


# ---------------------------------------------------------------------- accumulators
@st.composite
def _traces(draw):
    n_jobs = draw(st.integers(1, 8))
    rows = []
    for j in range(n_jobs):
        for phase in draw(st.sampled_from([["map"], ["map", "reduce"], ["task"]])):
            for t in range(draw(st.integers(1, 6))):
                for a in range(draw(st.integers(1, 2))):
                    dur = draw(st.floats(0.001, 1e4, allow_nan=False))
                    out = draw(st.sampled_from(["finished", "killed"]))
                    rows.append((f"j{j}", f"j{j}-{phase[0]}{t}", a, phase, dur, out))
    tasks = pd.DataFrame(
        rows, columns=["job_id", "task_id", "attempt", "phase", "duration", "outcome"]
    )
    cuts = sorted(draw(st.sets(st.integers(1, max(n_jobs - 1, 1)), max_size=n_jobs)))
    return tasks, n_jobs, cuts


@settings(max_examples=30, deadline=None)
@given(_traces(), st.floats(1.05, 3.0))
def test_chunked_accumulator_equals_summarize(trace, beta):
    tasks, n_jobs, cuts = trace
    jct = np.linspace(1.0, 50.0, n_jobs) ** 1.5
    jobs = pd.DataFrame(
        {
            "submit_time": np.zeros(n_jobs),
            "finish_time": jct,
            "jct": jct,
            "met_deadline": jct < 20,
        }
    )
    whole = summarize(jobs, tasks, beta=beta)
    acc = SummaryAccumulator(beta)
    number = tasks["job_id"].str[1:].astype(int)
    bounds = [0, *[c for c in cuts if c < n_jobs], n_jobs]
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        acc.add(tasks[(number >= lo) & (number < hi)])
    chunked = acc.summary(jobs)
    assert set(chunked) == set(whole)
    for k, v in whole.items():
        if k == "task_seconds":
            assert chunked[k] == math.fsum(
                tasks[(number >= lo) & (number < hi)]["duration"].sum()
                for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
            )
            assert math.isclose(chunked[k], math.fsum(tasks["duration"]), rel_tol=1e-13)
        elif isinstance(v, float) and math.isnan(v):
            assert math.isnan(chunked[k])
        else:
            assert chunked[k] == v, k
    # the percentiles are NumPy's on the exact per-job values
    assert chunked["p90_jct"] == float(np.percentile(jct, 90))


def test_accumulator_rejects_a_bad_beta():
    with pytest.raises(ValueError, match="beta"):
        SummaryAccumulator(0.0)


# ---------------------------------------------------------------------- the command
def test_cli_stops_early_into_an_incomplete_set(tmp_path, shared_data_dir, capsys):
    from pipelines._dataset import load_trace
    from pipelines._io import INCOMPLETE_MARKER, OutputError

    out = tmp_path / "run"
    args = ["simulate", "--workload", "FB2009", "--hours", "0.25", "--nodes", "8"]
    args += ["--data-dir", str(shared_data_dir), "--no-progress", "--stream", "--out", str(out)]
    assert main([*args, "--max-events", "20"]) == 3
    s = json.loads((out / "summary.json").read_text())
    assert s["complete"] is False and s["status"] == "incomplete"
    assert s["stop_reason"] == "max_events=20"
    assert len(pd.read_parquet(out / "tasks.parquet")) == s["attempts"]
    assert (out / INCOMPLETE_MARKER).exists()
    with pytest.raises(OutputError, match="incomplete"):
        load_trace(out)
    assert "complete: false" in capsys.readouterr().out
    # a rerun into the directory completes it
    assert main(args) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["complete"] is True and "status" not in s and s["peak_rss_mb"] > 0
    assert len(load_trace(out)) == s["attempts"]
    # a streamed run says which allocator settings it took (sim_bridge.lean_allocators)
    assert set(s["lean_allocators"]) == {"malloc_mmap_threshold", "arrow_system_pool"}


def test_streaming_paths_grow_with_the_clock_not_with_far_end_times():
    """An attempt that cannot end within the contention paths goes on with its solve where
    they end: the paths cover the clock, and its end is the one-shot solve's, bit for bit."""
    day = 86400.0
    jobs = [JobSpec("big", 0.0, [2.5 * day], workload="FB2009")]
    jobs += [JobSpec(f"s{i}", 60.0 * i, [30.0, 40.0], workload="FB2009") for i in range(1, 6)]
    w = Workload("FB2009", jobs)
    ends: dict[str, dict] = {}

    def run(keep: bool) -> Simulator:
        seen = ends.setdefault("mem" if keep else "stream", {})
        cl = sim_bridge.Cluster(3, 2, 0)

        def on_done(job):
            seen[job.job_id] = (job.finish_time, cl.horizon_steps * cl.dt)

        pol, place = get_policy("none"), get_policy("fair")
        pol.reset()
        place.reset()
        sim = Simulator(cl, [w], pol, place, seed=1, keep_history=keep, on_job_done=on_done)
        sim.run()
        return sim

    mem, stream = run(True), run(False)
    assert mem.events == stream.events
    for job_id, (finish, _horizon) in ends["mem"].items():
        assert ends["stream"][job_id][0] == finish, job_id
    # the small jobs end in the first hour: in memory the paths already reach past the big
    # task's end, streamed they cover one block (a day) only
    assert ends["mem"]["s1"][1] > 2.5 * day
    assert ends["stream"]["s1"][1] <= day
    assert ends["stream"]["big"][0] > 2.5 * day


def test_readers_refuse_a_trace_that_stopped_early(tmp_path):
    """An early-stopped streamed trace is refused by the trace reader, from its footer alone
    and from a summary.json that says complete: false."""
    import json

    from pipelines._dataset import load_trace
    from pipelines._io import OutputError

    specs = [sim_bridge.JobSpec(f"j{i}", float(i), [1.0, 1.0, 1.0]) for i in range(20)]
    d = tmp_path / "run"
    d.mkdir()
    sim_bridge.simulate(
        specs, nodes=2, ideal=True, trace_sink=d / "tasks.parquet", max_events=10, progress=False
    )
    with pytest.raises(OutputError, match="stopped early"):
        load_trace(d)
    full = tmp_path / "full"
    full.mkdir()
    sim_bridge.simulate(
        specs, nodes=2, ideal=True, trace_sink=full / "tasks.parquet", progress=False
    )
    assert sim_bridge.trace_status(full / "tasks.parquet")[0] is True
    (full / "summary.json").write_text(json.dumps({"complete": False, "stop_reason": "SIGTERM"}))
    with pytest.raises(OutputError, match="SIGTERM"):
        load_trace(full)


def test_streamed_trace_follows_the_trace_contract(tmp_path):
    # the sink builds its rows through sim_bridge.trace: its columns, dtypes and node names
    from sim_bridge import trace
    from sim_bridge._cluster import COUNTER_NAMES

    path = tmp_path / "tasks.parquet"
    r = sim_bridge.simulate(
        _workload(12),
        "late",
        nodes=5,
        seed=3,
        progress=False,
        engine="python",
        record_truth=True,
        trace_sink=path,
        row_group_rows=20,
    )
    t = pd.read_parquet(path)
    truth = [c for c in t.columns if c.startswith("truth_")]
    assert len(truth) == 4
    assert list(t.columns) == [
        *trace.TASK_COLUMNS,
        *truth,
        *map(trace.counter_column, COUNTER_NAMES),
    ]
    assert t["attempt"].dtype == np.int64 and t[truth + ["duration"]].dtypes.eq(float).all()
    assert set(t["node"]) <= set(trace.node_names(5).tolist())
    prefix = t["job_id"] + "-" + t["phase"].str[0]
    assert all(tid.startswith(p) for tid, p in zip(t["task_id"], prefix, strict=True))
    assert list(r.jobs.columns) == list(trace.JOB_COLUMNS)
    for name, dtype in trace.JOB_COLUMNS.items():
        if dtype != "str":
            assert str(r.jobs[name].dtype) == dtype, name


def _clusters_made(monkeypatch) -> list[sim_bridge.Cluster]:
    """The clusters ``simulate`` makes from now on, in order."""
    made: list[sim_bridge.Cluster] = []

    class Spy(sim_bridge.Cluster):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(sim_bridge._simulate, "Cluster", Spy)
    return made


def test_a_job_alive_for_days_holds_only_its_attempts_last_segments(tmp_path, monkeypatch):
    """A streamed run drops the path steps its live attempts no longer read, even while the
    job that launched them lives on: the counters at each launch come from the levels
    recorded then, and a killed attempt's progress is booked when it closes. So a job alive
    for days holds its attempts' last segments, not the days since its submission; the
    tables are the in-memory run's, bit for bit. By default, on any cluster (here 3 nodes:
    ``LAUNCH_LEVELS_MIN_BYTES`` is 0); under the old rule, which held a small cluster's
    paths from the oldest live job's submission, the window would span the days."""
    day = 86400.0
    jobs = [JobSpec("long", 0.0, [1.5 * day, 50.0], [20.0], workload="FB2009")]
    jobs += [
        JobSpec(f"s{i}", 1800.0 * i, [30.0, 40.0, 35.0], [20.0], workload="FB2009")
        for i in range(1, 260)
    ]
    w = Workload("FB2009", jobs)
    made = _clusters_made(monkeypatch)
    kw = dict(nodes=3, slots=2, seed=1, progress=False, engine="python")
    mem = sim_bridge.simulate(w, "late", **kw)
    path = tmp_path / "t.parquet"
    stream = sim_bridge.simulate(w, "late", trace_sink=path, **kw)
    monkeypatch.setattr(sim_bridge._simulate, "LAUNCH_LEVELS_MIN_BYTES", 1 << 60)  # old rule
    old = sim_bridge.simulate(w, "late", trace_sink=tmp_path / "old.parquet", **kw)
    assert old.summary["events"] == mem.summary["events"]
    assert made[2].max_window_steps * made[2].dt > 3 * day  # held from the submission
    long_end = float(mem.jobs.set_index("job_id").loc["long", "finish_time"])
    assert long_end > 3 * day  # the job lives on for more than three days
    cluster = made[1]
    # held from its submission, the paths would have kept > 3 days of steps
    assert cluster.max_window_steps * cluster.dt < 2.5 * day
    assert cluster.base_step * cluster.dt > 2 * day
    got = _sorted(pd.read_parquet(path))
    pd.testing.assert_frame_equal(got, _sorted(mem.tasks), check_dtype=False)
    assert stream.summary["events"] == mem.summary["events"]


def test_a_killed_attempts_progress_reads_the_same_streamed_and_in_memory(tmp_path, monkeypatch):
    """A streamed run books a killed attempt's work done when it closes (its paths may go):
    a policy reading the progress of killed attempts later gets the in-memory run's values,
    bit for bit."""

    class Watch(LATE):
        name = "watch-killed"

        def reset(self) -> None:
            super().reset()
            self.seen: list[tuple[int, float, float]] = []

        def on_tick(self, view):
            for job in view.active_jobs():
                for task in job.tasks:
                    for a in task.attempts:
                        if a.state == 2:  # killed
                            self.seen.append((a.uid, view.now, view.progress(a)))
            return super().on_tick(view)

    runs = {}
    monkeypatch.setattr(sim_bridge._simulate, "LAUNCH_LEVELS_MIN_BYTES", 0)  # 4 nodes
    for stream in (False, True):
        pol = Watch()
        sink = {"trace_sink": tmp_path / "t.parquet"} if stream else {}
        sim_bridge.simulate(
            _workload(30, seed=2), pol, nodes=4, slots=2, seed=5, progress=False,
            engine="python", **sink,
        )  # fmt: skip
        runs[stream] = pol.seen
    assert len(runs[False]) > 20
    assert runs[True] == runs[False]


def _drain_workload() -> Workload:
    """A job of one week-long task, and six small ones in its first hour: the run's last
    days are one attempt's solve going on block by block, with no event of the model."""
    day = 86400.0
    jobs = [JobSpec("long", 0.0, [7 * day], [], workload="FB2009")]
    jobs += [JobSpec(f"s{i}", 600.0 * i, [30.0, 40.0], [20.0], workload="FB2009") for i in range(6)]
    return Workload("FB2009", jobs)


def test_a_stop_asked_in_a_drain_stops_at_the_next_check(tmp_path, monkeypatch):
    """A stop request (SIGTERM, Ctrl-C) between the few events of a drain stops the run at
    the next check of the solve going on, not after 1,024 more events (there were none
    left: the run went on to its end and called itself complete)."""
    calls = []
    go_on = sim_bridge._engine.Simulator._go_on

    def asking(self, att, stop, seq):
        calls.append(self.now)
        self.request_stop("test: asked in the drain")
        return go_on(self, att, stop, seq)

    monkeypatch.setattr(sim_bridge._engine.Simulator, "_go_on", asking)
    path = tmp_path / "t.parquet"
    r = sim_bridge.simulate(
        _drain_workload(), "none", nodes=2, slots=2, seed=3, progress=False, trace_sink=path
    )
    assert r.summary["complete"] is False
    assert r.summary["stop_reason"] == "test: asked in the drain"
    assert len(calls) == 1  # the check after the request did not go on
    assert trace_status(path) == (False, "test: asked in the drain")
    assert "long" not in set(pd.read_parquet(path)["job_id"])


def test_a_drains_last_attempt_solved_for_days_holds_no_days_of_paths(tmp_path, monkeypatch):
    """A streamed run's last attempt, its end solved block by block with no event of the
    model between (its solve's checks), lets the blocks behind the checks go: the window
    stays about a day while the clock crosses a week, and the tables are the in-memory
    run's, bit for bit."""
    day = 86400.0
    made = _clusters_made(monkeypatch)
    kw = dict(nodes=2, slots=2, seed=3, progress=False, engine="python")
    w = _drain_workload()
    mem = sim_bridge.simulate(w, "none", **kw)
    path = tmp_path / "t.parquet"
    stream = sim_bridge.simulate(w, "none", trace_sink=path, **kw)
    end = float(mem.jobs.set_index("job_id").loc["long", "finish_time"])
    assert end > 6 * day
    cluster = made[1]
    assert cluster.base_step * cluster.dt > 5 * day  # the window followed the checks
    assert cluster.max_window_steps * cluster.dt < 2.5 * day
    got = _sorted(pd.read_parquet(path))
    pd.testing.assert_frame_equal(got, _sorted(mem.tasks), check_dtype=False)
    pd.testing.assert_frame_equal(stream.jobs, mem.jobs, check_exact=True)
