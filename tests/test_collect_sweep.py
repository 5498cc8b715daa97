"""``straggler collect`` on the sweep engine: several (seed, load) cells in one trace.

Oracles: a one-cell collect equals the simulator run directly on the same workloads (the code
path collect had before it ran through :func:`pipelines._sweep.run_sweep`); a cell of a
multi-cell trace equals the one-cell collect of its seed and load; labels and time splits of
the combined trace equal those of each cell alone; a 2-process Dask ``LocalCluster`` on
127.0.0.1 writes the same tables as this process; an interrupted run leaves no output set
that looks complete.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from conftest import local_dask_cluster

from pipelines._collect import (
    cell_key,
    collect_cells,
    combine_cells,
    plan_cells,
    simulate_cell,
)
from pipelines._collect_config import CollectConfig
from pipelines._dataset import label_stragglers, load_trace, validate_trace
from pipelines._io import INCOMPLETE_MARKER, OutputError
from pipelines._splits import fraction_split
from pipelines._sweep import SCHEDULER_ENV, Engine
from pipelines.cli import main

pytestmark = pytest.mark.timeout(300, method="thread")

#: A small cluster and window: each cell's calibration and run take well under a second.
SMALL = ["--nodes", "6", "--hours", "0.5", "--workloads", "FB2009,SYN"]
SEEDS, LOADS = [0, 1], [0.5, 0.7]


@pytest.fixture(autouse=True)
def _local_by_default(monkeypatch):
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)


def _config(out, data_dir, **kw) -> CollectConfig:
    base = dict(out=str(out), workloads=["FB2009", "SYN"], nodes=6, hours=0.5)
    return CollectConfig(**{**base, "data_dir": str(data_dir), **kw})


def _cell_rows(table: pd.DataFrame, seed: int, load: float | None) -> pd.DataFrame:
    """A cell's rows of a combined table as its own run wrote them (ids unprefixed)."""
    prefix = cell_key(seed, load) + "/"
    sel = table["seed"] == seed
    sel &= table["load"].isna() if load is None else table["load"] == load
    rows = table.loc[sel].drop(columns=["seed", "load"]).reset_index(drop=True)
    for col in ("job_id", "task_id")[: 2 if "task_id" in rows else 1]:
        assert rows[col].str.startswith(prefix).all()
        rows[col] = rows[col].str.slice(len(prefix)).astype(table[col].dtype)
    return rows


@pytest.fixture(scope="module")
def multi(tmp_path_factory, shared_data_dir):
    """A 2 x 2 (seeds x loads) collect run locally through the CLI."""
    out = tmp_path_factory.mktemp("multi")
    args = [*SMALL, "--seeds", "0,1", "--loads", "0.5,0.7"]
    assert main(["collect", *args, "--data-dir", str(shared_data_dir), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def singles(tmp_path_factory, shared_data_dir):
    """One-cell collects (``--seed 0 --load L``): the cells of seed 0 must equal them."""
    outs = {}
    for load in LOADS:
        out = tmp_path_factory.mktemp(f"single{load:g}")
        args = [*SMALL, "--seed", "0", "--load", str(load), "--data-dir", str(shared_data_dir)]
        assert main(["collect", *args, "--out", str(out)]) == 0
        outs[load] = out
    return outs


# ---------------------------------------------------------------- one cell: the old code path
def test_one_cell_equals_the_simulator_run_directly(tmp_path, shared_data_dir):
    """``collect`` without an engine writes exactly what simulating the loaded workloads
    directly gives (the code path before sweeps), for given scales and for a --load."""
    import sim_bridge

    for extra in (["--scale", "FB2009=0.1,SYN=0.0001"], ["--load", "0.6"]):
        out = tmp_path / extra[0].strip("-")
        args = [*SMALL, "--seed", "3", *extra, "--data-dir", str(shared_data_dir)]
        assert main(["collect", *args, "--out", str(out)]) == 0
        s = json.loads((out / "summary.json").read_text())
        loaded = [
            sim_bridge.load_workload(
                w, shared_data_dir, hours=0.5, scale=s["scales"][w], seed=3 + k
            )
            for k, w in enumerate(["FB2009", "SYN"])
        ]
        want = sim_bridge.simulate(loaded, "none", nodes=6, slots=2, seed=3, progress=False)
        assert pd.read_parquet(out / "tasks.parquet").equals(want.tasks)
        assert pd.read_parquet(out / "jobs.parquet").equals(want.jobs)
        assert "cells" not in s and "seed" not in pd.read_parquet(out / "tasks.parquet")


def test_one_cell_on_an_engine_is_collect_trace(tmp_path, shared_data_dir):
    """Without --seeds/--loads ``collect_cells`` is ``collect_trace`` (same summary keys)."""
    import pipelines

    cfg = _config(tmp_path / "a", shared_data_dir, scales={"FB2009": 0.1, "SYN": 0.0001})
    a = collect_cells(cfg, engine=Engine())
    b = pipelines.collect_trace(dataclasses.replace(cfg, out=str(tmp_path / "b")))
    assert list(a) == list(b)
    assert pd.read_parquet(tmp_path / "a" / "tasks.parquet").equals(
        pd.read_parquet(tmp_path / "b" / "tasks.parquet")
    )


# ---------------------------------------------------------------- several cells
def test_cells_of_the_seed_equal_one_cell_runs(multi, singles):
    tasks = pd.read_parquet(multi / "tasks.parquet")
    jobs = pd.read_parquet(multi / "jobs.parquet")
    assert tasks[["seed", "load"]].drop_duplicates().shape[0] == len(SEEDS) * len(LOADS)
    s = json.loads((multi / "summary.json").read_text())
    for load in LOADS:
        single = singles[load]
        assert _cell_rows(tasks, 0, load).equals(pd.read_parquet(single / "tasks.parquet"))
        assert _cell_rows(jobs, 0, load).equals(pd.read_parquet(single / "jobs.parquet"))
        one = json.loads((single / "summary.json").read_text())
        cell = next(c for c in s["cells"] if c["cell"] == cell_key(0, load))
        assert cell["scales"] == one["scales"]
        assert cell["realised_load"] == one["realised_load"]


def test_every_cell_is_its_seed_on_the_shared_cluster(multi, shared_data_dir):
    """A cell of seed 1 is the run of seed 1 on the cluster of --seed (0), at its scales."""
    tasks = pd.read_parquet(multi / "tasks.parquet")
    s = json.loads((multi / "summary.json").read_text())
    cell = next(c for c in s["cells"] if c["cell"] == cell_key(1, 0.7))
    run = simulate_cell(
        ["FB2009", "SYN"],
        cell["scales"],
        nodes=6,
        hours=0.5,
        seed=1,
        cluster_seed=0,
        data_dir=str(shared_data_dir),
        progress=False,
    )
    assert _cell_rows(tasks, 1, 0.7).equals(run.tasks)
    assert s["seed"] == 0 and s["seeds"] == SEEDS and s["loads"] == LOADS
    assert s["attempt_rows"] == len(tasks) == sum(c["attempt_rows"] for c in s["cells"])


def test_multi_cell_trace_is_a_valid_training_trace(multi):
    """Unique ids across cells; each row's label and stage median are those of its cell
    alone; in the time-ordered split every cell's training rows precede its test rows."""
    trace = load_trace(multi)  # validates: one row per (job_id, task_id, attempt)
    assert trace["job_id"].str.split("/").str[:2].str.join("/").nunique() == 4
    lt = label_stragglers(trace)
    assert len(lt.frame) == json.loads((multi / "summary.json").read_text())["rows"]
    key = ["job_id", "task_id"]
    for seed in SEEDS:
        for load in LOADS:
            alone = label_stragglers(validate_trace(_cell_rows(trace, seed, load))).frame
            alone = alone.assign(job_id=cell_key(seed, load) + "/" + alone["job_id"])
            alone = alone.assign(task_id=cell_key(seed, load) + "/" + alone["task_id"])
            mine = lt.frame[(lt.frame["seed"] == seed) & (lt.frame["load"] == load)]
            both = mine.merge(alone, on=key, suffixes=("", "_alone"), validate="one_to_one")
            assert len(both) == len(mine) == len(alone)
            assert (both["straggler"] == both["straggler_alone"]).all()
            assert np.array_equal(both["stage_median"], both["stage_median_alone"])
    split = fraction_split(lt.frame, 0.5)
    f = lt.frame
    for (_, _, _, _), g in f.groupby(["seed", "load", "node", "workload"]):
        train = g.index.intersection(split.train)
        test = g.index.intersection(split.test)
        if len(train) and len(test):
            assert f.loc[train, "launch_time"].max() <= f.loc[test, "launch_time"].min()


def test_combine_keeps_cell_order_and_types():
    a = simulate_cell(["SYN"], {"SYN": 0.05}, nodes=3, hours=0.1, seed=2, progress=False)
    tasks, jobs = combine_cells({(2, None): a, (5, 0.3): a})
    assert tasks["seed"].tolist() == [2] * len(a.tasks) + [5] * len(a.tasks)
    assert tasks["load"].iloc[: len(a.tasks)].isna().all()
    assert (tasks["load"].iloc[len(a.tasks) :] == 0.3).all()
    assert tasks["job_id"].dtype == a.tasks["job_id"].dtype
    assert all(
        t.startswith(j + "-") for j, t in zip(tasks["job_id"], tasks["task_id"], strict=True)
    )
    assert jobs["job_id"].is_unique and len(jobs) == 2 * len(a.jobs)


def test_plan_and_bad_cell_options(tmp_path, capsys):
    cfg = CollectConfig(out="o", seeds=[3, 1], loads=[0.7, 0.5])
    assert plan_cells(cfg) == [(3, 0.7), (3, 0.5), (1, 0.7), (1, 0.5)]
    assert plan_cells(CollectConfig(out="o", seeds=[2])) == [(2, 0.7)]
    with pytest.raises(ValueError, match="--loads or --scale"):
        plan_cells(CollectConfig(out="o", loads=[0.5], scales={"SYN": 1.0}))
    with pytest.raises(ValueError, match=r"--load or --loads, not both \(--load 0.6\)"):
        plan_cells(CollectConfig(out="o", loads=[0.5], load=0.6))
    with pytest.raises(ValueError, match="--loads lists a load twice"):
        plan_cells(CollectConfig(out="o", loads=[0.5, 0.5]))
    base = ["collect", "--workloads", "SYN", "--out", str(tmp_path / "x")]
    for flag, value, message in (
        ("--seeds", "1,1", "argument --seeds: lists a seed twice: '1,1'"),
        ("--seeds", "0,-2", "argument --seeds: '-2' is not an integer >= 0 (in '0,-2')"),
        ("--loads", "0.5,0", "argument --loads: '0' is not a finite number > 0 (in '0.5,0')"),
        ("--loads", "0.5,", "argument --loads: empty item in '0.5,'"),
    ):
        with pytest.raises(SystemExit) as stop:
            main([*base, flag, value])
        assert stop.value.code == 2 and message in capsys.readouterr().err
    assert main([*base, "--loads", "0.5", "--scale", "1"]) == 2
    assert "--loads or --scale" in capsys.readouterr().err
    assert not (tmp_path / "x" / "summary.json").exists()


# ---------------------------------------------------------------- interrupted runs
def test_a_failed_cell_leaves_no_output(tmp_path, shared_data_dir, monkeypatch):
    from pipelines import _collect

    real = _collect.collect_cell

    def second_fails(workloads, seed, load, **kw):
        if seed == 1:
            raise RuntimeError("worker lost")
        return real(workloads, seed, load, **kw)

    monkeypatch.setattr(_collect, "collect_cell", second_fails)
    out = tmp_path / "o"
    with pytest.raises(RuntimeError, match="worker lost"):
        collect_cells(_config(out, shared_data_dir, seeds=[0, 1], loads=[0.5]))
    assert not out.exists()  # nothing was written before every cell finished


def test_interrupted_write_is_marked_incomplete_and_can_be_rerun(
    tmp_path, shared_data_dir, monkeypatch
):
    from pipelines import _collect

    def no_summary(out, summary):
        raise KeyboardInterrupt

    monkeypatch.setattr(_collect, "write_summary", no_summary)
    out = tmp_path / "o"
    cfg = _config(out, shared_data_dir, seeds=[0], loads=[0.5])
    with pytest.raises(KeyboardInterrupt):
        collect_cells(cfg)
    assert (out / "tasks.parquet").is_file() and (out / INCOMPLETE_MARKER).is_file()
    with pytest.raises(OutputError, match="incomplete output set"):
        load_trace(out)
    monkeypatch.undo()
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    collect_cells(cfg)  # an interrupted directory may be written again without --overwrite
    assert not (out / INCOMPLETE_MARKER).exists()
    assert len(load_trace(out)) > 0


# ---------------------------------------------------------------- on Dask
@pytest.fixture(scope="module")
def cluster():
    yield from local_dask_cluster()


def test_local_cluster_writes_the_same_trace(cluster, multi, singles, tmp_path, shared_data_dir):
    address = cluster.scheduler_address
    out = tmp_path / "dask"
    args = [*SMALL, "--seeds", "0,1", "--loads", "0.5,0.7", "--data-dir", str(shared_data_dir)]
    assert main(["collect", *args, "--scheduler", address, "--out", str(out)]) == 0
    for name in ("tasks", "jobs"):
        got = pd.read_parquet(out / f"{name}.parquet")
        assert got.equals(pd.read_parquet(multi / f"{name}.parquet"))
    s = json.loads((out / "summary.json").read_text())
    assert s["engine"] == f"Dask scheduler {address}"
    # one cell (its calibration runs and simulation as sweep tasks) on the cluster too
    one = tmp_path / "one"
    args = [*SMALL, "--seed", "0", "--load", "0.5", "--data-dir", str(shared_data_dir)]
    assert main(["collect", *args, "--scheduler", address, "--out", str(one)]) == 0
    single = singles[0.5]
    assert pd.read_parquet(one / "tasks.parquet").equals(pd.read_parquet(single / "tasks.parquet"))


# ---------------------------------------------------------------- layout="separate"
def test_separate_layout_is_each_workload_alone_on_the_same_cluster(tmp_path, shared_data_dir):
    """Oracle: each workload's rows of a separate-layout trace are the one-workload collect
    of that workload (same seed, same cluster, its own scale), ids prefixed with its cell;
    the summary's scales are each workload's own."""
    scales = {"FB2009": 0.2, "SYN": 0.002}
    sep = _config(tmp_path / "sep", shared_data_dir, layout="separate", scales=scales, seed=2)
    s = collect_cells(sep)
    assert s["layout"] == "separate" and s["scales"] == scales
    assert [c["workloads"] for c in s["cells"]] == [["FB2009"], ["SYN"]]
    both = load_trace(tmp_path / "sep")
    for w, scale in scales.items():
        one = _config(tmp_path / w, shared_data_dir, workloads=[w], scales={w: scale}, seed=2)
        collect_cells(one)
        alone = load_trace(tmp_path / w)
        prefix = cell_key(2, None, w) + "/"
        rows = both.loc[both["workload"] == w].drop(columns=["seed", "load"])
        rows = rows.reset_index(drop=True)
        assert len(rows) > 0
        for col in ("job_id", "task_id"):
            assert rows[col].str.startswith(prefix).all()
            rows[col] = rows[col].str.slice(len(prefix)).astype(alone[col].dtype)
        pd.testing.assert_frame_equal(rows, alone.reset_index(drop=True))


def test_the_api_collects_cells_as_the_command_does(tmp_path, shared_data_dir):
    """pipelines.collect_trace hands seeds/loads/layout to collect_cells (it used to run one
    cell and ignore them)."""
    import pipelines

    cfg = _config(
        tmp_path / "api", shared_data_dir, layout="separate", scales={"SYN": 0.002, "FB2009": 0.2}
    )
    s = pipelines.collect_trace(cfg)
    assert s["layout"] == "separate" and len(s["cells"]) == 2


def test_an_unknown_layout_is_named(tmp_path, shared_data_dir):
    cfg = _config(tmp_path / "bad", shared_data_dir, layout="split")
    with pytest.raises(ValueError, match="--layout.*'split'"):
        collect_cells(cfg)
    assert not (tmp_path / "bad" / "summary.json").exists()
