"""MLflow tracking for ``straggler train``: one parent run, one nested run per Optuna trial.

The tracking URI defaults to ``sqlite:///<out>/mlflow.db`` (MLflow 3's file store is
deprecated); when this module creates the experiment on a SQLite store it puts the artifacts
next to the database (``<db dir>/mlartifacts``), never in ``./mlruns``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

#: Name under which ``straggler train`` registers its final model.
MODEL_NAME = "straggler-predictor"
#: Registry alias of the newest trained model.
MODEL_ALIAS = "champion"


def default_tracking_uri(out: str | Path) -> str:
    """``sqlite:///<absolute out>/mlflow.db``.

    Examples
    --------
    >>> default_tracking_uri("/tmp/run")
    'sqlite:////tmp/run/mlflow.db'
    """
    return f"sqlite:///{(Path(out).resolve() / 'mlflow.db').as_posix()}"


def _sqlite_path(uri: str) -> Path | None:
    return Path(uri[len("sqlite:///") :]) if uri.startswith("sqlite:///") else None


class TrackingStoreError(ValueError):
    """The MLflow tracking store cannot be opened (corrupt or truncated database, bad URI)."""


def ensure_experiment(tracking_uri: str, name: str) -> str:
    """Id of experiment ``name`` on ``tracking_uri``, created if needed.

    A store that cannot be opened (e.g. a truncated ``mlflow.db``) raises
    :class:`TrackingStoreError` naming the URI and the first line of the cause.
    """
    from mlflow import MlflowClient

    try:
        client = MlflowClient(tracking_uri)
        exp = client.get_experiment_by_name(name)
    except Exception as exc:  # sqlalchemy / MlflowException / OSError: all mean "unusable"
        first = (getattr(exc, "message", None) or str(exc)).strip().splitlines()
        raise TrackingStoreError(
            f"--tracking-uri {tracking_uri}: cannot open the MLflow tracking store "
            f"({type(exc).__name__}: {first[0] if first else ''})"
        ) from exc
    if exp is not None:
        return exp.experiment_id
    db = _sqlite_path(tracking_uri)
    location = (db.parent / "mlartifacts").resolve().as_uri() if db is not None else None
    return _retry(lambda: client.create_experiment(name, artifact_location=location))


def _retry(fn, attempts: int = 8, pause: float = 0.25):
    """Call ``fn``, retrying when SQLite reports a locked database (parallel workers)."""
    for i in range(attempts):
        try:
            return fn()
        except Exception as exc:  # MlflowException wraps sqlalchemy's OperationalError
            if "locked" not in str(exc).lower() or i == attempts - 1:
                raise
            time.sleep(pause * (i + 1))
    return None  # pragma: no cover


def _finite_metrics(values: dict[str, Any], prefix: str = "") -> dict[str, float]:
    out = {}
    for k, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if math.isfinite(float(v)):
            out[prefix + k] = float(v)
    return out


class MlflowTrialCallback:
    """Optuna callback: log each completed trial as a nested MLflow run of the parent run.

    Our own small replacement for optuna-integration's deprecated ``MLflowCallback``; it
    uses :class:`mlflow.MlflowClient` only (no fluent active-run state), so it also works in
    the worker processes of a parallel study.

    Parameters
    ----------
    tracking_uri, experiment_id, parent_run_id : str
    static_params : dict
        Logged with every trial (variant, beta, split, data hash, ...).
    metric_prefix : str
        Prefix of the trial metrics (``val_``: they are validation metrics).
    """

    def __init__(
        self,
        tracking_uri: str,
        experiment_id: str,
        parent_run_id: str,
        static_params: dict[str, Any],
        metric_prefix: str = "val_",
    ):
        self.tracking_uri = tracking_uri
        self.experiment_id = experiment_id
        self.parent_run_id = parent_run_id
        self.static_params = dict(static_params)
        self.metric_prefix = metric_prefix

    def __call__(self, study, trial) -> None:
        """Log ``trial`` if it completed and is not logged yet (idempotent)."""
        from optuna.trial import TrialState

        if trial.state != TrialState.COMPLETE:
            return
        if self._logged(study.study_name, trial.number) is None:
            self._log(study.study_name, trial)

    def reconcile(self, study) -> int:
        """Log every COMPLETE trial of ``study`` that has no FINISHED nested run yet (under
        any parent run of the experiment): the trials a kill lost between Optuna completing
        them and this callback logging them. Half-logged runs are removed first. Idempotent;
        call it from the main process once the workers are done. Returns the number of
        trials logged."""
        from optuna.trial import TrialState

        done = 0
        for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            if self._logged(study.study_name, trial.number) is None:
                self._log(study.study_name, trial)
                done += 1
        return done

    def _logged(self, study_name: str, number: int):
        """The FINISHED nested run of trial ``number`` (None if none); deletes a run that a
        kill left unfinished, so it is logged again in full."""
        from mlflow import MlflowClient

        client = MlflowClient(self.tracking_uri)
        runs = _retry(
            lambda: client.search_runs(
                [self.experiment_id],
                filter_string=(
                    f"tags.`optuna.study` = '{study_name}' and tags.`optuna.trial` = '{number}'"
                ),
            )
        )
        finished = None
        for run in runs:
            if run.info.status == "FINISHED" and finished is None:
                finished = run
            elif run.info.status != "FINISHED":
                _retry(lambda r=run: client.delete_run(r.info.run_id))
        return finished

    def _log(self, study_name: str, trial) -> None:
        from mlflow import MlflowClient
        from mlflow.entities import Metric, Param, RunTag

        client = MlflowClient(self.tracking_uri)
        tags = {
            "mlflow.parentRunId": self.parent_run_id,
            "optuna.study": study_name,
            "optuna.trial": str(trial.number),
        }
        run = _retry(
            lambda: client.create_run(
                self.experiment_id, tags=tags, run_name=f"trial-{trial.number:04d}"
            )
        )
        rid = run.info.run_id
        now = int(time.time() * 1000)
        params = {**self.static_params, **trial.params}
        metrics = _finite_metrics(trial.user_attrs, self.metric_prefix)
        metrics["objective"] = float(trial.value)
        _retry(
            lambda: client.log_batch(
                rid,
                metrics=[Metric(k, v, now, 0) for k, v in metrics.items()],
                params=[Param(k, str(v)) for k, v in params.items()],
                tags=[RunTag("grid_point", str(trial.user_attrs.get("grid_point", "")))],
            )
        )
        _retry(lambda: client.set_terminated(rid, "FINISHED"))


def close_orphaned_runs(tracking_uri: str, experiment_id: str, keep_run_id: str) -> list[str]:
    """Mark every RUNNING top-level run of the experiment except ``keep_run_id`` as KILLED
    (parents left RUNNING by a killed ``straggler train``); returns their ids.

    Only safe where no other process logs to the experiment: call it while holding the
    ``--out`` lock of a run directory whose tracking store is its own (the default
    ``sqlite:///<out>/mlflow.db``).
    """
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri)
    runs = _retry(
        lambda: client.search_runs([experiment_id], filter_string="attributes.status = 'RUNNING'")
    )
    closed = []
    for run in runs:
        if run.info.run_id == keep_run_id or "mlflow.parentRunId" in run.data.tags:
            continue
        _retry(lambda r=run: client.set_terminated(r.info.run_id, "KILLED"))
        closed.append(run.info.run_id)
    return closed


def model_signature(counters: list[str]):
    """Signature of the pyfunc model: ``node``/``workload`` strings, counters doubles in; the
    straggler probability (double) out."""
    from mlflow.models import ModelSignature
    from mlflow.types import ColSpec, Schema

    inputs = Schema(
        [ColSpec("string", "node"), ColSpec("string", "workload")]
        + [ColSpec("double", c) for c in counters]
    )
    outputs = Schema([ColSpec("double", "straggler_probability")])
    return ModelSignature(inputs=inputs, outputs=outputs)


def input_example(predictor_dir: Path, counters: list[str]):
    """One input row for the logged model: the first trained (node, workload) pair at the
    training means of the counters (read from the artifact).

    Examples
    --------
    >>> import tempfile
    >>> from mtl import GroupedMTLSVC, Predictor, make_grouped_classification
    >>> X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
    >>> art = Predictor.from_estimator(GroupedMTLSVC().fit(X, y)).save(tempfile.mkdtemp())
    >>> input_example(art, ["c_0", "c_1", "c_2"]).columns.tolist()
    ['node', 'workload', 'c_0', 'c_1', 'c_2']
    """
    import json

    import numpy as np
    import pandas as pd

    meta = json.loads((Path(predictor_dir) / "predictor.json").read_text(encoding="utf-8"))
    with np.load(Path(predictor_dir) / "predictor.npz", allow_pickle=False) as npz:
        center = npz["center"]
    pairs = meta.get("task_pairs") or meta.get("pairs") or []
    if pairs:
        node, workload = pairs[0]
    else:
        node = (meta.get("node_ids") or ["node"])[0]
        workload = (meta.get("workload_ids") or ["workload"])[0]
    row = {"node": str(node), "workload": str(workload)}
    names = meta.get("feature_names", counters)
    row.update({c: float(v) for c, v in zip(names, center, strict=False) if c in counters})
    return pd.DataFrame([row])[["node", "workload", *counters]]


def predictor_digest(predictor_dir: Path) -> str:
    """SHA-256 of ``predictor.json`` (which names the SHA-256 of the arrays): the identity of
    a trained predictor, stored as the ``predictor_sha256`` tag of its model version."""
    import hashlib

    return hashlib.sha256((Path(predictor_dir) / "predictor.json").read_bytes()).hexdigest()


def log_and_register(
    predictor_dir: Path,
    counters: list[str],
    tracking_uri: str,
    model_name: str = MODEL_NAME,
    alias: str = MODEL_ALIAS,
) -> dict[str, str]:
    """Log the safe predictor artifact as a pyfunc model in the active run, register it, alias.

    Idempotent: when a version of ``model_name`` already holds this very predictor (tag
    ``predictor_sha256``, see :func:`predictor_digest`), nothing is logged or registered
    again; the alias is pointed at that version and its URIs are returned (``"reused"``).

    Returns
    -------
    dict
        ``model_uri`` (the logged model), ``registered_uri`` (``models:/name@alias``),
        ``version``, ``reused`` (``"true"`` when an existing version was kept).
    """
    import mlflow
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri)
    digest = predictor_digest(predictor_dir)
    existing = [
        v
        for v in _retry(lambda: client.search_model_versions(f"name='{model_name}'"))
        if v.tags.get("predictor_sha256") == digest
    ]
    if existing:
        version = min(existing, key=lambda v: int(v.version))
        _retry(lambda: client.set_registered_model_alias(model_name, alias, version.version))
        return _registered(version.source, model_name, alias, version.version, reused=True)
    script = Path(__file__).resolve().parent / "_pyfunc_model.py"
    info = mlflow.pyfunc.log_model(
        name="model",
        python_model=str(script),
        artifacts={"predictor": str(predictor_dir)},
        signature=model_signature(counters),
        input_example=input_example(predictor_dir, counters),
        pip_requirements=[],  # served with --env-manager local from the project's venv
    )
    version = _retry(
        lambda: mlflow.register_model(info.model_uri, model_name, tags={"predictor_sha256": digest})
    )
    _retry(lambda: client.set_registered_model_alias(model_name, alias, version.version))
    return _registered(info.model_uri, model_name, alias, version.version, reused=False)


def _registered(model_uri: str, name: str, alias: str, version, reused: bool) -> dict[str, str]:
    """What :func:`log_and_register` reports about the registered version."""
    return {
        "model_uri": model_uri,
        "registered_uri": f"models:/{name}@{alias}",
        "version": str(version),
        "reused": "true" if reused else "false",
    }
