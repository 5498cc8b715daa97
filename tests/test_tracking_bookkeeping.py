"""MLflow bookkeeping under kills and reruns (issue 16): trials a kill lost are logged on
reconciliation, half-logged runs replaced, orphaned parents closed as KILLED, and a rerun
with an identical predictor registers no new model version. One SQLite store per module
(creating one costs seconds)."""

from __future__ import annotations

import pytest

from mtl import GroupedMTLSVC, make_grouped_classification


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


@pytest.mark.slow
def test_rerun_does_not_register_the_same_predictor_again(store, tmp_path, request):
    """Documented handling: the same predictor logged twice keeps one model version."""
    import mlflow

    from mtl import Predictor
    from pipelines._tracking import ensure_experiment, log_and_register

    uri = store
    previous = mlflow.get_tracking_uri()
    request.addfinalizer(lambda: mlflow.set_tracking_uri(previous))
    mlflow.set_tracking_uri(uri)
    exp = ensure_experiment(uri, "rerun")
    X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
    one = Predictor.from_estimator(GroupedMTLSVC().fit(X, y)).save(tmp_path / "one")
    two = Predictor.from_estimator(GroupedMTLSVC(lambda0=3.0).fit(X, y)).save(tmp_path / "two")
    counters = ["c_0", "c_1", "c_2"]
    got = []
    for art in (one, one, two):
        with mlflow.start_run(experiment_id=exp):
            got.append(log_and_register(art, counters, uri, model_name="m"))
    assert [g["version"] for g in got] == ["1", "1", "2"]
    assert [g["reused"] for g in got] == ["false", "true", "false"]
    versions = mlflow.MlflowClient(uri).search_model_versions("name='m'")
    assert len(versions) == 2


@pytest.mark.slow
def test_mlflow_reconciliation_after_kills(store):
    """A trial Optuna completed but the callback never logged (killed in between) is logged
    by ``reconcile``; a half-logged run is replaced; repeating changes nothing; a parent left
    RUNNING by a killed run is closed as KILLED."""
    import optuna
    from mlflow import MlflowClient

    from pipelines._tracking import MlflowTrialCallback, close_orphaned_runs, ensure_experiment

    uri = store
    exp = ensure_experiment(uri, "kills")
    client = MlflowClient(uri)
    orphan = client.create_run(exp, run_name="killed-parent").info.run_id
    parent = client.create_run(exp, run_name="parent").info.run_id
    callback = MlflowTrialCallback(uri, exp, parent, {"variant": "f0"})
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name="s")
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    callback(study, study.trials[0])  # logged as usual
    half = client.create_run(exp, tags={"optuna.study": "s", "optuna.trial": "1"}).info.run_id
    callback(study, study.trials[0])  # idempotent: already logged
    assert callback.reconcile(study) == 2  # trial 1 (half-logged) and trial 2 (lost)
    assert callback.reconcile(study) == 0
    runs = client.search_runs([exp], filter_string="tags.`optuna.study` = 's'")
    assert sorted(r.data.tags["optuna.trial"] for r in runs) == ["0", "1", "2"]
    assert all(r.info.status == "FINISHED" for r in runs) and half not in {
        r.info.run_id for r in runs
    }
    assert close_orphaned_runs(uri, exp, keep_run_id=parent) == [orphan]
    assert client.get_run(orphan).info.status == "KILLED"
    assert client.get_run(parent).info.status == "RUNNING"
