"""``straggler simulate`` and ``straggler policies``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pipelines.cli import main
from sim_bridge._compiled import compiled_available
from sim_bridge.policies import registry

KEYS = {
    "jobs",
    "tasks",
    "attempts",
    "mean_jct",
    "p50_jct",
    "p90_jct",
    "p99_jct",
    "task_seconds",
    "makespan",
    "pocd",
    "events",
    "wall_seconds",
}


def test_simulate_writes_the_three_files(tmp_path, shared_data_dir, capsys):
    out = tmp_path / "run"
    rc = main(
        [
            "simulate",
            "--workload",
            "FB2009",
            "--policy",
            "spark",
            "--param",
            "multiplier=2.0",
            "--nodes",
            "30",
            "--hours",
            "0.5",
            "--seed",
            "4",
            "--data-dir",
            str(shared_data_dir),
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    assert KEYS <= set(s)
    assert s["policy"] == "spark" and s["policy_params"]["multiplier"] == 2.0
    tasks = pd.read_parquet(out / "tasks.parquet")
    jobs = pd.read_parquet(out / "jobs.parquet")
    assert len(tasks) == s["attempts"] and len(jobs) == s["jobs"]
    assert {
        "job_id",
        "task_id",
        "attempt",
        "workload",
        "node",
        "phase",
        "submit_time",
        "launch_time",
        "end_time",
        "duration",
        "outcome",
    } <= set(tasks.columns)
    assert sum(c.startswith("c_") for c in tasks.columns) >= 20
    assert "wrote" in capsys.readouterr().out


def test_simulate_bad_input_exits_2_without_writing(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["simulate", "--policy", "nope", "--hours", "0.1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "unknown policy 'nope'" in err
    assert not (out / "summary.json").exists()
    assert main(["simulate", "--nodes", "0", "--hours", "0.1", "--out", str(out)]) == 2
    assert "nodes must be an integer >= 1, got 0" in capsys.readouterr().err
    assert (
        main(
            [
                "simulate",
                "--hours",
                "0.1",
                "--data-dir",
                str(tmp_path / "x"),
                "--workload",
                "FB2009",
                "--out",
                str(out),
            ]
        )
        == 2
    )


@pytest.mark.skipif(not compiled_available(), reason="sim_bridge._fifo_core is not built")
def test_simulate_engine_flag(tmp_path, capsys):
    # the compiled loop runs FIFO placement in the world without co-located contention
    base = ["simulate", "--hours", "0.1", "--nodes", "4", "--placement", "fifo"]
    base += ["--interference", "0"]
    assert main([*base, "--engine", "python", "--out", str(tmp_path / "py")]) == 0
    assert "(python loop)" in capsys.readouterr().out
    assert main([*base, "--out", str(tmp_path / "auto")]) == 0
    assert "(compiled loop)" in capsys.readouterr().out
    py = pd.read_parquet(tmp_path / "py" / "tasks.parquet")
    pd.testing.assert_frame_equal(py, pd.read_parquet(tmp_path / "auto" / "tasks.parquet"))
    out = tmp_path / "late"
    assert main([*base, "--policy", "late", "--engine", "compiled", "--out", str(out)]) == 2
    assert "engine='compiled': speculation policy 'late'" in capsys.readouterr().err
    assert not out.exists() or not (out / "summary.json").exists()


def test_policies_lists_every_registered_policy(capsys):
    assert main(["policies"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    names = [ln.split()[0] for ln in lines]
    assert names == sorted(registry)
    assert all(len(ln.split(None, 2)) == 3 for ln in lines)
    assert main(["policies", "--kind", "placement"]) == 0
    placed = [ln.split()[0] for ln in capsys.readouterr().out.strip().splitlines()]
    assert set(placed) == {n for n, c in registry.items() if c.kind == "placement"}


def test_workload_lists_are_comma_separated_as_in_collect(tmp_path, capsys):
    """``--workload A,B`` (collect's convention) and ``--workload A B`` give the same run; an
    unknown name is a usage error naming it."""
    import json

    from pipelines.cli import main

    base = ["simulate", "--nodes", "3", "--hours", "0.05", "--no-progress"]
    assert main([*base, "--workload", "SYN,FB2009", "--out", str(tmp_path / "a")]) == 0
    assert main([*base, "--workload", "SYN", "FB2009", "--out", str(tmp_path / "b")]) == 0
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert a["jobs"] == b["jobs"] and a["tasks"] == b["tasks"]
    with pytest.raises(SystemExit) as exc:
        main([*base, "--workload", "SYN,FOO", "--out", str(tmp_path / "c")])
    assert exc.value.code == 2 and "FOO" in capsys.readouterr().err


def test_simulate_writes_its_tables_under_fresh_temporary_names(tmp_path):
    # the tables went through the fixed names .tasks.parquet.tmp / .jobs.parquet.tmp, which
    # two writers (or a leftover) shared; now each write has its own temporary name
    out = tmp_path / "run"
    out.mkdir()
    others = [out / f".{name}.parquet.tmp" for name in ("tasks", "jobs")]
    for p in others:
        p.write_text("another writer's file\n")
    args = ["simulate", "--workload", "SYN", "--nodes", "3", "--hours", "0.05", "--seed", "1"]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    assert [p.read_text() for p in others] == ["another writer's file\n"] * 2
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == sorted(
        p.name for p in others
    )
    s = json.loads((out / "summary.json").read_text())
    assert len(pd.read_parquet(out / "jobs.parquet")) == s["jobs"]
