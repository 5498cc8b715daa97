"""``straggler train`` end to end on a tiny trace: study, MLflow runs, registry, pyfunc, REST.

One module-scoped training run (grid ``small``, whose f0nl points the tests count from the
grid file) feeds most tests; the
resume test runs its own partial study, then continues it in two processes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_pipelines_helpers import make_trace

from pipelines._dataset import label_stragglers, validate_trace
from pipelines._grid import grid_points, load_grid, variant_grid
from pipelines._metrics import binary_metrics
from pipelines._splits import fraction_split
from pipelines.cli import main


def _counters(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith("c_")]


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("trace")
    make_trace(n_nodes=4, n_jobs=60, seed=5).to_parquet(d / "tasks.parquet")
    return d


@pytest.fixture(scope="module")
def trained(trace_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("train")
    args = ["train", "--traces", str(trace_dir), "--out", str(out), "--grid", "small"]
    assert main(args) == 0
    return out


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def _study(out: Path, name: str):
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    storage = JournalStorage(JournalFileBackend(str(out / "optuna-journal.log")))
    return optuna.load_study(study_name=name, storage=storage)


@pytest.mark.slow
def test_summary_and_test_metrics_recomputed(trained, trace_dir):
    from mtl import load_predictor

    s = _summary(trained)
    assert s["status"] == "complete"
    space = variant_grid(load_grid("small"), ("w0", "node", "workload"))
    assert s["best_params"] in grid_points(space)
    # Oracle: recompute the test metrics from the saved safe artifact and our own split.
    lt = label_stragglers(validate_trace(pd.read_parquet(trace_dir / "tasks.parquet")))
    split = fraction_split(lt.frame, 0.66, 0.25)
    pred = load_predictor(trained / "predictor")
    test = lt.frame.iloc[split.test]
    p = pred.predict_proba(test)
    assert pred.threshold == pytest.approx(s["threshold"]["value"])
    want = binary_metrics(test["straggler"].astype(int), p, s["threshold"]["value"])
    for k in ("accuracy", "precision", "recall", "f1", "roc_auc", "rows", "majority_accuracy"):
        assert s["test"][k] == pytest.approx(want[k]), k
    for name in ("per_pair_metrics.csv", "accuracy_by_fraction.csv", "trials.csv"):
        assert len(pd.read_csv(trained / name)) > 0
    for name in ("confusion_matrix.png", "accuracy_vs_data.png"):
        assert (trained / name).read_bytes()[:4] == b"\x89PNG"
    assert s["data_hash"] and s["split"]["test_rows"] == len(split.test)


@pytest.mark.slow
def test_study_has_each_point_once_and_mlflow_nested_runs(trained):
    from mlflow import MlflowClient
    from optuna.trial import TrialState

    s = _summary(trained)
    study = _study(trained, s["study"]["name"])
    done = study.get_trials(states=(TrialState.COMPLETE,))
    keys = {tuple(sorted(t.params.items())) for t in done}
    n_points = len(grid_points(variant_grid(load_grid("small"), ("w0", "node", "workload"))))
    assert len(done) == len(keys) == s["study"]["grid_points"] == n_points
    client = MlflowClient(s["tracking_uri"])
    parent = client.get_run(s["mlflow_run_id"])
    assert parent.data.params["data_hash"] == s["data_hash"]
    assert parent.data.params["variant"] == "f0nl"
    assert float(parent.data.metrics["test_accuracy"]) == pytest.approx(s["test"]["accuracy"])
    # every accuracy comes with its baseline, in the summary and in the parent run
    m = parent.data.metrics
    assert m["baseline_accuracy"] == pytest.approx(s["test"]["majority_accuracy"])
    assert m["baseline_pr_auc"] == pytest.approx(s["test"]["positive_rate"])
    assert m["baseline_roc_auc"] == 0.5 and "test_balanced_accuracy" in m
    # the labelled trace is the run's training dataset input, identified by our content hash
    (inp,) = parent.inputs.dataset_inputs
    assert {t.key: t.value for t in inp.tags}["mlflow.data.context"] == "training"
    assert inp.dataset.digest == s["data_hash"][:36]
    assert json.loads(inp.dataset.profile)["num_rows"] == s["data"]["rows"]
    children = client.search_runs(
        [parent.info.experiment_id],
        filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'",
    )
    assert len(children) == n_points
    for child in children:
        assert {"lambda0", "threshold", "beta", "data_hash", "split"} <= set(child.data.params)
        assert {"val_accuracy", "val_precision", "val_recall", "val_f1", "val_roc_auc"} <= set(
            child.data.metrics
        )
    arts = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"per_pair_metrics.csv", "confusion_matrix.png", "summary.json"} <= arts


@pytest.mark.slow
def test_registry_alias_and_pyfunc_roundtrip(trained, trace_dir, monkeypatch, request):
    import mlflow

    from mtl import load_predictor

    s = _summary(trained)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", s["tracking_uri"])
    previous = mlflow.get_tracking_uri()
    request.addfinalizer(lambda: mlflow.set_tracking_uri(previous))
    mlflow.set_tracking_uri(s["tracking_uri"])
    uri = "models:/straggler-predictor@champion"
    assert s["model"]["registered_uri"] == uri
    frame = pd.read_parquet(trace_dir / "tasks.parquet")
    cols = ["node", "workload", *_counters(frame)]
    local = load_predictor(trained / "predictor").predict_proba(frame[cols])
    via_registry = load_predictor(uri).predict_proba(frame[cols])
    np.testing.assert_array_equal(via_registry, local)
    pyfunc = mlflow.pyfunc.load_model(uri)
    out = pyfunc.predict(frame[cols].head(25))
    np.testing.assert_allclose(out["straggler_probability"].to_numpy(), local[:25], rtol=1e-12)
    sig = pyfunc.metadata.get_input_schema().to_dict()
    assert sig[0] == {"type": "string", "name": "node", "required": True}
    assert all(c["type"] == "double" for c in sig[2:])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_rest_serving(trained, trace_dir):
    s = _summary(trained)
    port = _free_port()
    bindir = str(Path(sys.executable).parent)  # mlflow runs `uvicorn` through bash: PATH
    env = {**os.environ, "MLFLOW_TRACKING_URI": s["tracking_uri"]}
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    cmd = [os.path.join(bindir, "mlflow"), "models", "serve", "-m", s["model"]["registered_uri"]]
    cmd += ["--env-manager", "local", "-h", "127.0.0.1", "-p", str(port)]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                log = proc.stdout.read().decode(errors="replace")[-3000:]
                pytest.fail(f"mlflow models serve exited with {proc.returncode}:\n{log}")
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            assert time.monotonic() < deadline, "server not healthy within 120 s"
            time.sleep(0.5)
        frame = pd.read_parquet(trace_dir / "tasks.parquet").head(7)
        cols = ["node", "workload", *_counters(frame)]
        body = json.dumps({"dataframe_split": frame[cols].to_dict(orient="split", index=False)})
        req = urllib.request.Request(
            f"{base}/invocations",
            data=body.encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            got = json.loads(r.read())["predictions"]
        from mtl import load_predictor

        local = load_predictor(trained / "predictor").predict_proba(frame[cols])
        np.testing.assert_allclose([g["straggler_probability"] for g in got], local, rtol=1e-9)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        proc.stdout.close()


@pytest.mark.slow
def test_resume_after_interruption_in_parallel(trace_dir, trained, tmp_path):
    from optuna.trial import TrialState

    uri = _summary(trained)["tracking_uri"]  # reuse a migrated MLflow database: faster
    args = ["train", "--traces", str(trace_dir), "--out", str(tmp_path), "--grid", "small"]
    args += ["--tracking-uri", uri, "--experiment", "resume", "--no-register"]
    assert main([*args, "--max-trials", "1"]) == 0
    s1 = _summary(tmp_path)
    assert s1["status"] == "incomplete" and s1["study"]["points_completed"] == 1
    study = _study(tmp_path, s1["study"]["name"])
    first = study.get_trials(states=(TrialState.COMPLETE,))[0]
    # A worker that popped a queued point and was killed leaves a RUNNING trial behind.
    orphan = study.ask()
    assert orphan.number != first.number
    assert main([*args, "--jobs", "2"]) == 0
    s2 = _summary(tmp_path)
    assert s2["status"] == "complete"
    assert s2["study"]["stale"] == 1 and s2["study"]["completed"] == 1
    n_points = len(grid_points(variant_grid(load_grid("small"), ("w0", "node", "workload"))))
    assert n_points >= 3  # a finished point, an orphan and at least one never started
    # only the missing points run, none repeated
    assert s2["study"]["trials_run"] == n_points - 1
    done = study.get_trials(states=(TrialState.COMPLETE,))
    keys = [tuple(sorted(t.params.items())) for t in done]
    assert len(keys) == len(set(keys)) == n_points
    assert first.number in {t.number for t in done}  # the finished trial was kept, not redone
    assert study.get_trials(states=(TrialState.RUNNING,)) == []


def test_bad_inputs(trace_dir, tmp_path, capsys):
    base = ["train", "--traces", str(trace_dir), "--out", str(tmp_path)]
    assert main(["train", "--traces", str(tmp_path / "none"), "--out", str(tmp_path)]) == 2
    assert "no trace at" in capsys.readouterr().err
    bad = tmp_path / "grid.json"
    bad.write_text(json.dumps({"lambda0": [1.0, -2]}))
    assert main([*base, "--grid", str(bad)]) == 2
    assert "'lambda0' value -2 is not a positive number" in capsys.readouterr().err
    assert main([*base, "--grid", "huge"]) == 2
    assert "not 'default', 'small' or an existing file" in capsys.readouterr().err
    assert main([*base, "--fraction", "0.01"]) == 2
    assert "too little data for --fraction=0.01" in capsys.readouterr().err
    one = make_trace(n_nodes=2, n_jobs=20, seed=1)
    syn = one.workload == "SYN"
    one.loc[syn, "duration"] = 5.0  # every task as long as its job's median: no straggler
    one.loc[syn, "end_time"] = one.loc[syn, "launch_time"] + 5.0
    (tmp_path / "one").mkdir()
    one.to_parquet(tmp_path / "one" / "tasks.parquet")
    assert main(["train", "--traces", str(tmp_path / "one"), "--out", str(tmp_path)]) == 2
    assert "workload 'SYN' has a single class" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--variant", "f9"])


def _one_point_study(tmp_path: Path, space: dict, seed: int, name: str):
    """A study context over a tiny labelled trace split into fit/val parts (variant f0)."""
    from pipelines._study import StudyContext

    lt = label_stragglers(validate_trace(make_trace(n_nodes=2, n_jobs=20, seed=seed)))
    split = fraction_split(lt.frame, 0.66, 0.25)
    part = np.full(len(lt.frame), "", dtype=object)
    part[split.fit], part[split.val] = "fit", "val"
    keep = np.sort(np.concatenate([split.fit, split.val]))
    cols = ["node", "workload", *lt.counters, "straggler"]
    lt.frame.assign(part=part).iloc[keep][[*cols, "part"]].to_parquet(tmp_path / "d.parquet")
    return StudyContext(
        journal=str(tmp_path / "j.log"),
        study_name=name,
        space=space,
        data_path=str(tmp_path / "d.parquet"),
        counters=lt.counters,
        variant="f0",
        metric="accuracy",
        cache_dir=str(tmp_path / "cache"),
    )


def test_sampler_created_trial_is_pruned_without_fitting(tmp_path):
    """GridSampler's duplicate-point caveat: a trial not popped from our queue never fits."""
    from optuna.trial import TrialState

    from pipelines._study import GridObjective, open_study, prepare_study

    space = {"lambda0": [1.0], "threshold": [0.5]}
    ctx = _one_point_study(tmp_path, space, seed=2, name="s")
    study = open_study(ctx)
    study.optimize(GridObjective(ctx), n_trials=1)  # queue empty: the sampler makes the trial
    t = study.trials[-1]
    assert t.state == TrialState.PRUNED and t.user_attrs["skipped"] == "queue empty"
    assert not (tmp_path / "cache").exists()  # nothing was fitted
    assert prepare_study(ctx, grid_points(space))["enqueued"] == 1
    study.optimize(GridObjective(ctx), n_trials=1)
    assert study.trials[-1].state == TrialState.COMPLETE
    assert prepare_study(ctx, grid_points(space)) == {
        "completed": 1,
        "stale": 0,
        "enqueued": 0,
        "waiting": 0,
    }


def test_one_point_grid_completes(tmp_path):
    """Optuna's GridSampler.after_trial raises KeyError('grid_id') for an enqueued trial when a
    single grid point is left; our queue-driven sampler must finish a one-point grid."""
    from optuna.trial import TrialState

    from pipelines._study import open_study, prepare_study, run_worker

    space = {"lambda0": [1.0], "threshold": [0.5]}
    ctx = _one_point_study(tmp_path, space, seed=3, name="one")
    assert prepare_study(ctx, grid_points(space))["enqueued"] == 1
    assert run_worker(ctx) == 1
    states = [t.state for t in open_study(ctx).trials]
    assert states == [TrialState.COMPLETE]


@pytest.mark.slow
def test_selection_metric_and_validation_threshold(trained, trace_dir):
    """Default selection is ROC-AUC; the threshold maximises balanced accuracy on the validation
    rows of the chosen fit (oracle: refit that fit, try every split of the validation rows)."""
    from pipelines._study import make_estimator

    s = _summary(trained)
    assert s["config"]["metric"] == "roc_auc"
    assert s["config"]["threshold_rule"] == "balanced_accuracy"
    lt = label_stragglers(validate_trace(pd.read_parquet(trace_dir / "tasks.parquet")))
    split = fraction_split(lt.frame, 0.66, 0.25)
    cols = ["node", "workload", *lt.counters]
    y = lt.frame["straggler"].to_numpy(dtype=np.int64)
    fit = lt.frame.iloc[split.fit]
    model = make_estimator("f0nl", s["best_params"], 0).fit(fit[cols], y[split.fit])
    p = model.predict_proba(lt.frame.iloc[split.val][cols])[:, 1]
    yv = y[split.val]
    thr = s["threshold"]["value"]
    got = binary_metrics(yv, p, thr)["balanced_accuracy"]
    assert got == pytest.approx(s["threshold"]["validation_value"])
    assert got == pytest.approx(s["validation"]["balanced_accuracy"])
    every = [binary_metrics(yv, p, t)["balanced_accuracy"] for t in np.r_[p, p - 1e-9, 1e-4]]
    assert got >= np.nanmax(every) - 1e-12


@pytest.mark.slow
def test_rerun_closes_a_parent_a_kill_left_running(trace_dir, tmp_path):
    """A killed train leaves its parent run RUNNING in the run directory's own store; the next
    train of that directory marks it KILLED (and only it), and reconciles the trial log."""
    from mlflow import MlflowClient

    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"lambda0": [1.0], "nu": [1.0], "threshold": [0.5]}))
    out = tmp_path / "run"
    args = ["train", "--traces", str(trace_dir), "--out", str(out), "--grid", str(grid)]
    args += ["--no-register"]
    assert main(args) == 0
    s1 = _summary(out)
    uri = s1["tracking_uri"]
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("straggler-train").experiment_id
    orphan = client.create_run(exp, run_name="killed-parent").info.run_id
    assert main([*args, "--overwrite"]) == 0
    s2 = _summary(out)
    assert s2["closed_orphaned_runs"] == [orphan]
    assert client.get_run(orphan).info.status == "KILLED"
    assert s2["study"]["trials_reconciled"] == 0  # the callback had logged every trial


@pytest.mark.slow
def test_registered_model_loads_from_its_store_and_after_the_run_directory_moved(
    trace_dir, tmp_path, monkeypatch
):
    """``load_predictor("models:/...", tracking_uri=...)`` resolves the model in that store
    (registry included; no ./mlflow.db appears in the working directory), and still finds it
    after the run directory was moved, from the store's own ``mlartifacts/``."""
    import mtl

    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"lambda0": [1.0], "nu": [1.0], "threshold": [0.5]}))
    run = tmp_path / "run"
    assert main(["train", "--traces", str(trace_dir), "--out", str(run), "--grid", str(grid)]) == 0
    want = mtl.load_predictor(run / "predictor")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    frame = pd.read_parquet(trace_dir / "tasks.parquet").head(20)
    for where in (run, tmp_path / "moved"):
        if where != run:
            run.rename(where)
        uri = f"sqlite:///{where / 'mlflow.db'}"
        for ref in ("models:/straggler-predictor@champion", "models:/straggler-predictor/1"):
            got = mtl.load_predictor(ref, tracking_uri=uri)
            assert np.array_equal(got.predict_proba(frame), want.predict_proba(frame))
    assert not (cwd / "mlflow.db").exists()
    with pytest.raises(mtl.ArtifactError, match="nope"):
        mtl.load_predictor("models:/nope@champion", tracking_uri=uri)


@pytest.mark.slow
def test_rerun_with_another_grid_starts_its_own_study(trace_dir, trained, tmp_path):
    """Optuna cannot change a study's parameter space: a second grid in the same --out must
    not resume the first grid's study (every trial used to fail)."""
    uri = _summary(trained)["tracking_uri"]
    args = ["train", "--traces", str(trace_dir), "--out", str(tmp_path / "run")]
    args += ["--tracking-uri", uri, "--experiment", "regrid", "--no-register"]
    grids = []
    for i, nu in enumerate(([1.0, 10.0], [100.0])):
        g = tmp_path / f"grid{i}.json"
        g.write_text(json.dumps({"lambda0": [1.0], "nu": nu, "omega": [1.0], "threshold": [0.5]}))
        grids.append(g)
    assert main([*args, "--grid", str(grids[0])]) == 0
    first = _summary(tmp_path / "run")["study"]["name"]
    assert main([*args, "--grid", str(grids[1]), "--overwrite"]) == 0
    s = _summary(tmp_path / "run")
    assert s["status"] == "complete" and s["study"]["name"] != first
    assert s["best_params"]["nu"] == 100.0


def test_the_study_data_file_is_written_under_a_fresh_temporary_name(trace_dir, tmp_path):
    # work/<study>.parquet went through the fixed name work/<study>.tmp, which a second writer
    # (or a leftover) shared; now each write has its own temporary name
    first = tmp_path / "a"
    args = ["train", "--traces", str(trace_dir), "--grid", "small", "--max-trials", "1"]
    assert main([*args, "--out", str(first)]) == 0
    (data,) = (first / "work").glob("*.parquet")
    second = tmp_path / "b"
    (second / "work").mkdir(parents=True)
    other = second / "work" / f"{data.stem}.tmp"
    other.write_text("another writer's file\n")
    assert main([*args, "--out", str(second)]) == 0
    assert other.read_text() == "another writer's file\n"
    pd.testing.assert_frame_equal(
        pd.read_parquet(second / "work" / data.name), pd.read_parquet(data)
    )
    assert sorted(p.name for p in (second / "work").iterdir() if p.suffix == ".tmp") == [other.name]
