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

This module checks the settings and runs the flow; its parts live in their own modules and
are re-exported here: :mod:`pipelines._train_noise` (:data:`NOISE_WARNINGS`,
:func:`quiet_known_noise`), :mod:`pipelines._train_workers` (the study's workers and their
progress bar) and :mod:`pipelines._train_results` (the validation threshold, the learning
curve, :func:`build_predictor`, :func:`write_serving_example`).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

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
    confusion,
    per_pair_metrics,
)
from pipelines._splits import fraction_split
from pipelines._train_config import CURVE_FRACTIONS, TrainConfig  # noqa: F401 (re-exported)
from pipelines._train_noise import NOISE_WARNINGS, quiet_known_noise
from pipelines._train_results import (
    build_predictor,
    learning_curve,
    log_trace_dataset,
    say_selection,
    validation_threshold,
    write_serving_example,
)
from pipelines._train_workers import PollProgress, run_workers, train_engine, trial_progress

__all__ = [
    "CURVE_FRACTIONS",
    "NOISE_WARNINGS",
    "TrainConfig",
    "build_predictor",
    "quiet_known_noise",
    "run_training",
    "write_serving_example",
]


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
        log_trace_dataset(frame[[*cols, "straggler"]], cfg.traces, data_hash)
        if cfg.tracking_uri is None:
            # the run directory's own store, under its --out lock: a parent left RUNNING is
            # a killed earlier train of this directory
            summary["closed_orphaned_runs"] = close_orphaned_runs(
                tracking_uri, experiment_id, run.info.run_id
            )
        status = prepare_study(ctx, points)
        summary["study"].update(status)
        callback = MlflowTrialCallback(tracking_uri, experiment_id, run.info.run_id, static)
        bar = trial_progress(len(points), status["completed"], f"grid {cfg.variant}")
        with bar:
            with PollProgress(ctx, bar):
                ran = run_workers(
                    ctx, cfg.jobs, cfg.max_trials, callback, train_engine(cfg), points
                )
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
        thr, summary["threshold"], val_metrics = validation_threshold(cfg, ctx, best)
        if val_metrics:
            summary["validation"] = val_metrics
        mlflow.log_params({"threshold_rule": cfg.threshold_rule, "threshold": thr})
        mlflow.log_metrics(
            {f"val_{k}": float(v) for k, v in summary["validation"].items() if v == v}
        )
        say_selection(cfg, summary)

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
        curve = learning_curve(cfg, frame, cols, y, {**best, "threshold": thr}, split.test)
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
