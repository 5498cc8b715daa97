"""``straggler train``: grid search with Optuna, MLflow tracking and registry, final model.

Flow (issue 5):

1. load the trace, label stragglers (beta x job median), refuse single-class workloads;
2. split each (node, workload) pair in time order: the first ``fraction`` of its rows train
   (their latest ``val_share`` validate the grid), the rows from ``test_start`` on test;
3. the grid study (:mod:`pipelines._study`) over the variant's regularisers and the decision
   threshold, resumable, optionally in ``jobs`` processes; one nested MLflow run per trial;
4. the best point (ties: earliest grid point) is refitted on all training rows and scored on
   the test rows: test metrics, per-pair metrics, a confusion matrix, and accuracy against the
   amount of training data (a refit per fraction, same test rows);
5. the safe predictor artifact is saved to ``<out>/predictor`` and logged as an MLflow pyfunc
   model, registered as ``straggler-predictor`` with alias ``champion``; ``summary.json``.
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from mtl._atomic import atomic_path
from pipelines._dataset import (
    check_classes,
    label_stragglers,
    load_trace,
    trace_hash,
)
from pipelines._grid import config_hash, grid_points, load_grid, variant_grid
from pipelines._io import atomic_write_text, write_summary
from pipelines._metrics import (
    METRICS,
    THRESHOLD_RULES,
    binary_metrics,
    choose_threshold,
    confusion,
    per_pair_metrics,
)
from pipelines._splits import fraction_split
from pipelines._train_config import CURVE_FRACTIONS, TrainConfig  # noqa: F401 (re-exported)


def _check_config(cfg: TrainConfig) -> None:
    from mtl import VARIANTS

    if cfg.variant not in VARIANTS:
        raise ValueError(f"--variant must be one of {sorted(VARIANTS)}, got {cfg.variant!r}")
    if cfg.metric not in METRICS:
        raise ValueError(f"--metric must be one of {list(METRICS)}, got {cfg.metric!r}")
    if cfg.threshold_rule not in THRESHOLD_RULES:
        raise ValueError(
            f"--threshold-rule must be one of {list(THRESHOLD_RULES)}, got {cfg.threshold_rule!r}"
        )
    if not (isinstance(cfg.jobs, int) and cfg.jobs >= 1):
        raise ValueError(f"--jobs must be a positive integer, got {cfg.jobs!r}")
    if cfg.max_trials is not None and cfg.max_trials < 1:
        raise ValueError(f"--max-trials must be >= 1, got {cfg.max_trials!r}")
    if not 0 < cfg.fraction <= cfg.test_start:
        raise ValueError(f"--fraction must be in (0, {cfg.test_start}], got {cfg.fraction!r}")


#: Warnings that are noise in ``straggler train``'s output (message regex, category name):
#: MLflow's hints for pyfunc models logged from a script (the signature is given explicitly),
#: and liblinear's iteration cap in the calibration folds (the fit is used either way).
NOISE_WARNINGS: tuple[tuple[str, str], ...] = (
    (r".*Add type hints to the `predict` method", "UserWarning"),
    (r".*An input example was not provided when logging the model", "UserWarning"),
    (r".*", "ConvergenceWarning"),
)


@contextlib.contextmanager
def quiet_known_noise():
    """Silence :data:`NOISE_WARNINGS` inside the block, and nothing else."""
    from sklearn.exceptions import ConvergenceWarning

    cats = {"UserWarning": UserWarning, "ConvergenceWarning": ConvergenceWarning}
    with warnings.catch_warnings():
        for message, cat in NOISE_WARNINGS:
            warnings.filterwarnings("ignore", message=message, category=cats[cat])
        yield


def build_predictor(model):
    """The scheduler-facing ``mtl.Predictor`` of a fitted estimator."""
    from mtl import Predictor

    return Predictor.from_estimator(model)


def _progress(total: int, initial: int, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="trial")


class _PollProgress:
    """Advance a progress bar from the study's COMPLETE count while workers run elsewhere."""

    def __init__(self, ctx, bar, every: float = 1.0):
        self.ctx, self.bar, self.every = ctx, bar, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        from pipelines._study import completed_trials

        while not self._stop.wait(self.every):
            try:
                n = len(completed_trials(self.ctx))
            except Exception:  # the journal is being written; try again next tick
                continue
            self.bar.update(max(0, n - self.bar.n))

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)


def _run_workers(ctx, jobs: int, max_trials: int | None, callback, engine=None, points=()) -> int:
    from pipelines._study import run_worker

    if engine is not None and engine.uses_dask:
        from pipelines._study import run_study_dask

        return run_study_dask(ctx, list(points), engine, max_trials, [callback])
    if jobs == 1:
        return run_worker(ctx, max_trials, callbacks=[callback])
    from joblib import Parallel, delayed

    shares = [None] * jobs
    if max_trials is not None:
        shares = [max_trials // jobs + (i < max_trials % jobs) for i in range(jobs)]
    ran = Parallel(n_jobs=jobs, backend="loky")(
        delayed(run_worker)(ctx, s, [callback]) for s in shares if s is None or s > 0
    )
    return int(sum(ran))


def _engine(cfg: TrainConfig):
    from pipelines._sweep import Engine

    return Engine.resolve(cfg.workers, cfg.scheduler)


def run_training(cfg: TrainConfig) -> dict:
    """Run the whole training pipeline; return (and write) the summary.

    MLflow's process-wide tracking URI is set for the run and restored afterwards.

    Raises
    ------
    FileNotFoundError, ValueError
        Bad trace, grid or settings; the message names the file/parameter and value.
    """
    import mlflow

    previous = mlflow.get_tracking_uri()
    try:
        return _run_training(cfg)
    finally:
        mlflow.set_tracking_uri(previous)


def _run_training(cfg: TrainConfig) -> dict:
    import mlflow

    from mtl import VARIANTS
    from pipelines._study import (
        StudyContext,
        best_point,
        completed_trials,
        make_estimator,
        open_study,
        prepare_study,
    )
    from pipelines._tracking import (
        MlflowTrialCallback,
        close_orphaned_runs,
        default_tracking_uri,
        ensure_experiment,
        log_and_register,
    )

    t_start = time.perf_counter()
    _check_config(cfg)
    grid = load_grid(cfg.grid)
    out = Path(cfg.out).resolve()
    out.mkdir(parents=True, exist_ok=True)

    trace = load_trace(cfg.traces, nan_counters=cfg.nan_counters)
    labelled = check_classes(
        label_stragglers(trace, cfg.beta, cfg.min_tasks), on_single_class=cfg.on_single_class
    )
    frame, counters = labelled.frame, labelled.counters
    cols = ["node", "workload", *counters]
    data_hash = trace_hash(frame[[*cols, "launch_time", "straggler"]])
    split = fraction_split(frame, cfg.fraction, cfg.val_share, cfg.test_start)
    y = frame["straggler"].to_numpy(dtype=np.int64)
    for part, idx in (("fitting", split.fit), ("validation", split.val), ("test", split.test)):
        if len(idx) == 0 or len(np.unique(y[idx])) < 2:
            raise ValueError(
                f"the {part} part of the split has {len(idx)} rows and classes "
                f"{sorted(set(y[idx].tolist()))}: too little data for --fraction={cfg.fraction}, "
                f"val_share={cfg.val_share} (trace {cfg.traces})"
            )

    space = variant_grid(grid, VARIANTS[cfg.variant])
    points = grid_points(space)
    settings = {
        "data_hash": data_hash,
        "beta": cfg.beta,
        "min_tasks": cfg.min_tasks,
        "fraction": cfg.fraction,
        "val_share": cfg.val_share,
        "test_start": cfg.test_start,
        "metric": cfg.metric,
        "seed": cfg.seed,
    }
    # the grid names the study too: a rerun with another grid in the same --out starts its own
    # study (Optuna cannot change a study's parameter space; it failed every trial)
    study_name = f"{cfg.variant}-{config_hash(**settings, space=space)}"
    work = out / "work"
    work.mkdir(exist_ok=True)
    data_path = work / f"{study_name}.parquet"
    if not data_path.is_file():
        part = np.full(len(frame), "", dtype=object)
        part[split.fit], part[split.val] = "fit", "val"
        keep = np.sort(np.concatenate([split.fit, split.val]))
        with atomic_path(data_path) as tmp:
            frame.assign(part=part).iloc[keep][[*cols, "straggler", "part"]].to_parquet(tmp)
    ctx = StudyContext(
        journal=str(out / "optuna-journal.log"),
        study_name=study_name,
        space=space,
        data_path=str(data_path),
        counters=counters,
        variant=cfg.variant,
        metric=cfg.metric,
        cache_dir=str(work / f"cache-{study_name}"),
        seed=cfg.seed,
    )

    tracking_uri = cfg.tracking_uri or default_tracking_uri(out)
    mlflow.set_tracking_uri(tracking_uri)
    experiment_id = ensure_experiment(tracking_uri, cfg.experiment)
    static = {"variant": cfg.variant, "split": split.name, **settings}
    summary: dict = {
        "command": "train",
        "config": {**asdict(cfg), "curve_fractions": list(cfg.curve_fractions)},
        "study": {"name": study_name, "journal": ctx.journal, "grid_points": len(points)},
        "data": labelled.summary(),
        "data_hash": data_hash,
        "split": {**split.info, "fit_rows": len(split.fit), "val_rows": len(split.val)},
        "tracking_uri": tracking_uri,
    }
    summary["split"]["test_rows"] = len(split.test)
    with mlflow.start_run(experiment_id=experiment_id, run_name=f"train-{study_name}") as run:
        mlflow.log_params({**static, "grid": str(cfg.grid), "grid_points": len(points)})
        mlflow.log_params({"rows": len(frame), "counters": len(counters), "jobs": cfg.jobs})
        _log_trace_dataset(frame[[*cols, "straggler"]], cfg.traces, data_hash)
        if cfg.tracking_uri is None:
            # the run directory's own store, under its --out lock: a parent left RUNNING is
            # a killed earlier train of this directory
            summary["closed_orphaned_runs"] = close_orphaned_runs(
                tracking_uri, experiment_id, run.info.run_id
            )
        status = prepare_study(ctx, points)
        summary["study"].update(status)
        callback = MlflowTrialCallback(tracking_uri, experiment_id, run.info.run_id, static)
        bar = _progress(len(points), status["completed"], f"grid {cfg.variant}")
        with bar:
            with _PollProgress(ctx, bar):
                ran = _run_workers(ctx, cfg.jobs, cfg.max_trials, callback, _engine(cfg), points)
            # trials a kill lost between Optuna completing them and the callback logging them
            summary["study"]["trials_reconciled"] = callback.reconcile(open_study(ctx))
            trials = completed_trials(ctx)
            done = len({tuple(r[k] for k in space) for r in trials.to_dict("records")})
            bar.update(max(0, done - bar.n))
        summary["study"].update({"trials_run": ran, "points_completed": done})
        atomic_write_text(out / "trials.csv", trials.to_csv(index=False))
        mlflow.log_artifact(str(out / "trials.csv"))
        if done < len(points):
            summary["status"] = "incomplete"
            summary["message"] = (
                f"{done} of {len(points)} grid points done; run the same command again to "
                "continue the study"
            )
            mlflow.set_tag("status", "incomplete")
            summary["wall_seconds"] = time.perf_counter() - t_start
            write_summary(out, summary)
            return summary

        best = best_point(trials, points)
        best_row = trials.loc[np.all([trials[k] == v for k, v in best.items()], axis=0)].iloc[0]
        summary["best_params"] = best
        summary["validation"] = {m: float(best_row[m]) for m in METRICS if m in best_row}
        mlflow.log_params({f"best_{k}": v for k, v in best.items()})
        thr, summary["threshold"], val_metrics = _validation_threshold(cfg, ctx, best)
        if val_metrics:
            summary["validation"] = val_metrics
        mlflow.log_params({"threshold_rule": cfg.threshold_rule, "threshold": thr})
        mlflow.log_metrics(
            {f"val_{k}": float(v) for k, v in summary["validation"].items() if v == v}
        )
        _say_selection(cfg, summary)

        # Refit the best point on all training rows; score the test rows.
        train_idx = split.train
        model = make_estimator(cfg.variant, {**best, "threshold": thr}, cfg.seed)
        t0 = time.perf_counter()
        with quiet_known_noise():
            model.fit(frame.iloc[train_idx][cols], y[train_idx])
        fit_seconds = time.perf_counter() - t0
        test = frame.iloc[split.test]
        proba = model.predict_proba(test[cols])[:, 1]
        test_metrics = binary_metrics(y[split.test], proba, thr)
        test_metrics.update({"fit_seconds": fit_seconds, "train_rows": len(train_idx)})
        summary["test"] = test_metrics
        mlflow.log_metrics({f"test_{k}": float(v) for k, v in test_metrics.items() if v == v})
        # the baselines of the parent run's metrics: a model must beat these to be of use
        mlflow.log_metrics(
            {
                "baseline_roc_auc": 0.5,
                "baseline_balanced_accuracy": 0.5,
                "baseline_pr_auc": float(test_metrics["positive_rate"]),
                "baseline_accuracy": float(test_metrics["majority_accuracy"]),
            }
        )

        from pipelines._plots import plot_confusion, plot_metric_by_fraction

        pairs = per_pair_metrics(test, y[split.test], proba, thr)
        atomic_write_text(out / "per_pair_metrics.csv", pairs.to_csv(index=False))
        plot_confusion(
            confusion(y[split.test], proba, thr),
            out / "confusion_matrix.png",
            f"{cfg.variant} on the test rows (threshold {thr:g})",
        )
        curve = _learning_curve(cfg, frame, cols, y, {**best, "threshold": thr}, split.test)
        atomic_write_text(out / "accuracy_by_fraction.csv", curve.to_csv(index=False))
        plot_metric_by_fraction(
            curve, out / "accuracy_vs_data.png", f"{cfg.variant}, best grid point"
        )
        keep = [c for c in ("fraction", "accuracy", "majority_accuracy") if c in curve]
        summary["accuracy_by_fraction"] = curve[keep].to_dict("list")

        predictor_dir = out / "predictor"
        build_predictor(model).save(predictor_dir)
        summary["predictor"] = str(predictor_dir)
        summary["serving_example"] = str(write_serving_example(test, counters, out))
        for name in (
            "per_pair_metrics.csv",
            "accuracy_by_fraction.csv",
            "confusion_matrix.png",
            "accuracy_vs_data.png",
        ):
            mlflow.log_artifact(str(out / name))
        if cfg.register:
            with quiet_known_noise():
                summary["model"] = log_and_register(
                    predictor_dir, counters, tracking_uri, cfg.model_name, cfg.alias
                )
        summary["mlflow_run_id"] = run.info.run_id
        summary["status"] = "complete"
        summary["wall_seconds"] = time.perf_counter() - t_start
        path = write_summary(out, summary)
        mlflow.log_artifact(str(path))
    return summary


def write_serving_example(rows: pd.DataFrame, counters: list[str], out: Path, n: int = 2) -> Path:
    """``out/serving_example.json``: a complete REST request body for the served model.

    The first ``n`` rows of ``rows`` (test rows) in MLflow's ``dataframe_split`` format, with
    the columns the model's signature names (``node``, ``workload`` as strings, every counter
    as a number), ready for ``curl -d @serving_example.json .../invocations``.
    """
    import json

    example = rows[["node", "workload", *counters]].head(n)
    data = [
        [str(r[0]), str(r[1]), *(float(v) for v in r[2:])]
        for r in example.itertuples(index=False, name=None)
    ]
    body = {"dataframe_split": {"columns": ["node", "workload", *counters], "data": data}}
    return atomic_write_text(out / "serving_example.json", json.dumps(body, indent=1) + "\n")


def _validation_threshold(cfg: TrainConfig, ctx, best: dict) -> tuple[float, dict, dict]:
    """The decision threshold by ``cfg.threshold_rule`` on the chosen fit's validation rows.

    The validation probabilities come from the study's cache (the fit on the fitting rows
    that scored the grid point), so no refit. Returns the threshold, its record for
    ``summary.json`` and the validation metrics at it (empty with rule ``grid``).
    """
    grid_thr = float(best.get("threshold", 0.5))
    if cfg.threshold_rule == "grid":
        rec = {"value": grid_thr, "rule": "grid", "chosen_on": "validation (grid search)"}
        return grid_thr, rec, {}
    from pipelines._study import GridObjective

    objective = GridObjective(ctx)
    proba, _ = objective.validation_proba(best)
    data = pd.read_parquet(ctx.data_path, columns=["straggler", "part"])
    y_val = data.loc[data["part"] == "val", "straggler"].to_numpy(dtype=np.int64)
    thr = choose_threshold(y_val, proba, cfg.threshold_rule)
    val = binary_metrics(y_val, proba, thr)
    rec = {
        "value": thr,
        "rule": f"maximise {cfg.threshold_rule} on the validation rows",
        "chosen_on": "validation",
        "validation_value": val[cfg.threshold_rule],
        "grid_threshold": grid_thr,
    }
    return thr, rec, {k: float(v) for k, v in val.items()}


def _say_selection(cfg: TrainConfig, summary: dict) -> None:
    """One line: the selection metric, the threshold rule and the validation baselines."""
    v = summary["validation"]
    thr = summary["threshold"]
    print(
        f"selected by validation {cfg.metric} = {v.get(cfg.metric, float('nan')):.3f}; "
        f"threshold {thr['value']:.3g} ({thr['rule']}); validation accuracy "
        f"{v.get('accuracy', float('nan')):.3f} (majority class "
        f"{v.get('majority_accuracy', float('nan')):.3f})",
        flush=True,
    )


def _log_trace_dataset(frame: pd.DataFrame, traces: str, digest: str) -> None:
    """Log the labelled training table as the run's MLflow dataset input (context
    ``training``): its schema, row count and our content hash, with the trace path as source
    (metadata only; the rows stay in the trace)."""
    import mlflow
    import mlflow.data

    dataset = mlflow.data.from_pandas(
        frame,
        source=str(Path(traces).resolve()),
        targets="straggler",
        name=Path(traces).resolve().name or "trace",
        digest=digest[:36],
    )
    mlflow.log_input(dataset, context="training")


def _learning_curve(cfg, frame, cols, y, best, test_idx) -> pd.DataFrame:
    """Refit the best point on the first ``fraction`` of every pair; score the same test rows."""
    from tqdm.auto import tqdm

    from pipelines._study import make_estimator

    rows = []
    thr = best.get("threshold", 0.5)
    for f in tqdm(cfg.curve_fractions, desc="accuracy vs data", unit="fit"):
        if f > cfg.test_start:
            continue
        tr = fraction_split(frame, f, 0.0, cfg.test_start).train
        if len(tr) == 0 or len(np.unique(y[tr])) < 2:
            rows.append({"model": cfg.variant, "fraction": f, "train_rows": len(tr)})
            continue
        with quiet_known_noise():
            m = make_estimator(cfg.variant, best, cfg.seed).fit(frame.iloc[tr][cols], y[tr])
        p = m.predict_proba(frame.iloc[test_idx][cols])[:, 1]
        met = binary_metrics(y[test_idx], p, thr)
        rows.append({"model": cfg.variant, "fraction": f, "train_rows": len(tr), **met})
    return pd.DataFrame(rows)
