"""``straggler train``: Optuna grid search, MLflow tracking and registry (issue 5)."""

from __future__ import annotations

import argparse

from pipelines.commands._engine_options import add_engine_options, engine_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``train`` subcommand."""
    p = subparsers.add_parser(
        "train",
        help="train a straggler predictor (Optuna grid, MLflow tracking)",
        description="Label stragglers in a trace, grid-search a grouped multi-task SVM variant "
        "with Optuna (journal file in --out; an interrupted run continues where it stopped), "
        "track every trial in MLflow, refit the best point, and register the model as "
        "straggler-predictor@champion. Writes summary.json, trials.csv, per-pair metrics, "
        "plots and the safe predictor artifact (predictor/) into --out.",
    )
    p.add_argument("--traces", required=True, help="trace directory (tasks.parquet) or file")
    p.add_argument("--out", required=True, help="run directory")
    p.add_argument(
        "--variant",
        default="f0nl",
        choices=("f0", "fn", "fl", "f0nl", "f0t", "f0tl", "f0nlt"),
        help="model variant (seed 004, section 4.1); default f0nl",
    )
    p.add_argument(
        "--grid", default="default", help="'default', 'small' or a JSON grid file (see README)"
    )
    p.add_argument("--jobs", type=int, default=1, help="parallel trial processes (default 1)")
    p.add_argument(
        "--tracking-uri", default=None, help="MLflow tracking URI (default sqlite:///OUT/mlflow.db)"
    )
    p.add_argument("--experiment", default="straggler-train", help="MLflow experiment name")
    p.add_argument("--beta", type=float, default=1.3, help="straggler threshold x job median")
    p.add_argument(
        "--min-tasks", type=int, default=3, help="finished original attempts a job needs (3)"
    )
    p.add_argument(
        "--fraction", type=float, default=0.66, help="training share of each pair (0.66)"
    )
    p.add_argument(
        "--val-share", type=float, default=0.25, help="validation share of the training rows"
    )
    p.add_argument(
        "--metric",
        default="roc_auc",
        choices=("roc_auc", "pr_auc", "balanced_accuracy", "accuracy", "precision", "recall", "f1"),
        help="validation metric the grid maximises (default roc_auc; pr_auc and "
        "balanced_accuracy are also imbalance-proof; accuracy is the paper's)",
    )
    p.add_argument(
        "--threshold-rule",
        default="balanced_accuracy",
        choices=("balanced_accuracy", "f1", "grid"),
        help="decision threshold: maximise this on the validation rows (default "
        "balanced_accuracy), or 'grid' to keep the grid point's threshold",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of calibration folds and sampler")
    p.add_argument(
        "--max-trials",
        type=int,
        default=None,
        help="stop after this many trials (run again to continue the study)",
    )
    p.add_argument(
        "--no-register", action="store_true", help="do not log/register the MLflow model"
    )
    p.add_argument(
        "--nan-counters",
        choices=("raise", "drop"),
        default="raise",
        help="rows with NaN/inf counters: error (default) or drop them",
    )
    p.add_argument(
        "--single-class-workloads",
        choices=("raise", "drop"),
        default="raise",
        help="workloads whose rows are all one class: error (default) or drop them",
    )
    add_engine_options(p)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run the training pipeline and print its outcome."""
    from pipelines._train import TrainConfig, run_training

    engine = engine_from_args(args)
    cfg = TrainConfig(
        traces=args.traces,
        workers=engine.workers,
        scheduler=engine.scheduler,
        out=args.out,
        variant=args.variant,
        grid=args.grid,
        jobs=args.jobs,
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        beta=args.beta,
        min_tasks=args.min_tasks,
        fraction=args.fraction,
        val_share=args.val_share,
        metric=args.metric,
        threshold_rule=args.threshold_rule,
        seed=args.seed,
        max_trials=args.max_trials,
        register=not args.no_register,
        nan_counters=args.nan_counters,
        on_single_class=args.single_class_workloads,
    )
    s = run_training(cfg)
    st = s["study"]
    print(
        f"study {st['name']}: {st['points_completed']}/{st['grid_points']} grid points done "
        f"({st['trials_run']} run now, {st['completed']} before, {st['stale']} stale reset)"
    )
    if s["status"] != "complete":
        print(s["message"])
        return 0
    t = s["test"]
    print(f"best {s['best_params']}")
    print(
        f"test ({t['rows']} rows): roc_auc {t['roc_auc']:.3f} (baseline 0.5), pr_auc "
        f"{t['pr_auc']:.3f} (baseline {t['positive_rate']:.3f}), accuracy {t['accuracy']:.3f} "
        f"(majority class {t['majority_accuracy']:.3f}), balanced accuracy "
        f"{t['balanced_accuracy']:.3f}, precision {t['precision']:.3f} recall {t['recall']:.3f}"
    )
    if "model" in s:
        print(f"registered {s['model']['registered_uri']} (version {s['model']['version']})")
    print(f"wrote {args.out}/summary.json")
    return 0
