"""``bench/bench_day.py --census N``: the replay stops at the first upkeep with N attempts
running and logs what they hold (``bench/_attempt_census.py``).

Oracles: the census counts every running attempt once (its bytes at least the attempts'
own objects, by ``sys.getsizeof``), the log is complete and says why it stopped, and a
census of a hand-built simulator state equals a slow count of the same objects.
"""

from __future__ import annotations

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
    for name in ("bench_day", "_attempt_census"):
        sys.modules.pop(name, None)


def test_census_stops_the_replay_and_logs_the_running_attempts(
    tmp_path, shared_data_dir, bench_modules, capsys
):
    day, _ = bench_modules
    from sim_bridge import _engine

    before = dict(vars(_engine.Simulator))
    argv = ["--workload", "FB2009", "--policy", "late", "--hours", "6", "--census", "100"]
    argv += ["--data-dir", str(shared_data_dir), "--out", str(tmp_path), "--every", "0.5"]
    assert day.main(argv) == 0
    assert dict(vars(_engine.Simulator)) == before  # the class as it was
    lines = [json.loads(x) for x in (tmp_path / "FB2009_late.jsonl").read_text().splitlines()]
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


def test_census_equals_a_slow_count(bench_modules):
    _, census_mod = bench_modules
    from sim_bridge._jobs import Attempt, Job, Task

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
    # uids past 256 are int objects of their own; floats too (0.0 and 1.5 and 3.0 each once)
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
