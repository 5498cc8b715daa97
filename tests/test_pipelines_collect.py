"""``straggler collect`` on a tiny cluster: files, summary consistency, determinism, errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pipelines._collect import DEFAULT_LOAD, DEFAULT_SCALES, parse_scales
from pipelines._dataset import label_stragglers, load_trace
from pipelines.cli import main

ARGS = [
    "collect",
    "--nodes",
    "6",
    "--hours",
    "0.5",
    "--workloads",
    "FB2009,SYN",
    "--scale",
    "FB2009=8,SYN=0.05",
]


@pytest.fixture(scope="module")
def collected(tmp_path_factory, shared_data_dir):
    out = tmp_path_factory.mktemp("collect")
    assert main([*ARGS, "--seed", "3", "--data-dir", str(shared_data_dir), "--out", str(out)]) == 0
    return out


def test_collect_writes_trace_and_consistent_summary(collected):
    s = json.loads((collected / "summary.json").read_text())
    trace = load_trace(collected)  # validates the schema
    lt = label_stragglers(trace)
    assert s["attempt_rows"] == len(trace)
    assert (
        s["rows"] == len(lt.frame) and s["pairs"] == lt.frame.groupby(["node", "workload"]).ngroups
    )
    assert set(s["rows_by_workload"]) == {"FB2009", "SYN"}
    for w, share in s["straggler_share_by_workload"].items():
        assert share == pytest.approx(lt.frame.loc[lt.frame.workload == w, "straggler"].mean())
    assert s["excluded_jobs"] == lt.excluded_jobs
    assert s["sources"]["FB2009"].endswith("FB-2009_samples_24_times_1hr_0.tsv")
    assert s["scales"] == {"FB2009": 8.0, "SYN": 0.05}
    assert (collected / "jobs.parquet").is_file()


def test_collect_deterministic(collected, tmp_path, shared_data_dir):
    assert (
        main([*ARGS, "--seed", "3", "--data-dir", str(shared_data_dir), "--out", str(tmp_path)])
        == 0
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "tasks.parquet"), pd.read_parquet(collected / "tasks.parquet")
    )


def test_collect_bad_input(tmp_path, capsys):
    assert main(["collect", "--workloads", "FB2009,NOPE", "--out", str(tmp_path)]) == 2
    assert "unknown ['NOPE']" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--scale SYN must be a positive number, got '-1'"):
        parse_scales("SYN=-1", ["SYN"])
    with pytest.raises(ValueError, match="names workload 'X'"):
        parse_scales("X=1", ["SYN"])


def test_default_scales():
    assert parse_scales(None, ["SYN", "FB2010"]) == {
        "SYN": DEFAULT_SCALES["SYN"],
        "FB2010": DEFAULT_SCALES["FB2010"],
    }


def test_collect_without_data_falls_back_and_says_so(tmp_path, capsys):
    empty = tmp_path / "nodata"
    empty.mkdir()
    args = ["collect", "--nodes", "3", "--hours", "0.1", "--workloads", "FB2009,SYN"]
    args += ["--scale", "0.05", "--data-dir", str(empty), "--out", str(tmp_path / "o")]
    assert main(args) == 0
    assert "FB2009 had no data file and ran as the synthetic workload" in capsys.readouterr().out
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["synthetic_fallback"] == ["FB2009"]
    assert s["sources"] == {"FB2009": "synthetic", "SYN": "synthetic"}


def test_offered_load_is_work_over_slot_seconds(collected, shared_data_dir):
    """The summary's nominal load equals the loaded jobs' base work over slots x window."""
    import sim_bridge
    from pipelines._collect import offered_load

    s = json.loads((collected / "summary.json").read_text())
    w = sim_bridge.load_workload("SYN", shared_data_dir, hours=0.5, scale=0.05, seed=3 + 1)
    work = sum(sum(j.map_work) + sum(j.reduce_work) for j in w.jobs)
    assert s["offered_load"]["SYN"] == pytest.approx(work / (6 * 2 * 0.5 * 3600))
    assert offered_load(w, 6, 2, 0.5) == pytest.approx(s["offered_load"]["SYN"])


def test_load_option_hits_the_target_and_excludes_scale(tmp_path, capsys):
    out = tmp_path / "c"
    args = ["collect", "--workloads", "SYN", "--nodes", "8", "--hours", "0.5", "--out", str(out)]
    assert main([*args, "--load", "0.6"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["realised_load"]["SYN"] == pytest.approx(0.6, rel=0.1)
    # the realised load is what the attempts ran, over the slot-seconds of the window
    tasks = pd.read_parquet(out / "tasks.parquet")
    assert s["realised_load"]["SYN"] == pytest.approx(tasks["duration"].sum() / (8 * 2 * 1800))
    # tasks run longer than their base work: the nominal load of the same trace is lower
    assert s["offered_load"]["SYN"] < 0.8 * s["realised_load"]["SYN"]
    nominal = tmp_path / "n"
    assert main([*args[:-1], str(nominal), "--load", "0.6", "--load-basis", "nominal"]) == 0
    n = json.loads((nominal / "summary.json").read_text())
    assert n["offered_load"]["SYN"] == pytest.approx(0.6, rel=0.03)
    assert main([*args[:-1], str(tmp_path / "d")]) == 0  # neither flag: the default load
    d = json.loads((tmp_path / "d" / "summary.json").read_text())
    assert sum(d["realised_load"].values()) == pytest.approx(DEFAULT_LOAD, rel=0.1)
    assert main([*args, "--overwrite", "--load", "0.6", "--scale", "1"]) == 2
    assert "--load or --scale" in capsys.readouterr().err
    assert main([*args, "--overwrite", "--load", "-1"]) == 2
    assert "--load must be a positive number" in capsys.readouterr().err


def test_scale_search_passes_over_scales_that_keep_no_job(monkeypatch):
    """A data scale so small that a workload keeps no job (Alibaba's instance counts) is no
    load, not an error: the bisection moves up and still finds the target."""
    import sim_bridge
    from pipelines import _collect

    real = sim_bridge.load_workload
    refused = []

    def thin(name, data_dir=None, *, hours, scale, seed, **kw):
        if scale < 0.003:  # the target (~0.0035 here) sits just above: the search dips below
            refused.append(scale)
            raise ValueError(f"x.csv: no job is submitted within the first {hours} hours")
        return real("SYN", None, hours=hours, scale=scale, seed=seed)

    monkeypatch.setattr(sim_bridge, "load_workload", thin)
    target = 0.3
    scale = _collect._scale_for_nominal("SYN", 0, target, 10, 2, 0.5, 0, None, warn=False)
    assert scale >= 0.003 and refused
    got = _collect.offered_load(thin("SYN", hours=0.5, scale=scale, seed=0), 10, 2, 0.5)
    assert got == pytest.approx(target, rel=0.05)


def test_trace_files_are_written_under_fresh_temporary_names(tmp_path):
    # tasks.parquet / jobs.parquet went through the fixed names .tasks.parquet.tmp and
    # .jobs.parquet.tmp, which two writers (or a leftover) shared; now each write has its own
    from pipelines._collect import collect

    out = tmp_path / "t"
    out.mkdir()
    others = [out / f".{name}.parquet.tmp" for name in ("tasks", "jobs")]
    for p in others:
        p.write_text("another writer's file\n")
    collect(out, ["SYN"], nodes=3, hours=0.05, scales={"SYN": 0.05}, seed=1)
    assert [p.read_text() for p in others] == ["another writer's file\n"] * 2
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == sorted(
        p.name for p in others
    )
    assert len(pd.read_parquet(out / "tasks.parquet")) > 0


#: Settings of simulate_cell, each unlike its default, to see every one arrive.
SETTINGS = dict(
    nodes=7,
    slots=3,
    hours=0.25,
    seed=5,
    cluster_seed=9,
    policy="late",
    data_dir="/nowhere",
    counters="alibaba2018",
    beta=1.7,
)


def test_collect_hands_every_setting_to_its_simulation(tmp_path, monkeypatch):
    """``collect`` and ``collect_cell`` build simulate_cell's settings in one place
    (``simulate_options``): each setting they are given reaches the simulation."""
    from pipelines import _collect

    seen = []

    def stop(tasks, *a, **kw):
        seen.extend(tasks)
        raise RuntimeError("stop before simulating")

    monkeypatch.setattr(_collect, "run_sweep", stop)
    with pytest.raises(RuntimeError, match="stop before"):
        _collect.collect(tmp_path, ["SYN"], scales={"SYN": 1.0}, **SETTINGS)
    (task,) = seen
    assert task.fn is _collect.simulate_cell and task.args == (["SYN"], {"SYN": 1.0})
    assert task.kwargs == SETTINGS


def test_collect_cell_hands_every_setting_to_its_simulation(monkeypatch):
    from pipelines import _collect_cells

    seen = {}

    def record(workloads, scales, **kw):
        seen.update(kw, workloads=workloads, scales=scales)
        raise RuntimeError("stop before simulating")

    monkeypatch.setattr(_collect_cells, "simulate_cell", record)
    with pytest.raises(RuntimeError, match="stop before"):
        _collect_cells.collect_cell(["SYN"], scales={"SYN": 1.0}, load=None, **SETTINGS)
    assert seen == {**SETTINGS, "progress": False, "workloads": ["SYN"], "scales": {"SYN": 1.0}}


def test_simulate_options_are_simulate_cells_keywords():
    import inspect

    from pipelines._collect import simulate_cell, simulate_options

    keywords = [
        p.name
        for p in inspect.signature(simulate_cell).parameters.values()
        if p.kind is p.KEYWORD_ONLY
    ]
    assert list(simulate_options(SETTINGS)) == [k for k in keywords if k != "progress"]
    with pytest.raises(KeyError, match="beta"):
        simulate_options({k: v for k, v in SETTINGS.items() if k != "beta"})


#: The least data scale at which the fake workload below keeps a job (4-digit rounding of a
#: scale near it falls below it, as the search's result did).
LEAST_SCALE = 0.012344


def _one_job_floor(real):
    """SYN by ``real`` (``sim_bridge.load_workload``), keeping no job below
    :data:`LEAST_SCALE` (as Alibaba 2017's few jobs in a short window are thinned to nothing
    at small scales)."""

    def load(name, data_dir=None, *, hours, scale, seed, **kw):
        if scale < LEAST_SCALE:
            raise ValueError(f"x.csv: no job is submitted within the first {hours} hours")
        return real("SYN", None, hours=hours, scale=scale, seed=seed)

    return load


def test_scale_search_keeps_a_job_when_the_share_is_below_the_least_job(monkeypatch):
    """A share below the load of a workload's least job: the bisection closes in on the
    scale where the last job goes and used to return a scale just below it, so the run failed
    on "no job is submitted"; it now returns the least scale it saw that keeps one, and warns."""
    import sim_bridge
    from pipelines import _collect_calibrate

    fake = _one_job_floor(sim_bridge.load_workload)
    least = _collect_calibrate.offered_load(
        fake("ALI2017", hours=0.5, scale=LEAST_SCALE, seed=0), 10, 2, 0.5
    )
    monkeypatch.setattr(sim_bridge, "load_workload", fake)
    with pytest.warns(UserWarning, match="ALI2017 reaches nominal load"):
        scale = _collect_calibrate._scale_for_nominal("ALI2017", 0, least / 10, 10, 2, 0.5, 0, None)
    assert LEAST_SCALE <= scale <= LEAST_SCALE * 1.002
    assert fake("ALI2017", hours=0.5, scale=scale, seed=0).jobs  # no error


def test_scale_search_names_a_workload_without_a_job_in_the_window(monkeypatch):
    import sim_bridge
    from pipelines import _collect_calibrate

    def empty(name, data_dir=None, *, hours, scale, seed, **kw):
        raise ValueError(f"x.csv: no job is submitted within the first {hours} hours")

    monkeypatch.setattr(sim_bridge, "load_workload", empty)
    with pytest.raises(ValueError, match=r"ALI2017 submits no job in the first 0.5 hours.*--hours"):
        _collect_calibrate._scale_for_nominal("ALI2017", 0, 0.1, 10, 2, 0.5, 0, None, warn=False)


def test_collect_with_alibaba_in_a_short_window_runs(tmp_path, shared_data_dir):
    """Alibaba 2017's share of a small load in a 0.3 h window is below its least job's load:
    the collect failed on "no job is submitted" before."""
    args = ["collect", "--workloads", "FB2009,FB2010,ALI2017", "--hours", "0.3"]
    args += ["--nodes", "20", "--load", "0.005", "--load-basis", "nominal"]
    with pytest.warns(UserWarning, match="ALI2017"):
        code = main([*args, "--data-dir", str(shared_data_dir), "--out", str(tmp_path / "o")])
    assert code == 0
    tasks = load_trace(tmp_path / "o")
    assert (tasks["workload"] == "ALI2017").any()


def test_load_search_says_what_to_change_for_a_workload_at_its_least_scale(monkeypatch):
    """FB-2010 on a small cluster: every job keeps a task, so below some scale its load stops
    falling and the search bottoms out above its share (the cluster saturates). That is the
    best any scale can do; the warning names the workload and the change that helps."""
    import re

    import sim_bridge
    from pipelines._collect import scales_for_load

    real = sim_bridge.load_workload

    def floored(name, data_dir=None, *, hours, scale, seed, **kw):
        return real("SYN", None, hours=hours, scale=max(scale, 0.05), seed=seed)

    monkeypatch.setattr(sim_bridge, "load_workload", floored)
    with pytest.warns(UserWarning) as caught:
        scales_for_load(["FB2010"], 0.02, nodes=3, slots=2, hours=0.1, seed=0, rounds=2)
    (message,) = [str(w.message) for w in caught if "calibration runs" in str(w.message)]
    got = re.search(r"FB2010 runs ([\d.]+) even at its least data scale .* --nodes (\d+)", message)
    assert got, message
    assert int(got[2]) > 3 and "leave FB2010 out of --workloads" in message


def test_a_scale_is_at_its_floor_only_when_halving_it_barely_lowers_the_work(monkeypatch):
    import sim_bridge
    from pipelines._collect_calibrate import _scale_at_floor

    real = sim_bridge.load_workload
    assert not _scale_at_floor("SYN", 0, 10.0, 0.5, 0, None)  # bytes, so work, halve

    def floored(name, data_dir=None, *, hours, scale, seed, **kw):
        return real("SYN", None, hours=hours, scale=max(scale, 10.0), seed=seed)

    monkeypatch.setattr(sim_bridge, "load_workload", floored)
    assert _scale_at_floor("SYN", 0, 10.0, 0.5, 0, None)  # the same work at any smaller scale
    monkeypatch.setattr(sim_bridge, "load_workload", _one_job_floor(real))
    assert _scale_at_floor("SYN", 0, LEAST_SCALE * 1.5, 0.5, 0, None)  # no job at half
