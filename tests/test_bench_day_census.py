"""``bench/bench_day.py --census N`` and ``--job-census H``: the replay stops at the first
upkeep with N attempts running, or past simulated hour H, and logs what the running attempts
(``bench/_attempt_census.py``) or the live jobs (``bench/_job_census.py``) hold.

Oracles: the census counts every running attempt once (its bytes at least the attempts'
own objects, by ``sys.getsizeof``), the log is complete and says why it stopped, and a
census of a hand-built simulator state equals a slow count of the same objects.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture()
def bench_modules(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    day = importlib.import_module("bench_day")
    census = importlib.import_module("_attempt_census")
    yield day, census
    for name in ("bench_day", "_attempt_census", "_job_census"):
        sys.modules.pop(name, None)


def _replay_log(day, tmp_path, data_dir, *census: str) -> list[dict]:
    """The FB-2009 LATE replay with a census flag: its log's lines, once ``main`` returned
    0 and left the simulator class as it was."""
    from sim_bridge import _engine

    before = dict(vars(_engine.Simulator))
    argv = ["--workload", "FB2009", "--policy", "late", "--hours", "6", *census]
    argv += ["--data-dir", str(data_dir), "--out", str(tmp_path), "--every", "0.5"]
    assert day.main(argv) == 0
    assert dict(vars(_engine.Simulator)) == before  # the class as it was
    return [json.loads(x) for x in (tmp_path / "FB2009_late.jsonl").read_text().splitlines()]


def test_census_stops_the_replay_and_logs_the_running_attempts(
    tmp_path, shared_data_dir, bench_modules, capsys
):
    day, _ = bench_modules
    lines = _replay_log(day, tmp_path, shared_data_dir, "--census", "100")
    census = [x for x in lines if x["kind"] == "census"]
    end = lines[-1]
    assert len(census) == 1 and end["kind"] == "end"
    c = census[0]
    assert c["running"] >= 100 and "--census" in end["stopped"]
    rows = {what: (size, n) for what, size, n in c["rows"]}
    assert rows["Attempt"][1] == c["running"]  # each running attempt once
    assert rows["Task (running)"][1] == c["tasks"] <= c["running"]
    from sim_bridge._jobs import Attempt

    assert rows["Attempt"][0] >= c["running"] * Attempt.__basicsize__
    assert "running attempts of" in capsys.readouterr().out


@pytest.mark.parametrize("compiled", [False, True])
def test_census_equals_a_slow_count(bench_modules, compiled):
    _, census_mod = bench_modules
    from sim_bridge._jobs import Attempt, Job, PyAttempt, Task

    if not compiled:
        Attempt = PyAttempt  # noqa: N806 - the reference, whose numbers are objects
    elif Attempt is PyAttempt:
        pytest.skip("sim_bridge._attempt_core is not built")

    job = Job()
    job.job_id, job.uid, job.finish_time = "j", 0, None
    tasks = [Task(1000 + k, job, k, 0, "map", 10.0 + k, 0.0) for k in range(3)]
    atts = [
        Attempt(5000 + k, t, 0, node=k, launch_time=1.5 * k, start_fraction=0.0)
        for k, t in enumerate(tasks)
    ]
    for t, a in zip(tasks, atts, strict=True):
        t.attempts, t.n_live = [a], 1
    job.running = {a.uid: a for a in atts}
    job._recs = None
    sim = type("Sim", (), {"_active": {0: job}})()
    got = census_mod.attempt_census(sim)
    assert got["running"] == 3 and got["tasks"] == 3
    rows = {what: (size, n) for what, size, n in got["rows"]}

    def tracked(o):
        return sys.getsizeof(o) + 16

    assert rows["Attempt"] == (3 * tracked(atts[0]), 3)
    assert rows["Task (running)"] == (3 * tracked(tasks[0]), 3)
    assert rows["task.attempts"] == (sum(tracked(t.attempts) for t in tasks), 3)
    assert rows["job.running"] == (tracked(job.running), 1)
    # the reference's uids past 256 are int objects of their own; a compiled attempt's are
    # C fields, and it holds no number object at all
    if compiled:
        assert not any(k.startswith("attempt.") for k in rows)
    else:
        assert rows["attempt.uid (int)"] == (3 * sys.getsizeof(5000), 3)
    assert rows["task.uid (int)"] == (3 * sys.getsizeof(1000), 3)
    assert rows["task.work (float)"] == (3 * sys.getsizeof(1.0), 3)
    table = census_mod.format_census(got)
    assert "3 running attempts of 3 tasks" in table and "total" in table


def test_a_log_without_samples_plots_and_reports(tmp_path, bench_modules, capsys):
    """A replay stopped before its first sample (a census, a Ctrl-C) still has a figure."""
    day, _ = bench_modules
    run = {"kind": "run", "workload": "FB2009", "policy": "late", "nodes": 600, "slots": 2}
    run |= {"hours": 6.0, "commit": "x"}
    end = {"kind": "end", "stopped": "census", "sim_h": 0.5, "cpu_s": 1.0, "setup_cpu_s": 0.1}
    end |= {"wall_s": 1.0, "events": 10, "peak_rss_mb": 150.0}
    log = tmp_path / "FB2009_late.jsonl"
    log.write_text(json.dumps(run) + "\n" + json.dumps(end) + "\n")
    png = tmp_path / "out.png"
    assert day.main(["--plot", str(log), "--png", str(png)]) == 0
    assert png.stat().st_size > 0
    assert "stopped (census)" in capsys.readouterr().out


def test_job_census_stops_the_replay_past_its_hour_and_logs_the_live_jobs(
    tmp_path, shared_data_dir, bench_modules, capsys
):
    day, _ = bench_modules
    lines = _replay_log(day, tmp_path, shared_data_dir, "--job-census", "0.5")
    census = [x for x in lines if x["kind"] == "job_census"]
    end = lines[-1]
    assert len(census) == 1 and end["kind"] == "end" and "--job-census" in end["stopped"]
    c = census[0]
    assert c["sim_h"] >= 0.5 and c["jobs"] >= 1 and c["tasks"] >= c["jobs"]
    rows = {what: (size, n) for what, size, n in c["rows"]}
    assert rows["Job"][1] == c["jobs"]  # each live job once
    assert any(k.startswith("policy._durs.") for k in rows)  # LATE's run times, per field
    assert "live jobs of" in capsys.readouterr().out


def test_job_census_equals_a_slow_count(bench_modules):
    """Each object once, under the first field that reaches it; a policy's run times per
    field; arrays by their buffers; the walk stops at the simulator's own objects."""
    import numpy as np

    job_census_mod = importlib.import_module("_job_census")
    from sim_bridge._jobs import Attempt, Job, PyAttempt, Task
    from sim_bridge.policies._speculation import _Durations

    job = Job()
    job.job_id, job.uid, job.n_tasks, job.finish_time = "j", 7, 2, None
    tasks = [Task(1000 + k, job, k, 0, "map", 10.0 + k, 0.0) for k in range(2)]
    att = Attempt(5000, tasks[0], 0, node=3, launch_time=1.5, start_fraction=0.0)
    tasks[0].attempts, tasks[0].n_live = [att], 1
    tasks[1].attempts = []
    job.tasks, job.running = tasks, {att.uid: att}
    job._one = np.zeros(8)
    durs = _Durations()
    for v in (1.0, 2.0, 3.0):
        durs.add(v)
    durs.sorted()

    class Policy:
        pass

    policy = Policy()
    policy._durs = {(7, 0): durs, (99, 0): _Durations()}  # job 99 is not live
    att._ckpt = policy  # the walk stops at the simulator's own objects
    sim = type("Sim", (), {"_active": {7: job}, "speculation": policy})()
    got = job_census_mod.job_census(sim)
    rows = {what: (size, n) for what, size, n in got["rows"]}
    assert got["jobs"] == 1 and got["tasks"] == 2

    def size(o):  # the documented rule: getsizeof, and the collector's header if tracked
        return sys.getsizeof(o) + (16 if gc.is_tracked(o) else 0)

    assert rows["Job"] == (size(job), 1)
    # job.tasks reaches the list, both tasks, their attempts lists and the attempt first
    assert rows["job.tasks"][1] >= 1 + 2 + 2 + 1
    # the dict, its attempt seen; its key, the uid, is the reference attempt's own int object
    # (seen), where a compiled attempt holds a C number and the key is an object of its own
    assert rows["job.running"][1] == (1 if Attempt is PyAttempt else 2)
    assert rows["job._one"] == (size(job._one), 1)
    assert rows["job._one"][0] >= 64  # the buffer's 8 doubles, owned
    assert rows["policy._durs._sorted"] == (size(durs._sorted), 1)
    assert rows["policy._durs._new"] == (size(durs._new), 1)
    assert not any("Policy" in k for k in rows)
    table = job_census_mod.format_job_census(got)
    assert "1 live jobs of 2 tasks" in table and "total" in table


@pytest.mark.parametrize("bad", ["-1", "nan"])
def test_job_census_refuses_a_bad_hour(bad, bench_modules, capsys):
    day, _ = bench_modules
    with pytest.raises(SystemExit):
        day.main(["--job-census", bad, "--out", "unused"])
    assert f"--job-census must be an hour >= 0, got {float(bad)!r}" in capsys.readouterr().err
