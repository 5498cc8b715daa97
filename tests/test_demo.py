"""``straggler demo``: stage bookkeeping, the replication example, and the whole run (slow)."""

from __future__ import annotations

import io
import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines import _api
from pipelines._collect_config import CollectConfig
from pipelines._demo import (
    REAL_WORKLOADS,
    Demo,
    Stage,
    api_stage,
    probe_data,
    replication_example,
)
from pipelines._demo_config import DemoConfig
from pipelines._fidelity_config import FidelityConfig
from pipelines.report import SECTIONS


def _demo(tmp_path) -> tuple[Demo, io.StringIO]:
    stream = io.StringIO()
    demo = Demo(DemoConfig(out=str(tmp_path / "demo"), quick=True), stream=stream)
    demo.out.mkdir(parents=True)
    return demo, stream


def _ok(stage: Stage) -> None:
    stage.status = "ok"


def test_unbuilt_command_is_skipped_and_so_are_its_dependents(tmp_path):
    demo, stream = _demo(tmp_path)
    a = Stage("a", "collect", "no_such_command", out=str(tmp_path / "a"))
    b = Stage("b", "train", None, needs=("a",), out=str(tmp_path / "b"))
    c = Stage("c", "replication", None, out=str(tmp_path / "c"))
    demo.stages = [a, b, c]
    for i, st in enumerate(demo.stages, start=1):
        demo._run_stage(i, st, _ok)
    assert (a.status, b.status, c.status) == ("skipped", "skipped", "ok")
    assert a.reason == "command `straggler no_such_command` is not built yet"
    assert b.reason == "needs a, which did not complete"
    assert a.out is None and c.wall_seconds is not None
    lines = stream.getvalue().splitlines()
    assert any("stage 1/4 a: SKIPPED: command `straggler no_such_command`" in ln for ln in lines)
    assert all(ln.startswith("[demo ") for ln in lines)
    assert demo.summary()["status"] == "partial"


def test_a_failing_stage_is_recorded_and_the_rest_go_on(tmp_path):
    demo, stream = _demo(tmp_path)

    def boom(stage):
        raise RuntimeError("the solver diverged")

    a = Stage("a", "train", None)
    b = Stage("b", "compare", None, needs=("a",))
    c = Stage("c", "replication", None)
    demo.stages = [a, b, c]
    demo._run_stage(1, a, boom)
    demo._run_stage(2, b, _ok)
    demo._run_stage(3, c, _ok)
    assert a.status == "failed" and a.reason == "RuntimeError: the solver diverged"
    assert b.status == "skipped" and c.status == "ok"
    s = json.loads((demo.out / "summary.json").read_text())
    assert s["status"] == "failed"
    assert [x["name"] for x in s["stages"]] == ["a", "b", "c"]
    assert "FAILED" in stream.getvalue()


def test_stage_errors_are_captured(tmp_path, capsys):
    demo, _ = _demo(tmp_path)
    cfg = CollectConfig(out=str(tmp_path / "c"), workloads=["NOPE"])
    stage = api_stage("c", "collect", "collect", cfg, _api.collect_trace)
    demo._api_runner(stage)
    assert stage.status == "failed" and "NOPE" in stage.reason
    assert stage.reason.endswith("(log: logs/c.log)")
    assert "NOPE" in (demo.out / "logs" / "c.log").read_text()
    assert "straggler collect: error:" in capsys.readouterr().err  # as the CLI prints it
    with pytest.raises(TypeError, match="no_such_flag"):  # a setting the command lacks
        CollectConfig(out="x", no_such_flag=1)


def test_probe_data_falls_back_to_synthetic(tmp_path):
    workloads, note = probe_data(str(tmp_path), hours=0.1)
    assert workloads == ["SYN"]
    assert "synthetic" in note and str(tmp_path) in note


def test_probe_data_uses_the_real_files(shared_data_dir):
    workloads, note = probe_data(str(shared_data_dir), hours=0.1)
    assert workloads == list(REAL_WORKLOADS) == ["FB2009", "FB2010"]
    # the data directory is resolved (symlinks followed), as every command resolves it
    assert note.startswith(f"data: real workload files from {shared_data_dir.resolve()}")


def test_plan_wires_outputs_to_inputs(tmp_path):
    demo, _ = _demo(tmp_path)
    demo.workloads = ["FB2009", "SYN"]
    stages = {s.name: s for s in demo.plan()}
    # no FlowBench in the demo's data directory: no FlowBench stages
    assert [s.section for s in demo.plan()] == [k for k, _ in SECTIONS if k != "flowbench"]
    collect_out = stages["collect"].out
    for name in ("train", "table1", "table2", "compare"):
        argv = stages[name].argv
        assert argv[argv.index("--traces") + 1] == collect_out
        assert argv[argv.index("--out") + 1] == stages[name].out
    collect = stages["collect"].argv
    assert collect[collect.index("--load") + 1] == f"{demo.profile.load:g}"
    assert "--scale" not in collect  # collect derives every workload's scale from the load
    compare = stages["compare"].argv
    assert compare[compare.index("--model") + 1] == f"mtl={stages['train'].out}/predictor"


def test_replication_example_is_deterministic_and_consistent(tmp_path):
    kw = {"n_tasks": 10, "runs": 6, "ps": (0.0, 0.2), "seed": 3}
    s1 = replication_example(tmp_path / "a", **kw)
    s2 = replication_example(tmp_path / "b", **kw)
    t1 = pd.read_csv(tmp_path / "a" / "replication.csv")
    t2 = pd.read_csv(tmp_path / "b" / "replication.csv")
    pd.testing.assert_frame_equal(t1, t2)
    assert list(t1["policy"]) == ["pi_keep", "pi_keep", "pi_kill", "pi_kill"]
    z = (t1["latency_engine"] - t1["latency_analysis"]) / t1["latency_se"]
    np.testing.assert_allclose(t1["latency_z"], z)
    assert s1["max_abs_z"] == s2["max_abs_z"]
    # p = 0 replicates nothing: keep and kill are the same runs, cost = mean task time
    base = t1[t1["p"] == 0.0]
    assert base["latency_engine"].nunique() == 1
    np.testing.assert_allclose(base["cost_analysis"], 2.0)  # E[ShiftedExp(1, 1)]
    assert (tmp_path / "a" / "replication_tradeoff.png").read_bytes()[:4] == b"\x89PNG"


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: list[str] = []
        self.srcs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h2" and "id" in a:
            self.ids.append(a["id"])
        if "src" in a:
            self.srcs.append(a["src"])


@pytest.mark.slow
def test_quick_demo_end_to_end(tmp_path, capsys):
    from pipelines.cli import main

    out = tmp_path / "demo"
    (tmp_path / "nodata").mkdir()  # an empty data directory: the synthetic workload
    code = main(["demo", "--out", str(out), "--quick", "--data-dir", str(tmp_path / "nodata")])
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    bad = {s["name"]: s["reason"] for s in summary["stages"] if s["status"] != "ok"}
    assert code == 0 and not bad, bad
    assert summary["status"] == "complete"
    assert [s["name"] for s in summary["stages"]] == [
        "fidelity",
        "collect",
        "train",
        "table1",
        "table2",
        "compare",
        "replication",
        "report",
    ]
    for s in summary["stages"]:
        assert s["wall_seconds"] > 0
        assert (out / s["name"] / "summary.json").is_file() or s["name"] == "report"
    assert summary["stages"][-1]["file"] == str(out / "report.html")
    assert "using the synthetic workload SYN" in printed
    assert printed.count(" done in ") == 8  # seven stages and the report
    parser = _Ids()
    parser.feed((out / "report.html").read_text(encoding="utf-8"))
    assert parser.ids == [f"s-{k}" for k, _ in SECTIONS if k != "flowbench"]
    assert parser.srcs and all(s.startswith("data:image/png;base64,") for s in parser.srcs)
    # the headline figures sit at the top level of the summary, read from the stage outputs
    train = json.loads((out / "train" / "summary.json").read_text())
    compare = json.loads((out / "compare" / "summary.json").read_text())
    assert summary["roc_auc"] == train["test"]["roc_auc"]
    assert summary["majority_accuracy"] == train["test"]["majority_accuracy"]
    means = {
        r["predictor"]: r["mean"]
        for r in compare["table3"]
        if r["workload"] == "ALL" and r["statistic"] == "99p"
    }
    assert summary["p99_jct_gain_pct"] == means
    assert set(summary["task_seconds_gain_pct"]) == set(means) >= {"mtl", "random", "oracle"}
    assert isinstance(summary["verdict"], str) and "prediction_helped" in summary
    html_text = (out / "report.html").read_text(encoding="utf-8")
    assert html_text.index('id="headline"') < html_text.index('id="demo"')


def test_plan_adds_flowbench_stages_when_the_data_is_there(tmp_path):
    """A data directory with FlowBench run files adds collect --source flowbench and Table 1
    on its trace (dropping single-class task types); the sections then follow SECTIONS."""
    parsed = tmp_path / "data" / "flowbench" / "parsed" / "normal"
    parsed.mkdir(parents=True)
    (parsed / "1000-genome-run0001.csv").write_text("x\n")
    demo, _ = _demo(tmp_path)
    demo.data_dir = str(tmp_path / "data")
    demo.workloads = ["SYN"]
    stages = {s.name: s for s in demo.plan()}
    sections = list(dict.fromkeys(s.section for s in demo.plan()))
    assert sections == [k for k, _ in SECTIONS]
    fb, t1 = stages["flowbench"].argv, stages["flowbench_table1"].argv
    assert fb[:3] == ["collect", "--source", "flowbench"]
    assert fb[fb.index("--data-dir") + 1] == str(tmp_path / "data")
    assert t1[t1.index("--traces") + 1] == stages["flowbench"].out
    assert t1[t1.index("--single-class-workloads") + 1] == "drop"
    assert stages["flowbench_table1"].needs == ("flowbench",)


def test_rerun_replaces_stage_results_and_ctrl_c_stops_the_demo(tmp_path):
    """A stage whose directory holds an earlier demo's results runs with overwrite (the
    demo owns its directory); Ctrl-C inside a stage stops the whole demo."""
    demo, _ = _demo(tmp_path)
    seen = []

    def fake(config, overwrite):
        seen.append(overwrite)
        (Path(config.out) / "summary.json").write_text("{}")
        return {}

    a = str(tmp_path / "a")
    fresh = api_stage("a", "a", "fidelity", FidelityConfig(out=a), fake)
    (tmp_path / "a").mkdir()
    demo._api_runner(fresh)
    assert seen[-1] is False and "--overwrite" not in fresh.argv and fresh.status == "ok"
    again = api_stage("a", "a", "fidelity", FidelityConfig(out=a), fake)
    demo._api_runner(again)
    assert seen[-1] is True and again.argv[-1] == "--overwrite" and again.status == "ok"

    def ctrl_c(config, overwrite):
        raise KeyboardInterrupt

    b = str(tmp_path / "b")
    with pytest.raises(KeyboardInterrupt):
        demo._api_runner(api_stage("b", "b", "fidelity", FidelityConfig(out=b), ctrl_c))


def test_the_old_report_shim_is_gone_and_the_demo_imports_the_package():
    # pipelines._report was a re-export of pipelines.report kept for older imports; the demo
    # (its last user) imports pipelines.report, so the shim is removed
    import importlib.util
    import inspect

    import pipelines._demo

    assert importlib.util.find_spec("pipelines._report") is None
    assert "pipelines._report" not in inspect.getsource(pipelines._demo)
