"""Sweeps on Dask (:mod:`pipelines._sweep`): the same tables as the local path, a worker killed
mid-sweep costs only its own task, the Optuna grid on Dask, and the missing-Dask message.

One ``LocalCluster`` of 2 worker processes on 127.0.0.1 (no dashboard), started and closed by
a module fixture; the Dask tests skip when ``dask.distributed`` is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import local_dask_cluster

from pipelines._sweep import (
    INSTALL_HINT,
    SCHEDULER_ENV,
    Engine,
    SweepTask,
    run_sweep,
    task_seed,
)

ROOT = Path(__file__).resolve().parents[1]

#: A lost worker that never comes back on a loaded 2-core CI machine must fail its test, not
#: hang the suite (pytest-timeout; the thread method works under xdist and with Dask's threads).
pytestmark = pytest.mark.timeout(300, method="thread")


# ---------------------------------------------------------------- tasks (module level: picklable)
def draw(root: int, key: str, n: int = 5) -> list[float]:
    """A task whose randomness comes from its identity only."""
    return np.random.default_rng(task_seed(root, key)).random(n).tolist()


def die_once(marker: str, root: int, key: str) -> list[float]:
    """Kill this worker process the first time any worker runs it (marker file), then draw."""
    path = Path(marker)
    if not path.exists():
        path.write_text(str(os.getpid()))
        os._exit(17)
    return draw(root, key)


def _sweep(root: int = 7, n: int = 12) -> list[SweepTask]:
    return [SweepTask(f"seed={i}", draw, (root, f"seed={i}")) for i in range(n)]


# ---------------------------------------------------------------- the cluster
@pytest.fixture(scope="module")
def cluster():
    yield from local_dask_cluster()


@pytest.fixture(scope="module")
def engine(cluster) -> Engine:
    return Engine(scheduler=cluster.scheduler_address)


# ---------------------------------------------------------------- no Dask needed
def test_task_seed_depends_on_identity_only():
    seeds = [task_seed(0, f"seed={i}") for i in range(200)]
    assert len(set(seeds)) == 200
    assert seeds == [task_seed(0, f"seed={i}") for i in range(200)]
    assert task_seed(1, "seed=0") != seeds[0]


def test_engine_options_and_environment():
    assert not Engine.resolve(None, None, environ={}).uses_dask
    assert Engine.resolve(None, None, {SCHEDULER_ENV: "tcp://h:1"}).scheduler == "tcp://h:1"
    # an explicit option wins over the environment
    assert Engine.resolve(3, None, {SCHEDULER_ENV: "tcp://h:1"}).workers == 3
    with pytest.raises(ValueError, match="--scheduler must be an address"):
        Engine(scheduler="localhost")
    with pytest.raises(ValueError, match="give one of them"):
        Engine(workers=2, scheduler="tcp://h:1")
    with pytest.raises(ValueError, match="appears twice"):
        run_sweep([SweepTask("a", abs, (1,)), SweepTask("a", abs, (2,))], progress=False)


def test_local_sweep_imports_no_dask():
    code = (
        "import sys\n"
        "from pipelines._sweep import Engine, SweepTask, run_sweep\n"
        "from pipelines.cli import build_parser\n"
        "a = build_parser().parse_args(['compare', '--traces', 't', '--out', 'o'])\n"
        "from pipelines.commands._engine_options import engine_from_args\n"
        "assert not engine_from_args(a, environ={}).uses_dask\n"
        "assert run_sweep([SweepTask('x', abs, (-2,))], progress=False) == {'x': 2}\n"
        "assert not {'dask', 'distributed'} & set(sys.modules), sorted(sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != SCHEDULER_ENV}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env)


def test_missing_dask_says_how_to_install(monkeypatch, tmp_path, capsys):
    from pipelines.cli import main

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    args = ["compare", "--traces", str(tmp_path), "--out", str(tmp_path / "o"), "--workers", "2"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert INSTALL_HINT in err and "Dask is not installed" in err
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://127.0.0.1:1")
    assert main(["compare", "--traces", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert INSTALL_HINT in capsys.readouterr().err


# ---------------------------------------------------------------- on the cluster
def test_sweep_identical_on_local_and_dask(engine):
    local = run_sweep(_sweep(), progress=False)
    on_dask = run_sweep(_sweep(), engine, progress=False)
    assert list(on_dask) == list(local)  # results in task order, not completion order
    assert on_dask == local


def test_dependent_task_gets_upstream_result(engine):
    def total(x, upstream=None):
        return x + sum(upstream.values()) if upstream else x

    tasks = [
        SweepTask("a", total, (1,)),
        SweepTask("b", total, (2,)),
        SweepTask("c", total, (10,), after=("a", "b")),
    ]
    assert run_sweep(tasks, engine, progress=False) == {"a": 1, "b": 2, "c": 13}


def test_worker_killed_mid_sweep_costs_only_its_task(cluster, engine, tmp_path):
    import distributed

    marker = tmp_path / "killed-once"
    tasks = _sweep()
    tasks[5] = SweepTask("seed=5", die_once, (str(marker), 7, "seed=5"))
    seen: list[str] = []
    got = run_sweep(tasks, engine, progress=False, on_result=lambda k, _v: seen.append(k))
    assert marker.exists()  # a worker really died
    assert got == run_sweep(_sweep(), progress=False)
    assert sorted(seen) == sorted(t.key for t in tasks)  # each result reported once
    with distributed.Client(cluster) as c:  # the nanny restarted the dead worker
        c.wait_for_workers(2, timeout=30)


# ---------------------------------------------------------------- compare on Dask
@pytest.fixture(scope="module")
def tiny_trace(tmp_path_factory):
    from pipelines._collect import collect

    out = tmp_path_factory.mktemp("trace")
    with pytest.warns(UserWarning):  # the tiny cluster saturates; fine for equality
        collect(out, ["SYN"], nodes=6, hours=0.3, seed=0, scales={"SYN": 0.05})
    return out


def _compare(trace, out, engine=None):
    from pipelines._compare import CompareConfig, run_compare

    cfg = CompareConfig(traces=str(trace), out=str(out), workloads=["SYN"], seeds=2, oracle=False)
    return run_compare(cfg, engine)


def test_compare_tables_identical_on_dask(tiny_trace, engine, tmp_path):
    a = _compare(tiny_trace, tmp_path / "local")
    b = _compare(tiny_trace, tmp_path / "dask", engine)
    for name in ("table3.csv", "table4.csv", "tables.md"):
        assert (tmp_path / "local" / name).read_text() == (tmp_path / "dask" / name).read_text()
    strip = ("wall_seconds",)
    runs_a = [{k: v for k, v in r.items() if k not in strip} for r in a["runs"]]
    runs_b = [{k: v for k, v in r.items() if k not in strip} for r in b["runs"]]
    assert json.dumps(runs_a, sort_keys=True) == json.dumps(runs_b, sort_keys=True)
    # the control ran at the MTL run's refusal rate of the same seed, on both engines
    mtl = {r["seed_index"]: r for r in b["runs"] if r["policy"] == "mtl"}
    for r in b["runs"]:
        if r["policy"] == "random":
            want = mtl[r["seed_index"]]["placement_stats"]
            assert want and r["refusal_rate"] is not None
    assert b["engine"].startswith("Dask scheduler")


# ---------------------------------------------------------------- evaluate on Dask
def test_evaluate_fits_identical_on_dask(train_trace, engine):
    from pipelines._dataset import label_stragglers, load_trace
    from pipelines._evaluate import table1

    lab = label_stragglers(load_trace(train_trace))
    args = (lab.frame, lab.counters, (0.3, 0.66), ("wrangler", "f0nl"))
    local = table1(*args).drop(columns=["fit_seconds"], errors="ignore")
    on_dask = table1(*args, engine=engine).drop(columns=["fit_seconds"], errors="ignore")
    pd.testing.assert_frame_equal(local, on_dask)


# ---------------------------------------------------------------- Optuna on Dask
@pytest.fixture(scope="module")
def train_trace(tmp_path_factory) -> Path:
    from test_pipelines_helpers import make_trace

    d = tmp_path_factory.mktemp("train-trace")
    make_trace(n_nodes=4, n_jobs=60, seed=5).to_parquet(d / "tasks.parquet")
    return d


def _train(trace: Path, out: Path, scheduler: str | None = None, **kw) -> dict:
    from pipelines._train import TrainConfig, run_training

    cfg = TrainConfig(
        traces=str(trace),
        out=str(out),
        grid="small",
        register=False,
        curve_fractions=(0.3,),
        scheduler=scheduler,
        **kw,
    )
    return run_training(cfg)


@pytest.fixture(scope="module")
def study_inputs(train_trace, tmp_path_factory):
    from mtl import VARIANTS
    from pipelines._dataset import label_stragglers, load_trace
    from pipelines._grid import grid_points, load_grid, variant_grid
    from pipelines._splits import fraction_split

    lab = label_stragglers(load_trace(train_trace))
    split = fraction_split(lab.frame, 0.66, 0.25, 0.66)
    part = np.full(len(lab.frame), "", dtype=object)
    part[split.fit], part[split.val] = "fit", "val"
    data = lab.frame.assign(part=part)[part != ""]
    path = tmp_path_factory.mktemp("study") / "data.parquet"
    data[["node", "workload", *lab.counters, "straggler", "part"]].to_parquet(path)
    space = variant_grid(load_grid("small"), VARIANTS["f0nl"])
    return path, lab.counters, space, grid_points(space)


def _study_table(inputs, d: Path, engine=None, orphan: bool = False) -> pd.DataFrame:
    from pipelines._study import (
        StudyContext,
        completed_trials,
        prepare_study,
        run_study_dask,
        run_worker,
    )

    path, counters, space, points = inputs
    d.mkdir(parents=True)
    ctx = StudyContext(
        journal=str(d / "journal.log"),
        study_name="s",
        space=space,
        data_path=str(path),
        counters=counters,
        variant="f0nl",
        metric="accuracy",
        cache_dir=str(d / "cache"),
    )
    prepare_study(ctx, points)
    if orphan:  # a trial popped by a worker that then died: left RUNNING in the journal
        from pipelines._study import open_study

        open_study(ctx).ask()
    logged: list[int] = []
    if engine is None:
        ran = run_worker(ctx)
    else:
        ran = run_study_dask(ctx, points, engine, callbacks=[lambda _s, t: logged.append(t.number)])
        assert sorted(logged) == sorted(completed_trials(ctx)["trial"])  # each trial once
    assert ran == len(points)
    keys = list(space)
    t = completed_trials(ctx)
    return t[[*keys, "value", "accuracy", "f1", "roc_auc"]].sort_values(keys, ignore_index=True)


def test_optuna_grid_on_dask_matches_local(study_inputs, engine, tmp_path):
    local = _study_table(study_inputs, tmp_path / "local")
    on_dask = _study_table(study_inputs, tmp_path / "dask", engine)
    assert len(local) == len(study_inputs[3])
    pd.testing.assert_frame_equal(local, on_dask)


def test_optuna_trial_of_a_dead_worker_is_run_again(study_inputs, engine, tmp_path):
    local = _study_table(study_inputs, tmp_path / "local")
    on_dask = _study_table(study_inputs, tmp_path / "dask", engine, orphan=True)
    pd.testing.assert_frame_equal(local, on_dask)


def test_train_on_dask_resumes_and_logs_every_trial_once(train_trace, cluster, tmp_path):
    from mlflow import MlflowClient

    out = tmp_path / "resume"
    first = _train(train_trace, out, scheduler=cluster.scheduler_address, max_trials=2)
    assert first["status"] == "incomplete" and first["study"]["points_completed"] == 2
    second = _train(train_trace, out, scheduler=cluster.scheduler_address)
    assert second["status"] == "complete"
    grid = second["study"]["grid_points"]
    assert second["study"]["trials_run"] == grid - 2
    # two workers finished trials at the same time; the client logged each exactly once
    client = MlflowClient(second["tracking_uri"])
    exp = client.get_run(second["mlflow_run_id"]).info.experiment_id
    kids = [
        r
        for r in client.search_runs([exp], max_results=1000)
        if "mlflow.parentRunId" in r.data.tags
    ]
    assert len(kids) == grid
    assert len({r.data.tags["grid_point"] for r in kids}) == grid
